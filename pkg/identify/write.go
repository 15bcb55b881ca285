package identify

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// WriteOutputs writes what ds-identify leaves in runDir (/run/cloud-init):
// the log entry (appended), cloud.cfg when the result has one,
// .ds-identify.result, and the enabled or disabled marker (removing the
// other).
func WriteOutputs(runDir string, r Result, log string) error {
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", runDir, err)
	}
	lf, err := os.OpenFile(filepath.Join(runDir, "ds-identify.log"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("opening ds-identify.log: %w", err)
	}
	_, werr := lf.WriteString(log)
	if err := errors.Join(werr, lf.Close()); err != nil {
		return fmt.Errorf("writing ds-identify.log: %w", err)
	}
	if r.CloudCfg != "" {
		if err := writeFile(filepath.Join(runDir, "cloud.cfg"), []byte(r.CloudCfg)); err != nil {
			return err
		}
	}
	if err := writeFile(filepath.Join(runDir, ".ds-identify.result"), []byte(strconv.Itoa(r.ExitCode)+"\n")); err != nil {
		return err
	}
	on, off := "enabled", "disabled"
	if r.ExitCode != ExitEnabled {
		on, off = off, on
	}
	if err := os.Remove(filepath.Join(runDir, off)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing %s marker: %w", off, err)
	}
	if err := writeFile(filepath.Join(runDir, on), nil); err != nil {
		return err
	}
	return nil
}

// writeFile writes data to a temporary file beside path and renames it
// into place.
func writeFile(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	_, werr := f.Write(data)
	if err := errors.Join(werr, f.Chmod(0o644), f.Close()); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
