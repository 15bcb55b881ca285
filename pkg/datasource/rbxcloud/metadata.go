package rbxcloud

// Reading a metadata disk from a filesystem.

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/datasource"
)

// readFS reads cloud.json and user.data at fsys's root. A disk without
// cloud.json is ErrNotFound.
func readFS(fsys fs.FS, source string) (Input, error) {
	in := Input{Source: source}
	var err error
	in.CloudJSON, err = datasource.ReadFile(fsys, "cloud.json")
	if err != nil {
		if notExist(err) {
			return in, fmt.Errorf("%s has no cloud.json: %w", source, datasource.ErrNotFound)
		}
		return in, fmt.Errorf("reading %s/cloud.json: %w", source, err)
	}
	in.UserData, err = datasource.ReadFile(fsys, "user.data")
	if err != nil {
		if !notExist(err) {
			return in, fmt.Errorf("reading %s/user.data: %w", source, err)
		}
		in.UserData = nil
	}
	return in, nil
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
