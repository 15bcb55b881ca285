package ovf

// Reading the OVF environment file from a filesystem.

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/datasource"
)

// readFS reads and parses the environment file at fsys's root, under the
// first of names that exists. A volume without one is ErrNotFound.
func readFS(fsys fs.FS, source string, names []string) (map[string]string, error) {
	for _, n := range names {
		b, err := datasource.ReadFile(fsys, n)
		if err != nil {
			if notExist(err) {
				continue
			}
			return nil, fmt.Errorf("reading %s/%s: %w", source, n, err)
		}
		props, err := ParseOVFEnv(b)
		if err != nil {
			return nil, fmt.Errorf("%s/%s: %w", source, n, err)
		}
		return props, nil
	}
	return nil, fmt.Errorf("%s has no %s: %w", source, strings.Join(names, "/"), datasource.ErrNotFound)
}

// notExist recognises a missing file, also from go-diskfs, whose
// filesystems return plain errors on some paths.
func notExist(err error) bool {
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	s := strings.ToLower(err.Error())
	return strings.Contains(s, "not exist") || strings.Contains(s, "not found") || strings.Contains(s, "no such file")
}
