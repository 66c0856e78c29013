package bolt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	bbolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// The layout of bbolt's file format 2 that inspect reads (go.etcd.io/bbolt's
// internal/common, which cannot be imported): every page starts with a 16-byte
// header (id uint64, flags uint16, count uint16, overflow uint32); pages 0 and 1
// hold a meta record (magic, version, page size, flags uint32; root bucket
// page and sequence, freelist page, high-water mark page, txid uint64; then the
// FNV-64a checksum of the 56 bytes before it), in the machine's byte order.
const (
	pageHeaderLen    = 16
	metaLen          = 64
	metaSummedLen    = 56
	boltMagic        = 0xED0CDAED
	boltVersion      = 2
	freelistPageFlag = 0x10
	noFreelist       = ^uint64(0)
	// maxPageSize bounds where inspect looks for the second meta page, as bbolt does.
	maxPageSize = 16 << 20
)

// meta is the part of a meta record inspect needs.
type meta struct {
	pageSize uint32
	root     uint64
	freelist uint64
	highMark uint64 // pages in use: the file must hold at least highMark*pageSize bytes
	txid     uint64
}

// readMeta decodes the meta record of the page at off, or reports why it is not one.
func readMeta(f *os.File, off int64) (meta, error) {
	buf := make([]byte, pageHeaderLen+metaLen)
	if _, err := f.ReadAt(buf, off); err != nil {
		return meta{}, fmt.Errorf("no meta page at byte %d: %w", off, err)
	}
	m := buf[pageHeaderLen:]
	ne := binary.NativeEndian
	if ne.Uint32(m[0:]) != boltMagic || ne.Uint32(m[4:]) != boltVersion {
		return meta{}, fmt.Errorf("no bbolt meta page at byte %d", off)
	}
	h := fnv.New64a()
	h.Write(m[:metaSummedLen])
	if h.Sum64() != ne.Uint64(m[metaSummedLen:]) {
		return meta{}, fmt.Errorf("the meta page at byte %d fails its checksum", off)
	}
	return meta{pageSize: ne.Uint32(m[8:]), root: ne.Uint64(m[16:]), freelist: ne.Uint64(m[32:]), highMark: ne.Uint64(m[40:]), txid: ne.Uint64(m[48:])}, nil
}

