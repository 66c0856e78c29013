package bolt_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/tuningbox/tuningbox/shared/store"
	"github.com/tuningbox/tuningbox/shared/store/bolt"
)

// filled returns a data directory whose database holds about 2 MB of blobs and some items.
func filled(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	b, err := bolt.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := range 64 {
		if _, err := b.Blobs.Put(ctx, bytes.Repeat([]byte(fmt.Sprint(i)), 32<<10)); err != nil {
			t.Fatal(err)
		}
		if err := b.Index.Write(ctx, store.Put(store.Key{Partition: "p", Sort: fmt.Sprint(i)}, []byte("v"))); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestCheckHealthy(t *testing.T) {
	dir := filled(t)
	rep, err := bolt.Check(dir)
	if err != nil || rep.Blobs != 64 || rep.IndexItems != 64 || rep.Bytes == 0 {
		t.Fatalf("Check = %+v, %v", rep, err)
	}
	b, err := bolt.Open(dir)
	if err != nil {
		t.Fatalf("Open after Check: %v", err)
	}
	b.Close()
}

// TestTruncatedFileRefused: a database cut to half its size is refused by Open
// and by Check with ErrDamaged, instead of serving until a write faults (SIGBUS).
func TestTruncatedFileRefused(t *testing.T) {
	dir := filled(t)
	path := filepath.Join(dir, bolt.FileName)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, fi.Size()/2); err != nil {
		t.Fatal(err)
	}
	if _, err := bolt.Open(dir); !errors.Is(err, bolt.ErrDamaged) {
		t.Fatalf("Open of a truncated file = %v, want ErrDamaged", err)
	}
	if _, err := bolt.Check(dir); !errors.Is(err, bolt.ErrDamaged) {
		t.Fatalf("Check of a truncated file = %v, want ErrDamaged", err)
	}
}

// TestDamagedMetaRefused: with both meta pages overwritten nothing is trusted.
func TestDamagedMetaRefused(t *testing.T) {
	dir := filled(t)
	path := filepath.Join(dir, bolt.FileName)
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(bytes.Repeat([]byte{0xa5}, 2*os.Getpagesize()), 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := bolt.Open(dir); !errors.Is(err, bolt.ErrDamaged) {
		t.Fatalf("Open with damaged metadata = %v, want ErrDamaged", err)
	}
	if _, err := bolt.Check(dir); !errors.Is(err, bolt.ErrDamaged) {
		t.Fatalf("Check with damaged metadata = %v, want ErrDamaged", err)
	}
}
