package harness

import (
	"fmt"
	"io/fs"
	"path"
)

// Remove deletes a regular file or symlink from the image (debugfs rm); a
// missing file is an error wrapping fs.ErrNotExist.
func (im *Image) Remove(p string) error {
	p = path.Clean(p)
	fi, err := im.Stat(p)
	if err != nil {
		return err
	}
	if fi.Mode.IsDir() {
		return &fs.PathError{Op: "remove", Path: p, Err: fmt.Errorf("is a directory")}
	}
	if err := im.write([]string{"rm " + quote(p)}); err != nil {
		return fmt.Errorf("rm %s in %s: %w", p, im.Path, err)
	}
	return nil
}