// inspect reads the database file at path as bbolt's Open will and refuses,
// with ErrDamaged, every file bbolt would fail, panic or fault on: empty or
// shorter than two pages, no valid meta page, fewer bytes than the meta page's
// high-water mark (pages were cut off), a root or freelist page past it, or a
// freelist page that is not one. Like bbolt it trusts the valid meta page with
// the larger transaction id.
func inspect(path string) error {
	damaged := func(format string, args ...any) error {
		return fmt.Errorf("open %s: %w (%s)", path, ErrDamaged, fmt.Sprintf(format, args...))
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	size := fi.Size()
	if size == 0 {
		return damaged("the file is empty; a new database is created only where no file exists")
	}
	first, err0 := readMeta(f, 0)
	pageSize := int64(first.pageSize)
	if err0 != nil {
		pageSize = int64(os.Getpagesize())
	}
	if size < 2*pageSize {
		return damaged("the file has %d bytes, less than its two meta pages of %d", size, pageSize)
	}
	second, err1 := readMeta(f, pageSize)
	if err0 != nil && err1 != nil {
		// The first page may have been overwritten: look for the second where
		// other page sizes would put it.
		for ps := int64(1024); ps <= maxPageSize && ps < size && err1 != nil; ps *= 2 {
			if second, err1 = readMeta(f, ps); err1 == nil {
				pageSize = ps
			}
		}
	}
	var m meta
	switch {
	case err0 != nil && err1 != nil:
		return damaged("no valid meta page: %v; %v", err0, err1)
	case err1 != nil || (err0 == nil && first.txid > second.txid):
		m = first
	default:
		m = second
	}
	if int64(m.pageSize) != pageSize {
		return damaged("the meta pages disagree on the page size")
	}
	if m.highMark > uint64(size)/uint64(pageSize) {
		return damaged("the file has %d bytes, its metadata records %d pages of %d: it was truncated", size, m.highMark, pageSize)
	}
	if m.root >= m.highMark {
		return damaged("the root page %d is past the high-water mark %d", m.root, m.highMark)
	}
	if m.freelist != noFreelist {
		if m.freelist >= m.highMark {
			return damaged("the freelist page %d is past the high-water mark %d", m.freelist, m.highMark)
		}
		if err := inspectFreelist(f, m, pageSize); err != nil {
			return damaged("%v", err)
		}
	}
	return nil
}

// inspectFreelist checks that the freelist page is one and that its entries
// fit in its pages: bbolt trusts the count and would allocate or read past the
// file on a wrong one.
func inspectFreelist(f *os.File, m meta, pageSize int64) error {
	buf := make([]byte, pageHeaderLen+8)
	if _, err := f.ReadAt(buf, int64(m.freelist)*pageSize); err != nil {
		return fmt.Errorf("read the freelist page: %w", err)
	}
	ne := binary.NativeEndian
	if ne.Uint16(buf[8:])&freelistPageFlag == 0 {
		return fmt.Errorf("page %d, which the metadata names as the freelist, is not one", m.freelist)
	}
	pages := uint64(ne.Uint32(buf[12:])) + 1
	count := uint64(ne.Uint16(buf[10:]))
	if count == 0xFFFF { // the real count is the first entry
		count = ne.Uint64(buf[pageHeaderLen:]) + 1
	}
	if pages > m.highMark-m.freelist || count > (pages*uint64(pageSize)-pageHeaderLen)/8 {
		return fmt.Errorf("the freelist at page %d claims %d entries in %d pages", m.freelist, count, pages)
	}
	return nil
}

// openExisting opens the database file at path, which inspect passed, without
// ever creating it, and (read-write) creates the buckets this version needs.
// A panic or memory fault inside bbolt (damage inspect cannot see) becomes
// ErrDamaged instead of reaching the user.
func openExisting(path string, readOnly bool) (db *bbolt.DB, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			db, err = nil, fmt.Errorf("open %s: %w (bbolt: %v)", path, ErrDamaged, r)
		}
	}()
	db, err = bbolt.Open(path, 0o600, &bbolt.Options{
		Timeout:  time.Second,
		ReadOnly: readOnly,
		OpenFile: func(name string, flag int, perm os.FileMode) (*os.File, error) {
			return os.OpenFile(name, flag&^os.O_CREATE, perm)
		},
	})
	switch {
	case errors.Is(err, berrors.ErrTimeout):
		return nil, fmt.Errorf("open %s: data directory is in use by another tuningbox process; stop it first", path)
	case err != nil:
		return nil, openError(path, err)
	}
	if !readOnly {
		// The first look at the root bucket's pages, guarded with the rest.
		if err := db.Update(createBuckets); err != nil {
			db.Close()
			return nil, fmt.Errorf("initialise %s: %w", path, err)
		}
	}
	return db, nil
}

// createFresh makes a new database at path, which does not exist: built under
// a temporary name and linked into place only when complete, so a crash never
// leaves a partial (empty) file at path, and a file that appeared at path
// meanwhile is kept.
func createFresh(path string) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+FileName+".new-*")
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	tmpPath := tmp.Name()
	tmp.Close()
	defer os.Remove(tmpPath)
	db, err := bbolt.Open(tmpPath, 0o600, &bbolt.Options{Timeout: time.Second})
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	err = db.Update(createBuckets)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	if err := os.Link(tmpPath, path); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("create %s: %w", path, err)
	}
	return syncDir(dir)
}

// syncDir makes a new directory entry durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}
