package bolt_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tuningbox/tuningbox/shared/store"
	"github.com/tuningbox/tuningbox/shared/store/bolt"
)

// TestBackupUnderWrites: backups taken while writers commit batches open as
// sound databases in which every batch is whole: the two items each batch
// writes agree, and the blob each names is there.
func TestBackupUnderWrites(t *testing.T) {
	ctx := context.Background()
	b, err := bolt.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var (
		wg        sync.WaitGroup
		committed [2]atomic.Int64 // by writer
	)
	stop := make(chan struct{})
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				hash, err := b.Blobs.Put(ctx, []byte(fmt.Sprintf("writer %d write %d", w, i)))
				if err == nil {
					v := []byte(strconv.Itoa(i) + " " + hash)
					err = b.Index.Write(ctx, store.Put(store.Key{Partition: "w" + strconv.Itoa(w), Sort: "a"}, v), store.Put(store.Key{Partition: "w" + strconv.Itoa(w), Sort: "b"}, v))
				}
				if err != nil {
					t.Error(err)
					return
				}
				committed[w].Add(1)
			}
		}()
	}
	for round := range 3 {
		// Each backup starts while both writers are committing.
		for committed[0].Load() < int64(10*(round+1)) || committed[1].Load() < int64(10*(round+1)) {
			runtime.Gosched()
		}
		dir := t.TempDir()
		f, err := os.Create(filepath.Join(dir, bolt.FileName))
		if err != nil {
			t.Fatal(err)
		}
		n, err := b.Backup(ctx, f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil || n == 0 {
			t.Fatalf("Backup = %d, %v", n, err)
		}
		if _, err := bolt.Check(dir); err != nil {
			t.Fatalf("the backup fails its check: %v", err)
		}
		copied, err := bolt.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		for w := range 2 {
			p := "w" + strconv.Itoa(w)
			items, err := copied.Index.Query(ctx, store.Query{Partition: p})
			if err != nil {
				t.Fatal(err)
			}
			if len(items) != 2 || !bytes.Equal(items[0].Value, items[1].Value) || items[0].Revision != items[1].Revision {
				t.Fatalf("the backup holds half a batch: %+v", items)
			}
			hash := string(items[0].Value[bytes.IndexByte(items[0].Value, ' ')+1:])
			if _, err := copied.Blobs.Get(ctx, hash); err != nil {
				t.Fatalf("the backup lost a committed blob: %v", err)
			}
		}
		copied.Close()
	}
	close(stop)
	wg.Wait()
}

// TestRestoreRefusesDamagedBackup: a truncated backup and one with a page
// overwritten are refused with ErrDamaged, and the current database is left
// as it was (same bytes, no file added); a sound backup then restores, the
// replaced database kept beside it.
func TestRestoreRefusesDamagedBackup(t *testing.T) {
	ctx := context.Background()
	backupDir := filled(t)
	backup := filepath.Join(backupDir, bolt.FileName)
	good, err := os.ReadFile(backup)
	if err != nil {
		t.Fatal(err)
	}
	dataDir := t.TempDir()
	b, err := bolt.Open(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Index.Write(ctx, store.Put(store.Key{Partition: "current", Sort: "x"}, []byte("kept"))); err != nil {
		t.Fatal(err)
	}
	b.Close()
	current := filepath.Join(dataDir, bolt.FileName)
	before, err := os.ReadFile(current)
	if err != nil {
		t.Fatal(err)
	}
	// The root page's type overwritten, as in TestPanicInsideOpenRecovered.
	overwritten := bytes.Clone(good)
	root := rootPage(t, backup) * int64(os.Getpagesize())
	copy(overwritten[root+8:], []byte{0, 0})
	for name, damaged := range map[string][]byte{
		"truncated":   good[:len(good)/2],
		"overwritten": overwritten,
		"empty":       nil,
	} {
		t.Run(name, func(t *testing.T) {
			from := filepath.Join(t.TempDir(), "backup.db")
			if err := os.WriteFile(from, damaged, 0o600); err != nil {
				t.Fatal(err)
			}
			if _, _, err := bolt.Restore(dataDir, from); !errors.Is(err, bolt.ErrDamaged) {
				t.Fatalf("Restore of a %s backup = %v, want ErrDamaged", name, err)
			}
			after, err := os.ReadFile(current)
			if err != nil || !bytes.Equal(after, before) {
				t.Fatalf("the current database changed: %v", err)
			}
			if entries, _ := os.ReadDir(dataDir); len(entries) != 1 {
				t.Fatalf("the refused restore left files: %v", entries)
			}
		})
	}
	rep, replaced, err := bolt.Restore(dataDir, backup)
	if err != nil || rep.Blobs != 64 || rep.IndexItems != 64 {
		t.Fatalf("Restore of a sound backup = %+v, %v", rep, err)
	}
	if kept, err := os.ReadFile(replaced); err != nil || !bytes.Equal(kept, before) {
		t.Fatalf("the replaced database was not kept at %q: %v", replaced, err)
	}
	if _, err := bolt.Check(dataDir); err != nil {
		t.Fatal(err)
	}
}

// TestRestoreRefusedWhileServing: a database open in a server is not replaced.
func TestRestoreRefusedWhileServing(t *testing.T) {
	dataDir := t.TempDir()
	b, err := bolt.Open(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	// Refused before the backup is read: it need not exist.
	if _, _, err := bolt.Restore(dataDir, filepath.Join(t.TempDir(), "backup.db")); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("Restore with the database in use = %v", err)
	}
}
