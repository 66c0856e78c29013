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

// TestServeRefusesEveryTruncation: at each class of truncation point of a
// database holding data, `serve` exits with status 4 and a message naming the
// file and `tuningbox store check`, and the file is left as it was (an empty
// file is damaged, not replaced by a new database).
func TestServeRefusesEveryTruncation(t *testing.T) {
	base := t.TempDir()
	t.Setenv("TUNINGBOX_NEW_PASSWORD", "store-check-pw")
	for _, name := range []string{"admin", "observer1", "observer2"} {
		if _, _, err := runCLI(t, "", "user", "create", name, "--role", "admin", "--data", base); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := bolt.Check(base)
	if err != nil {
		t.Fatal(err)
	}
	page := int64(os.Getpagesize())
	for _, c := range []struct {
		name string
		size int64
	}{
		{"empty", 0},
		{"less than one page", page / 2},
		{"metadata only", 2 * page},
		{"half", rep.Bytes / 2},
		{"all but one page", rep.Bytes - page},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, bolt.FileName)
			data, err := os.ReadFile(filepath.Join(base, bolt.FileName))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, data[:c.size], 0o600); err != nil {
				t.Fatal(err)
			}
			_, _, err = runCLI(t, "", "serve", "--data", dir, "--listen", "127.0.0.1:0")
			if exitCode(err) != 4 || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "tuningbox store check --data "+dir) {
				t.Errorf("serve on a file cut to %d bytes: %v (exit %d)", c.size, err, exitCode(err))
			}
			if _, _, err := runCLI(t, "", "store", "check", "--data", dir); exitCode(err) != 4 {
				t.Errorf("store check on a file cut to %d bytes: %v (exit %d)", c.size, err, exitCode(err))
			}
			if fi, err := os.Stat(path); err != nil || fi.Size() != c.size {
				t.Errorf("the damaged file after serve: %v, %v; want it untouched", fi, err)
			}
		})
	}
}
