package client

import "testing"

func TestDocumentRefPath(t *testing.T) {
	ref := DocumentRef{Environment: "1", Levels: LevelPath{{Name: "role", Value: "a b"}, {Name: "nodes", Value: "7"}}, Resource: "override/plugins"}
	if got, want := ref.Path(Overrides), "/api/v1/config/environments/1/role/a%20b/nodes/7/resources/override/plugins/overrides"; got != want {
		t.Errorf("path = %s, want %s", got, want)
	}
	if got, want := ref.String(), "override/plugins of environment 1 at role=a b,nodes=7"; got != want {
		t.Errorf("String() = %s, want %s", got, want)
	}
}
