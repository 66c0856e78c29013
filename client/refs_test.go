package client_test

import (
	"testing"

	"github.com/tuningbox/tuningbox/client"
	"github.com/tuningbox/tuningbox/shared/httpapi"
)

// The client names entities by UUID exactly where the server does (spec 004).
func TestUUIDIdentitiesFollowTheServer(t *testing.T) {
	for _, v := range []string{"", "1.0", "1.1", "1.2", "1.3", "latest", "2.0"} {
		c, err := client.New("http://127.0.0.1:1", client.WithMicroversion(v))
		if err != nil {
			t.Fatal(err)
		}
		parsed := httpapi.MinVersion
		if v != "" {
			if parsed, err = httpapi.ParseVersion(v); err != nil {
				t.Fatal(err)
			}
		}
		if got, want := c.UUIDIdentities(), parsed.AtLeast(httpapi.V1_2); got != want {
			t.Errorf("UUIDIdentities at %q = %v, the server's rule says %v", v, got, want)
		}
	}
}
