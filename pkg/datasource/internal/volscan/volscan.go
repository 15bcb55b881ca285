// Package volscan is the search every source that reads volumes shares
// (ConfigDrive, OVF, OpenNebula, RbxCloud, AltCloud): a seed directory in
// the target root first, then each candidate volume opened through
// Env.Open, until one holds the source's data.
//
// Contract of Scan.Get:
//   - The seed directory (when Scan.SeedDir is set and is a directory in
//     Env.Root) is read first, then Scan.Devices in order; Env.Budget (else
//     Scan.Budget) bounds the search between volumes.
//   - Read answers for one place: Data (found: logged with the path and
//     the duration), an error wrapping ErrNotFound (nothing here: the
//     search goes on), Stop(err) (the search ends with err, as cloud-init
//     raises), or any other error (recorded, logged, and the search goes
//     on).
//   - A volume that cannot be opened is recorded, unless Scan.Quiet says it
//     is only logged (cloud-init skips devices it cannot mount).
//   - Nothing found: the recorded errors joined, else an error wrapping
//     ErrNotFound naming every place looked at. Every error is prefixed
//     with Scan.Tag.
package volscan

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/datasource"
)

// Scan is one source's search.
type Scan struct {
	// Name is the datasource's name (its logger); Tag prefixes errors
	// ("configdrive").
	Name, Tag string
	// What is what is looked for ("config drive"); Hint says which
	// volumes are candidates ("labels config-2/CONFIG-2"). Both are for
	// messages.
	What, Hint string
	// SeedDir is the seed directory's absolute path in the target root,
	// or "" for none.
	SeedDir string
	// Devices are the candidate volumes, in order.
	Devices []bootenv.Device
	// Budget is the default bound of the search.
	Budget time.Duration
	// Read reads one place: fsys at where (SeedDir or a device's path);
	// seed is true for the seed directory.
	Read func(fsys fs.FS, where string, seed bool) (*datasource.Data, error)
	// Quiet, when not nil, says of a device that cannot be opened that
	// this is only logged.
	Quiet func(dev bootenv.Device) bool
}

type stop struct{ err error }

func (s stop) Error() string { return s.err.Error() }
func (s stop) Unwrap() error { return s.err }

// Stop marks an error of Read that ends the search.
func Stop(err error) error { return stop{err} }

// Get runs the search (the package comment's contract).
func (s Scan) Get(ctx context.Context, env datasource.Env) (*datasource.Data, error) {
	log := env.Logger(s.Name)
	ctx, cancel := env.WithBudget(ctx, s.Budget)
	defer cancel()
	start := time.Now()
	var tried []string
	var errs []error
	// try reads one place: done when found or stopped.
	try := func(fsys fs.FS, where string, seed bool) (*datasource.Data, error, bool) {
		tried = append(tried, where)
		d, err := s.Read(fsys, where, seed)
		var st stop
		switch {
		case err == nil:
			log.Info("found", "path", where, "duration", time.Since(start))
			return d, nil, true
		case errors.As(err, &st):
			return nil, fmt.Errorf("%s: %w", s.Tag, st.err), true
		case !errors.Is(err, datasource.ErrNotFound):
			log.Warn("unreadable "+s.What, "path", where, "error", err)
			errs = append(errs, fmt.Errorf("%s: %w", s.Tag, err))
		}
		return nil, nil, false
	}
	if s.SeedDir != "" && env.Root != nil {
		seed := strings.TrimPrefix(s.SeedDir, "/")
		if fi, err := fs.Stat(env.Root, seed); err == nil && fi.IsDir() {
			sub, err := fs.Sub(env.Root, seed)
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %w", s.Tag, s.SeedDir, err)
			}
			if d, err, done := try(sub, s.SeedDir, true); done {
				return d, err
			}
		}
	}
	for _, dev := range s.Devices {
		if err := ctx.Err(); err != nil {
			errs = append(errs, fmt.Errorf("%s: before %s: %w", s.Tag, dev.Path, err))
			break
		}
		fsys, closeFS, err := env.Open(dev)
		if err != nil {
			tried = append(tried, dev.Path)
			log.Warn("unreadable device", "path", dev.Path, "error", err)
			if s.Quiet == nil || !s.Quiet(dev) {
				errs = append(errs, fmt.Errorf("%s: %w", s.Tag, err))
			}
			continue
		}
		d, err, done := try(fsys, dev.Path, false)
		closeFS()
		if done {
			return d, err
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	what := "nothing"
	if len(tried) > 0 {
		what = strings.Join(tried, ", ")
	}
	return nil, fmt.Errorf("%s: no %s (looked at %s; %s): %w", s.Tag, s.What, what, s.Hint, datasource.ErrNotFound)
}
