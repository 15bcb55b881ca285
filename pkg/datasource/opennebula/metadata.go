package opennebula

// Reading a context disk from a filesystem.

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/datasource"
)

// readFS reads and parses context.sh at fsys's root. A volume without it
// is ErrNotFound.
func readFS(fsys fs.FS, source string) (map[string]string, error) {
	b, err := datasource.ReadFile(fsys, "context.sh")
	if err != nil {
		if notExist(err) {
			return nil, fmt.Errorf("%s has no context.sh: %w", source, datasource.ErrNotFound)
		}
		return nil, fmt.Errorf("reading %s/context.sh: %w", source, err)
	}
	c, err := ParseContext(b)
	if err != nil {
		return nil, fmt.Errorf("%s/%w", source, err)
	}
	return c, nil
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
