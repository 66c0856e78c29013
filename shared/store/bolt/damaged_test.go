package bolt_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

// TestEveryTruncationRefused cuts a database holding data at every class of
// truncation point: Open and Check answer ErrDamaged naming the file (no panic,
// no fault), and the damaged file is left as it was, never replaced by a new
// database (an empty file is damaged, not new).
func TestEveryTruncationRefused(t *testing.T) {
	src := filepath.Join(filled(t), bolt.FileName)
	rep, err := bolt.Check(filepath.Dir(src))
	if err != nil {
		t.Fatal(err)
	}
	page := int64(os.Getpagesize())
	recorded := rep.Bytes
	for _, c := range []struct {
		name string
		size int64
	}{
		{"empty", 0},
		{"a few bytes", 100},
		{"less than one page", page - 1},
		{"metadata only", 2 * page},
		{"16 KiB", 16 << 10},
		{"64 KiB", 64 << 10},
		{"half", recorded / 2},
		{"all but one page", recorded - page},
		{"all but one byte", recorded - 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, bolt.FileName)
			copyFile(t, src, path)
			if err := os.Truncate(path, c.size); err != nil {
				t.Fatal(err)
			}
			if _, err := bolt.Open(dir); !errors.Is(err, bolt.ErrDamaged) || !strings.Contains(err.Error(), path) {
				t.Errorf("Open of a file cut to %d bytes = %v, want ErrDamaged naming %s", c.size, err, path)
			}
			if _, err := bolt.Check(dir); !errors.Is(err, bolt.ErrDamaged) {
				t.Errorf("Check of a file cut to %d bytes = %v, want ErrDamaged", c.size, err)
			}
			fi, err := os.Stat(path)
			if err != nil || fi.Size() != c.size {
				t.Errorf("after Open and Check the file is %v, %v; want it untouched at %d bytes", fi, err, c.size)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 1 {
				t.Errorf("the data directory holds %d entries, want only the damaged file", len(entries))
			}
		})
	}
}

// TestUnusedTailMayGo: bbolt grows its file ahead of its data; a file cut back
// to the pages its metadata records has lost nothing and opens with its data.
func TestUnusedTailMayGo(t *testing.T) {
	dir := filled(t)
	rep, err := bolt.Check(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(filepath.Join(dir, bolt.FileName), rep.Bytes); err != nil {
		t.Fatal(err)
	}
	b, err := bolt.Open(dir)
	if err != nil {
		t.Fatalf("Open of a file cut to its recorded %d bytes: %v", rep.Bytes, err)
	}
	defer b.Close()
	items, err := b.Index.Query(context.Background(), store.Query{Partition: "p"})
	if err != nil || len(items) != 64 {
		t.Fatalf("after the cut: %d items, %v", len(items), err)
	}
}

// TestDamagedFreelistRefused: a file of full length whose freelist page was
// overwritten made bbolt's Open panic ("invalid freelist page").
func TestDamagedFreelistRefused(t *testing.T) {
	dir := filled(t)
	path := filepath.Join(dir, bolt.FileName)
	overwrite(t, path, freelistPage(t, path)*int64(os.Getpagesize()), make([]byte, 16))
	if _, err := bolt.Open(dir); !errors.Is(err, bolt.ErrDamaged) || !strings.Contains(err.Error(), "freelist") {
		t.Fatalf("Open with an overwritten freelist page = %v, want ErrDamaged", err)
	}
}

// TestFreelistCountChecked: a freelist page claiming more entries than its
// pages hold made bbolt allocate them all (out of memory, a fatal error).
func TestFreelistCountChecked(t *testing.T) {
	dir := filled(t)
	path := filepath.Join(dir, bolt.FileName)
	off := freelistPage(t, path) * int64(os.Getpagesize())
	// A count of 0xFFFF means "the real count is the first entry": make it huge.
	overwrite(t, path, off+10, binary.NativeEndian.AppendUint16(nil, 0xFFFF))
	overwrite(t, path, off+16, binary.NativeEndian.AppendUint64(nil, 1<<40))
	if _, err := bolt.Open(dir); !errors.Is(err, bolt.ErrDamaged) || !strings.Contains(err.Error(), "freelist") {
		t.Fatalf("Open with a huge freelist count = %v, want ErrDamaged", err)
	}
}

// TestPanicInsideOpenRecovered: damage only bbolt itself sees (the root
// bucket's page is no longer a tree page; bbolt panics "invalid page type" on
// its first look) is ErrDamaged, not a crash of the process.
func TestPanicInsideOpenRecovered(t *testing.T) {
	dir := filled(t)
	path := filepath.Join(dir, bolt.FileName)
	overwrite(t, path, rootPage(t, path)*int64(os.Getpagesize())+8, []byte{0, 0})
	if _, err := bolt.Open(dir); !errors.Is(err, bolt.ErrDamaged) || !strings.Contains(err.Error(), "bbolt:") {
		t.Fatalf("Open with a damaged root page = %v, want ErrDamaged from a recovered panic", err)
	}
}

// TestFreshStoreOnlyWhereNoFile: a missing file becomes a new database built
// aside and linked into place (no temporary file is left behind).
func TestFreshStoreOnlyWhereNoFile(t *testing.T) {
	dir := t.TempDir()
	b, err := bolt.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 || entries[0].Name() != bolt.FileName {
		t.Fatalf("data directory after creation: %v, %v", entries, err)
	}
	if _, err := bolt.Check(dir); err != nil {
		t.Fatalf("Check of a fresh database: %v", err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func overwrite(t *testing.T, path string, off int64, data []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(data, off); err != nil {
		t.Fatal(err)
	}
}

// freelistPage and rootPage read the meta page bbolt trusts (the valid one
// with the larger transaction id; both are valid here).
func freelistPage(t *testing.T, path string) int64 { return metaField(t, path, 32) }

func rootPage(t *testing.T, path string) int64 { return metaField(t, path, 16) }

// metaField reads the uint64 at off in the meta record (after the page header): 16 root, 32 freelist.
func metaField(t *testing.T, path string, off int) int64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var best, bestTxid uint64
	for _, page := range []int64{0, int64(os.Getpagesize())} {
		buf := make([]byte, 80)
		if _, err := f.ReadAt(buf, page); err != nil {
			t.Fatal(err)
		}
		if txid := binary.NativeEndian.Uint64(buf[16+48:]); txid >= bestTxid {
			best, bestTxid = binary.NativeEndian.Uint64(buf[16+off:]), txid
		}
	}
	return int64(best)
}
