package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/shared/store/bolt"
)

// TestStoreCheckAndDamagedStart: `store check` passes a sound file and fails
// a truncated one with exit status 4, and `serve` refuses to start on it with
// the same status and a message saying what is wrong.
func TestStoreCheckAndDamagedStart(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TUNINGBOX_NEW_PASSWORD", "store-check-pw")
	if _, _, err := runCLI(t, "", "user", "create", "admin", "--role", "admin", "--data", dir); err != nil {
		t.Fatal(err)
	}
	out, _, err := runCLI(t, "", "store", "check", "--data", dir)
	if err != nil || !strings.Contains(out, "ok") || !strings.Contains(out, "1 index items") {
		t.Fatalf("check of a sound file: %q, %v", out, err)
	}
	path := filepath.Join(dir, bolt.FileName)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, fi.Size()/2); err != nil {
		t.Fatal(err)
	}
	_, _, err = runCLI(t, "", "store", "check", "--data", dir)
	if err == nil || exitCode(err) != 4 || !strings.Contains(err.Error(), "truncated") {
		t.Fatalf("check of a truncated file: %v (exit %d)", err, exitCode(err))
	}
	_, _, err = runCLI(t, "", "serve", "--data", dir, "--listen", "127.0.0.1:0")
	if err == nil || exitCode(err) != 4 {
		t.Fatalf("serve on a truncated file: %v", err)
	}
	if _, _, err := runCLI(t, "", "store", "check"); exitCode(err) != 2 {
		t.Fatalf("check without --data: %v", err)
	}
}
