package target

import "fmt"

// ExpirePassword forces name to change its password at the next login by
// setting the shadow entry's last-change day to 0, as `passwd --expire`
// does (cloud-init edits /etc/shadow this way itself on Alpine, whose
// busybox passwd cannot expire). It fails when the target has no shadow
// entry for name.
func (r *Root) ExpirePassword(name string) error {
	r.acct.Lock()
	defer r.acct.Unlock()
	tx := r.begin()
	sh, err := tx.file(ShadowFile)
	if err != nil {
		return fmt.Errorf("target: expire password of %s: %w", name, err)
	}
	i := sh.find(name)
	if !sh.exists || i < 0 {
		return fmt.Errorf("target: expire password of %s: %w in %s", name, ErrNoUser, ShadowFile)
	}
	f := sh.fieldsAt(i)
	if len(f) != 9 {
		return fmt.Errorf("target: expire password of %s: %s line %d is malformed", name, ShadowFile, i+1)
	}
	f[2] = "0"
	sh.set(i, f)
	return tx.commit()
}
