package opennebula

// Reading a context disk from a filesystem.

import (
	"fmt"
	"io/fs"

	"github.com/cloudroot/cloudroot/pkg/datasource"
)

// readFS reads and parses context.sh at fsys's root. A volume without it
// is ErrNotFound.
func readFS(fsys fs.FS, source string) (map[string]string, error) {
	b, err := datasource.ReadFile(fsys, "context.sh")
	if err != nil {
		if datasource.IsNotExist(err) {
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
