package authapi

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/shared/auth"
	"github.com/tuningbox/tuningbox/shared/errs"
)

func TestAuthorize(t *testing.T) {
	admin := auth.Principal{User: "root", Role: auth.Admin}
	observer := auth.Principal{User: "watcher", Role: auth.Observer}
	const env1UUID = "5f3c2a1b-0000-4000-8000-000000000001"
	node := auth.Principal{User: "n7", Role: auth.Node, NodeNames: []string{"7", "node-7.example.com", "0b5a2c1e-0000-4000-8000-000000000007"},
		NodeEnvironment: []string{"1", env1UUID}, NodeLevels: map[string]string{"role": "compute"}}
	const doc = "/api/v1/config/environments/1/nodes/7/resources/astute/values?effective"
	const cfg = "/api/v1/config/environments/"
	const watch = "/api/v1/watch/config/environments/"
	const tx = "0b1c9a5e-2f4d-4e8a-9c3b-7d6e5f4a3b2c"
	tests := []struct {
		method, target        string
		admin, observer, node bool
		public, write         bool
	}{
		{"GET", "/api/v1/config/", true, true, true, true, false},
		{"HEAD", "/api/v1/config/", true, true, true, true, false},
		{"POST", "/api/v1/config/", true, false, false, false, true},
		{"GET", "/api/v1/config", true, true, true, true, false},
		{"PUT", "/api/v1/config", true, false, false, false, true},
		{"GET", "/api/v1/config/components", true, true, false, false, false},
		{"POST", "/api/v1/config/components", true, false, false, false, true},
		{"GET", doc, true, true, true, false, false},
		{"HEAD", doc, true, true, true, false, false},
		{"PUT", "/api/v1/config/environments/1/nodes/7/resources/astute/values", true, false, false, false, true},
		{"PATCH", "/api/v1/config/environments/1/nodes/7/resources/astute/values/keys/set", true, false, false, false, true},
		{"GET", "/api/v1/config/environments/1/nodes/7/resources/astute/values/versions", true, true, true, false, false},
		{"GET", "/api/v1/config/environments/1/role/compute/nodes/node-7.example.com/resources/override/plugins/values", true, true, true, false, false},
		{"GET", "/api/v1/config/environments/1/nodes/8/resources/astute/values", true, true, false, false, false},
		// Confinement: own environment (id or UUID), own node (any name, any case), own placement or the short path.
		{"GET", cfg + "1/role/compute/nodes/7/resources/astute/values?effective", true, true, true, false, false},
		{"GET", cfg + env1UUID + "/nodes/NODE-7.example.com./resources/astute/values?effective", true, true, true, false, false},
		{"GET", cfg + strings.ToUpper(env1UUID) + "/node/0B5A2C1E-0000-4000-8000-000000000007/resources/astute/values?effective&show_lookup", true, true, true, false, false},
		{"GET", cfg + "1/role/compute/nodes/7/service/nova/resources/astute/values", true, true, true, false, false},
		{"GET", cfg + "2/nodes/7/resources/astute/values?effective", true, true, false, false, false},
		{"GET", cfg + "2/role/compute/nodes/7/resources/astute/values?effective", true, true, false, false, false},
		{"GET", cfg + "5f3c2a1b-0000-4000-8000-000000000002/nodes/7/resources/astute/values", true, true, false, false, false},
		{"GET", cfg + "1/role/controller/nodes/7/resources/astute/values?effective", true, true, false, false, false},
		{"GET", cfg + "1/rack/r1/nodes/7/resources/astute/values?effective", true, true, false, false, false},
		{"GET", cfg + "1/role/compute/resources/astute/values?effective", true, true, false, false, false},
		{"GET", cfg + "1/role/compute/nodes/node-8.example.com/resources/astute/values?effective", true, true, false, false, false},
		{"GET", cfg + "1/nodes/node-7.example.com.evil/resources/astute/values", true, true, false, false, false},
		{"GET", "/api/v1/config/environments/1/resources/astute/values", true, true, false, false, false},
		{"GET", "/api/v1/config/environments/1/role/7/resources/astute/values", true, true, false, false, false},
		{"GET", "/api/v1/config/environments/1/nodes/7%2F8/resources/astute/values", true, true, false, false, false},
		{"GET", "/api/v1/config/environments/1/nodes/7", true, true, false, false, false},
		{"GET", "/api/v1/config/environments/1/hierarchy_levels/nodes", true, true, false, false, false},
		{"GET", "/api/v1/config/environments/1", true, true, false, false, false},
		{"POST", "/api/v1/config/overrides/apply", true, true, false, false, false},
		{"POST", "/api/v1/nodes/7/deploy_steps", true, true, false, false, false},
		{"POST", "/api/v1/nodes/7/deploy_steps/x", true, false, false, false, true},
		{"GET", "/api/v1/nodes/7", true, true, true, false, false},
		{"GET", "/api/v1/nodes/node-7.example.com", true, true, true, false, false},
		{"GET", "/api/v1/nodes/8", true, true, false, false, false},
		{"PUT", "/api/v1/nodes/7", true, false, false, false, true},
		{"GET", "/api/v1/nodes?hostname=node-7.example.com", true, true, true, false, false},
		{"GET", "/api/v1/nodes?hostname=NODE-7.example.com.", true, true, true, false, false},
		{"GET", "/api/v1/nodes?hostname=node", true, true, false, false, false},
		{"GET", "/api/v1/nodes?hostname=node-7.example.com&limit=5", true, true, false, false, false},
		{"GET", "/api/v1/nodes?hostname=node-7.example.com&hostname=node-7.example.com", true, true, false, false, false},
		{"GET", "/api/v1/nodes?hostname=node-7.example.com&limit=many", true, true, false, false, false},
		// ?explain names the writers of each layer: never a node's, whatever its value.
		{"GET", cfg + "1/role/compute/nodes/7/resources/astute/values?effective&explain", true, true, false, false, false},
		{"GET", cfg + "1/role/compute/nodes/7/resources/astute/values?effective&explain=maybe", true, true, false, false, false},
		// The watchers' path is the same read under the same rule.
		{"GET", watch + "1/nodes/7/resources/astute/values?effective&wait=25", true, true, true, false, false},
		{"GET", watch + env1UUID + "/nodes/NODE-7.example.com./resources/astute/values?effective", true, true, true, false, false},
		{"GET", watch + "1/role/compute/nodes/7/resources/astute/values", true, true, true, false, false},
		{"GET", watch + "2/nodes/7/resources/astute/values?effective", true, true, false, false, false},
		{"GET", watch + "1/nodes/8/resources/astute/values?effective", true, true, false, false, false},
		{"GET", watch + "1/role/controller/nodes/7/resources/astute/values?effective", true, true, false, false, false},
		{"GET", watch + "1/resources/astute/values?effective", true, true, false, false, false},
		{"GET", watch + "1/role/compute/nodes/7/resources/astute/values?effective&explain", true, true, false, false, false},
		{"GET", watch + "1/nodes/7/resources/astute/values/versions", true, true, false, false, false},
		{"PUT", watch + "1/nodes/7/resources/astute/values", true, false, false, false, true},
		{"GET", "/api/v1/nodes", true, true, false, false, false},
		{"GET", "/api/v1/users", true, false, false, false, false},
		{"GET", "/api/v1/users/root", true, false, false, false, false},
		{"POST", "/api/v1/users", true, false, false, false, true},
		{"GET", "/api/v1/tokens", true, false, false, false, false},
		{"DELETE", "/api/v1/tokens/0123456789abcdef", true, false, false, false, true},
		{"GET", "/api/v1/audit?environment=1", true, true, false, false, false},
		{"DELETE", "/api/v1/graphs/1", true, false, false, false, true},
		{"POST", "/api/v1/transactions/" + tx + "/nodes/7/claim", true, false, true, false, true},
		{"POST", "/api/v1/transactions/" + tx + "/nodes/7/result", true, false, true, false, true},
		{"GET", "/api/v1/transactions/" + tx + "/nodes/7/claim", true, true, false, false, false},
		{"POST", "/api/v1/transactions/" + tx + "/nodes/8/claim", true, false, false, false, true},
		{"POST", "/api/v1/transactions/" + tx + "/nodes/7/claim/x", true, false, false, false, true},
		{"POST", "/api/v1/transactions/" + tx + "/stop", true, false, false, false, true},
		{"POST", "/api/v1/clusters/1/nodes/7/claim", true, false, true, false, true},
		{"POST", "/api/v1/clusters/1/nodes/node-7.example.com/claim", true, false, true, false, true},
		{"POST", "/api/v1/clusters/1/nodes/8/claim", true, false, false, false, true},
		{"POST", "/api/v1/clusters/1/nodes/7/result", true, false, false, false, true},
		{"PUT", "/api/v1/clusters/1/deploy", true, false, false, false, true},
		{"GET", "/no/such/route", true, true, false, false, false},
	}
	for _, tt := range tests {
		r := httptest.NewRequest(tt.method, tt.target, nil)
		for _, c := range []struct {
			p    auth.Principal
			want bool
		}{{admin, tt.admin}, {observer, tt.observer}, {node, tt.node}} {
			err := Authorize(c.p, r)
			if got := err == nil; got != c.want {
				t.Errorf("%s %s as %s: allowed %v, want %v (%v)", tt.method, tt.target, c.p.Role, got, c.want, err)
			}
			if err != nil && !errs.Is(err, errs.Forbidden) {
				t.Errorf("%s %s as %s: %v is not Forbidden", tt.method, tt.target, c.p.Role, err)
			}
		}
		if got := IsPublic(r); got != tt.public {
			t.Errorf("IsPublic(%s %s) = %v", tt.method, tt.target, got)
		}
		if got := IsWrite(r); got != tt.write {
			t.Errorf("IsWrite(%s %s) = %v", tt.method, tt.target, got)
		}
	}
}
