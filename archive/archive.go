// Package archive keeps archived matches (service.Archiver) in a directory
// of files: each match's export and, beside it, its record (record.go),
// which a restore reads back (service.ArchiveReader). An object store
// would implement the same Put, Get and List.
package archive

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Dir is a directory holding archived exports, one file per match under
// the name the service gives it (such as 2026/05/01/m_abc.txt).
type Dir string

// Put writes data to the file name (slash-separated, inside the
// directory), creating the directories it needs, atomically and durably:
// it writes a temporary file beside it, syncs it, renames it over name and
// syncs the directory, so that after a crash the file is whole, old or new,
// never a part. It fails for a name outside the directory.
func (d Dir) Put(ctx context.Context, name string, data []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	path, err := d.path(name)
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return fmt.Errorf("archive: %w", err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("archive: %w", err)
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	err = errors.Join(err, f.Close())
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("archive: %w", err)
	}
	// The rename is durable once the directories holding it are synced (a
	// new directory's entry in its parent too).
	for p := dir; ; p = filepath.Dir(p) {
		if err := syncDir(p); err != nil {
			return fmt.Errorf("archive: %w", err)
		}
		if p == filepath.Clean(string(d)) || p == filepath.Dir(p) {
			return nil
		}
	}
}

func syncDir(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	return errors.Join(f.Sync(), f.Close())
}

// path is the file of name, or an error for a name outside the directory.
func (d Dir) path(name string) (string, error) {
	rel := filepath.FromSlash(name)
	if !filepath.IsLocal(rel) {
		return "", fmt.Errorf("archive: %q is not a name inside the archive", name)
	}
	return filepath.Join(string(d), rel), nil
}

// Get returns the contents of the file name (slash-separated, inside the
// directory); an error wrapping fs.ErrNotExist when there is none.
func (d Dir) Get(ctx context.Context, name string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	path, err := d.path(name)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("archive: %w", err)
	}
	return b, nil
}

// List returns the names (slash-separated) of the files in the directory
// whose names end with suffix, in order, leaving out the temporary files
// of a Put that did not finish.
func (d Dir) List(ctx context.Context, suffix string) ([]string, error) {
	var names []string
	err := filepath.WalkDir(string(d), func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if !e.Type().IsRegular() || strings.HasPrefix(e.Name(), ".") || !strings.HasSuffix(e.Name(), suffix) {
			return nil
		}
		rel, err := filepath.Rel(string(d), p)
		if err != nil {
			return err
		}
		names = append(names, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("archive: %w", err)
	}
	slices.Sort(names)
	return names, nil
}
