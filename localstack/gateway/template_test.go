package main

import "testing"

func TestMatchesVariables(t *testing.T) {
	const pattern = "/api/v1/clusters/{id}/nodes/{node}/claim"
	for path, want := range map[string]bool{
		"/api/v1/clusters/7/nodes/node-1/claim":  true,
		"/api/v1/clusters/7/nodes/node-1/claim/": true,
		"/api/v1/clusters//nodes/node-1/claim":   false,
		"/api/v1/clusters/7/nodes/node-1/report": false,
		"/api/v1/clusters/7/nodes/claim":         false,
	} {
		if got := matchesVariables(pattern, path); got != want {
			t.Errorf("matchesVariables(%s) = %v, want %v", path, got, want)
		}
	}
}
