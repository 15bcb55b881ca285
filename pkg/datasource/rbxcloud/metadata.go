package rbxcloud

// Reading a metadata disk from a filesystem.

import (
	"fmt"
	"io/fs"

	"github.com/cloudroot/cloudroot/pkg/datasource"
)

// readFS reads cloud.json and user.data at fsys's root. A disk without
// cloud.json is ErrNotFound.
func readFS(fsys fs.FS, source string) (Input, error) {
	in := Input{Source: source}
	var err error
	in.CloudJSON, err = datasource.ReadFile(fsys, "cloud.json")
	if err != nil {
		if datasource.IsNotExist(err) {
			return in, fmt.Errorf("%s has no cloud.json: %w", source, datasource.ErrNotFound)
		}
		return in, fmt.Errorf("reading %s/cloud.json: %w", source, err)
	}
	in.UserData, err = datasource.ReadFile(fsys, "user.data")
	if err != nil {
		if !datasource.IsNotExist(err) {
			return in, fmt.Errorf("reading %s/user.data: %w", source, err)
		}
		in.UserData = nil
	}
	return in, nil
}
