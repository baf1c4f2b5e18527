// Package archive keeps the exports of archived matches (service.Archiver)
// in a directory of files. An object store would implement the same
// Put.
package archive

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
	rel := filepath.FromSlash(name)
	if !filepath.IsLocal(rel) {
		return fmt.Errorf("archive: %q is not a name inside the archive", name)
	}
	path := filepath.Join(string(d), rel)
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
