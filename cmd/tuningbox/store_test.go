package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tuningbox/tuningbox/shared/app"
	"github.com/tuningbox/tuningbox/shared/configdb"
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

// TestStoreBackupWhileServing: `store backup` copies the store of a running
// server through its API; `store restore` puts the copy in place of another
// data directory's database (server stopped) and refuses a truncated copy
// with exit status 4, leaving that database as it was; the restored store
// serves what was backed up.
func TestStoreBackupWhileServing(t *testing.T) {
	dataDir := t.TempDir()
	t.Setenv("TUNINGBOX_NEW_PASSWORD", "backup-admin-password")
	if _, _, err := runCLI(t, "", "user", "create", "admin", "--role", "admin", "--data", dataDir); err != nil {
		t.Fatal(err)
	}
	cfg, err := app.LoadConfig(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	cfg.DataDir = dataDir
	addr := freeLoopbackAddr(t)
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- serve(ctx, cfg, addr, "", "", newServerTLSConfig(), 5*time.Second) }()
	defer func() {
		stop()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	t.Setenv("TUNINGBOX_USER", "admin")
	t.Setenv("TUNINGBOX_PASSWORD", "backup-admin-password")
	t.Setenv("TUNINGBOX_TOKEN", "")
	url := "http://" + addr
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := cli(t, url, "", "comp", "create", "--name", "fuel", "--definition", "astute"); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("server not up: %v", err)
		}
	}
	backup := filepath.Join(t.TempDir(), "tuningbox.backup")
	out := mustCLI(t, url, "", "store", "backup", "--to", backup)
	if !strings.Contains(out, backup+": ok") {
		t.Fatalf("store backup: %q", out)
	}
	if _, _, err := runCLI(t, "", "store", "backup", "--to", backup+".offline", "--data", dataDir); err == nil {
		t.Fatal("store backup --data copied a database a server holds")
	}

	target := t.TempDir()
	if _, _, err := runCLI(t, "", "user", "create", "other", "--role", "admin", "--data", target); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(filepath.Join(target, bolt.FileName))
	if err != nil {
		t.Fatal(err)
	}
	whole, err := os.ReadFile(backup)
	if err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(t.TempDir(), "truncated.backup")
	if err := os.WriteFile(truncated, whole[:len(whole)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runCLI(t, "", "store", "restore", truncated, "--data", target); exitCode(err) != 4 {
		t.Fatalf("restore of a truncated backup: %v (exit %d)", err, exitCode(err))
	}
	if after, err := os.ReadFile(filepath.Join(target, bolt.FileName)); err != nil || !bytes.Equal(after, before) {
		t.Fatalf("a refused restore changed the database: %v", err)
	}
	out, _, err = runCLI(t, "", "store", "restore", backup, "--data", target)
	if err != nil || !strings.Contains(out, "pre-restore") {
		t.Fatalf("store restore: %q, %v", out, err)
	}
	restored, err := bolt.Open(target)
	if err != nil {
		t.Fatal(err)
	}
	defer restored.Close()
	svc := configdb.NewService(restored.Index, restored.Blobs)
	if _, err := svc.GetComponent(context.Background(), "fuel"); err != nil {
		t.Fatalf("the restored store lacks what was backed up: %v", err)
	}
}
