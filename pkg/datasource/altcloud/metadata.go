package altcloud

// Reading user-data from a CD-ROM's filesystem.

import (
	"fmt"
	"io/fs"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/datasource"
)

// readFS reads the first user-data file at fsys's root that can be read
// (cloud-init tries the next on any read error). A volume with none is
// ErrNotFound.
func readFS(fsys fs.FS, source string) ([]byte, string, error) {
	var errs []string
	for _, n := range UserDataFiles() {
		b, err := datasource.ReadFile(fsys, n)
		if err == nil {
			return b, n, nil
		}
		if !datasource.IsNotExist(err) {
			errs = append(errs, err.Error())
		}
	}
	what := ""
	if len(errs) > 0 {
		what = " (" + strings.Join(errs, "; ") + ")"
	}
	return nil, "", fmt.Errorf("%s has no readable %s%s: %w", source, strings.Join(UserDataFiles(), "/"), what, datasource.ErrNotFound)
}
