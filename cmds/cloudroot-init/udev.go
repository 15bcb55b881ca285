package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cloudroot/cloudroot/pkg/udevdb"
)

// The udev hand-off (pkg/udevdb, docs/distributions.md "The systemd
// integration"): before switch_root, the /dev/disk links and the udev
// database entries of the block devices cloudroot-init probed, so the
// booted system's systemd sees them plugged at start instead of waiting for
// its udevd's coldplug. /dev (devtmpfs) and /run move into the new root.
//
// Contract of writeUdev:
//   - It writes only under devRoot and runRoot: <devRoot>/<link>,
//     <runRoot>/udev/data/<ID> (0644) and <runRoot>/udev/tags/systemd/<ID>
//     (an empty file, 0444), as udevd's device_update_db and
//     device_tag_index do.
//   - An entry whose device node is missing is skipped whole. An entry
//     whose database file exists already is skipped whole (someone who knows
//     better wrote it). A link that exists (any type) is left alone.
//   - The database file is written to a temporary name and renamed, so a
//     reader never sees half of one.
//   - Every failure is collected; it never stops at the first.

// writeUdev writes entries; it returns how many database entries it wrote
// and the joined failures.
func writeUdev(devRoot, runRoot string, entries []udevdb.Entry) (int, error) {
	var errs []error
	n := 0
	for _, e := range entries {
		if !filepath.IsLocal(e.ID) || !filepath.IsLocal(e.Node) {
			errs = append(errs, fmt.Errorf("udev hand-off: refusing entry %q for node %q", e.ID, e.Node))
			continue
		}
		node := filepath.Join(devRoot, e.Node)
		if _, err := os.Lstat(node); err != nil {
			errs = append(errs, fmt.Errorf("udev hand-off: device node: %w", err))
			continue
		}
		dbPath := filepath.Join(runRoot, "udev", "data", e.ID)
		if _, err := os.Lstat(dbPath); err == nil {
			continue
		}
		for _, l := range e.Links {
			if err := writeLink(devRoot, l); err != nil {
				errs = append(errs, err)
			}
		}
		if e.DB == nil {
			continue
		}
		if err := writeFileAtomic(dbPath, e.DB, 0o644); err != nil {
			errs = append(errs, fmt.Errorf("udev hand-off: database entry: %w", err))
			continue
		}
		tag := filepath.Join(runRoot, "udev", "tags", udevdb.Tag, e.ID)
		if err := touch(tag, 0o444); err != nil {
			errs = append(errs, fmt.Errorf("udev hand-off: tag index: %w", err))
			// Without the tag index systemd never enumerates the
			// device: the entry would only be noise. Take it back.
			_ = os.Remove(dbPath)
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

// writeLink makes one /dev symlink unless something is there already.
func writeLink(devRoot string, l udevdb.Link) error {
	if !filepath.IsLocal(l.Path) {
		return fmt.Errorf("udev hand-off: refusing link %q", l.Path)
	}
	p := filepath.Join(devRoot, l.Path)
	if _, err := os.Lstat(p); err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("udev hand-off: %w", err)
	}
	if err := os.Symlink(l.Target, p); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("udev hand-off: %w", err)
	}
	return nil
}

func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".cloudroot-*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr, os.Chmod(tmp.Name(), mode)); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	return nil
}

func touch(path string, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, mode)
	if err != nil {
		return err
	}
	return f.Close()
}
