package keystone_test

import (
	"maps"
	"net/http"
	"testing"
	"time"

	"github.com/tuningbox/tuningbox/shared/auth"
	"github.com/tuningbox/tuningbox/shared/keystone"
)

// The validation itself runs against a real Keystone in keystone/run.sh;
// these are the configuration rules.

func TestParseRoles(t *testing.T) {
	got, err := keystone.ParseRoles(keystone.DefaultRoles)
	want := map[string]auth.Role{"admin": auth.Admin, "member": auth.Observer, "reader": auth.Observer}
	if err != nil || !maps.Equal(got, want) {
		t.Fatalf("default mapping: %v %v", got, err)
	}
	if got, err := keystone.ParseRoles(" ops = admin ,, audit=observer "); err != nil || len(got) != 2 || got["ops"] != auth.Admin {
		t.Fatalf("spaced mapping: %v %v", got, err)
	}
	for _, bad := range []string{"", "admin", "=admin", "admin=root", "compute=node"} {
		if _, err := keystone.ParseRoles(bad); err == nil {
			t.Errorf("ParseRoles(%q) accepted", bad)
		}
	}
}

func TestNewChecksConfig(t *testing.T) {
	good := keystone.Config{URL: "https://keystone.example.com:5000/v3", User: "tuningbox", Password: "pw", ServiceProject: "service",
		Project: "tuningbox", Roles: map[string]auth.Role{"admin": auth.Admin}, CacheBound: time.Minute}
	if _, err := keystone.New(good, http.DefaultClient, time.Now); err != nil {
		t.Fatal(err)
	}
	for name, mutate := range map[string]func(*keystone.Config){
		"no URL":          func(c *keystone.Config) { c.URL = "" },
		"not http":        func(c *keystone.Config) { c.URL = "ftp://keystone" },
		"no password":     func(c *keystone.Config) { c.Password = "" },
		"no project":      func(c *keystone.Config) { c.Project = "" },
		"no roles":        func(c *keystone.Config) { c.Roles = nil },
		"no cache bound":  func(c *keystone.Config) { c.CacheBound = 0 },
		"no service user": func(c *keystone.Config) { c.User = "" },
	} {
		c := good
		mutate(&c)
		if _, err := keystone.New(c, http.DefaultClient, time.Now); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
