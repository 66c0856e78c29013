package bolt

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	bbolt "go.etcd.io/bbolt"
)

// backupOf returns the store.Backend.Backup of db: the whole file as one read
// transaction sees it (bbolt's Tx.WriteTo), so writes that commit meanwhile
// are either all in the copy or not at all, and the server keeps serving.
func backupOf(db *bbolt.DB) func(context.Context, io.Writer) (int64, error) {
	return func(ctx context.Context, w io.Writer) (int64, error) {
		var n int64
		err := db.View(func(tx *bbolt.Tx) error {
			var err error
			n, err = tx.WriteTo(ctxWriter{ctx, w})
			return err
		})
		if err != nil {
			return n, fmt.Errorf("back up %s: %w", db.Path(), err)
		}
		return n, nil
	}
}

// ctxWriter stops a long copy once its request is gone: a read transaction
// left open keeps bbolt from reusing the pages freed meanwhile.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}

// BackupFile writes a consistent copy of dir's database to w when no server
// holds it: the file is opened read-only, after the checks start-up makes.
// With a server running, its GET /api/v1/store/backup streams the same.
func BackupFile(ctx context.Context, dir string, w io.Writer) (int64, error) {
	path := filepath.Join(dir, FileName)
	if err := inspect(path); err != nil {
		return 0, err
	}
	db, err := openExisting(path, true)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	return backupOf(db)(ctx, w)
}

// Restore replaces dir's database with the backup file at from, with no
// server running. The backup is checked as Check does (metadata, size,
// every page), then copied next to the database and the copy checked again;
// a damaged one is ErrDamaged, the database untouched. A sound copy is renamed
// over the database; the database it replaces, if any, is kept beside it as
// tuningbox.db.pre-restore-<UTC time>, and its name is returned.
func Restore(dir, from string) (rep CheckReport, replaced string, err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return rep, "", fmt.Errorf("create data directory: %w", err)
	}
	path := filepath.Join(dir, FileName)
	// A server holding the database keeps its lock: opening it read-only
	// fails after a second. A damaged or missing database is what a restore is for.
	if err := inspect(path); err == nil {
		db, err := openExisting(path, true)
		switch {
		case errors.Is(err, ErrDamaged):
		case err != nil:
			return rep, "", err
		default:
			defer db.Close() // held until the rename: no server starts meanwhile
		}
	}
	refused := func(err error) error {
		return fmt.Errorf("restore refused, %s untouched: %w", path, err)
	}
	// The backup itself first, so that what is wrong names it; then the
	// copy, which is what goes in place.
	if _, err := CheckFile(from); err != nil {
		return rep, "", refused(err)
	}
	tmp, err := copyBeside(path, from)
	if err != nil {
		return rep, "", err
	}
	defer os.Remove(tmp) // after a rename, nothing is left to remove
	if rep, err = CheckFile(tmp); err != nil {
		return rep, "", refused(err)
	}
	rep.Path = path
	if _, err := os.Lstat(path); err == nil {
		replaced = path + ".pre-restore-" + time.Now().UTC().Format("20060102T150405Z")
		if err := os.Link(path, replaced); err != nil {
			return rep, "", fmt.Errorf("keep the replaced database: %w", err)
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		return rep, "", fmt.Errorf("restore %s: %w", path, err)
	}
	return rep, replaced, syncDir(dir)
}

// copyBeside copies the file at from to a new temporary file in path's
// directory (so that a rename can put it in place) and makes it durable.
func copyBeside(path, from string) (tmpPath string, err error) {
	src, err := os.Open(from)
	if err != nil {
		return "", err
	}
	defer src.Close()
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+FileName+".restore-*")
	if err != nil {
		return "", err
	}
	defer func() {
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(tmp.Name())
		}
	}()
	if _, err := io.Copy(tmp, src); err != nil {
		return "", fmt.Errorf("copy %s: %w", from, err)
	}
	return tmp.Name(), tmp.Sync()
}
