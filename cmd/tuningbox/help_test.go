package main

import (
	"os"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/shared/httpapi"
)

// --help names every setting of the client, secrets included, and the microversion range.
func TestHelpNamesTheEnvironment(t *testing.T) {
	out := mustCLI(t, "http://127.0.0.1:1", "", "--help")
	for _, want := range []string{"TUNINGBOX_URL", "TUNINGBOX_USER", "TUNINGBOX_PASSWORD", "TUNINGBOX_TOKEN", "TUNINGBOX_API_VERSION",
		"1.0 to " + httpapi.MaxVersion.String() + ", or latest (the newest)"} {
		if !strings.Contains(out, want) {
			t.Errorf("--help lacks %q:\n%s", want, out)
		}
	}
	// The README says what latest is.
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if want := "`latest` for the newest (" + httpapi.MaxVersion.String() + ")"; !strings.Contains(string(readme), want) {
		t.Errorf("README lacks %q", want)
	}
}

// A user without a password is a usage error naming the variable, before any request.
func TestUnsetPasswordNamesTheVariable(t *testing.T) {
	t.Setenv("TUNINGBOX_TOKEN", "")
	t.Setenv("TUNINGBOX_PASSWORD", "")
	t.Setenv("TUNINGBOX_USER", "admin")
	_, err := cli(t, "http://127.0.0.1:1", "", "env", "list")
	if exitCode(err) != 2 || !strings.Contains(err.Error(), "TUNINGBOX_PASSWORD is not set") {
		t.Errorf("unset password: %v", err)
	}
}
