package app_test

import (
	"net/http"
	"testing"
)

// TestStoreGCRoute: POST /api/v1/store/gc sweeps and answers what it found;
// a bad min_age is a 400, and only admins may run it (authapi's policy, walked
// for every route by authapi's route-walk test).
func TestStoreGCRoute(t *testing.T) {
	c := newClient(t)
	c.do("POST", "/api/v1/config/components", `{"name":"fuel","resource_definitions":[{"name":"astute"}]}`, http.StatusCreated, "")
	c.do("POST", "/api/v1/config/environments", `{"id":1,"components":["fuel"],"hierarchy_levels":["role"]}`, http.StatusCreated, "")
	c.do("PUT", "/api/v1/config/environments/1/role/a/resources/astute/values", `{"a":1}`, http.StatusNoContent, "")
	c.do("POST", "/api/v1/store/gc?min_age=0s", "", http.StatusOK, `{"referenced":1,"unreferenced":0,"removed":0}`)
	c.do("POST", "/api/v1/store/gc", "", http.StatusOK, `"referenced":1`)
	c.wantError("POST", "/api/v1/store/gc?min_age=soon", "", http.StatusBadRequest, "min_age")
	c.wantError("POST", "/api/v1/store/gc?age=1h", "", http.StatusBadRequest, "unknown query parameter")
}
