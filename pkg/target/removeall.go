package target

import (
	"fmt"
	"os"
)

// RemoveAll removes p and everything under it, inside the root. p itself
// is not followed if it is a symlink (the link goes), and os.RemoveAll
// never follows links below it.
func (r *Root) RemoveAll(p string) error {
	hp, err := r.resolveNoFollow(p)
	if err != nil {
		return err
	}
	if hp == r.dir {
		return fmt.Errorf("target: remove all of %s: refusing to empty the root", p)
	}
	if err := os.RemoveAll(hp); err != nil {
		return fmt.Errorf("target: remove all of %s: %w", p, err)
	}
	return nil
}
