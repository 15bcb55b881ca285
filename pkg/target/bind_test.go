package target

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type fakeMounter struct {
	calls []string
	fail  map[string]bool
}

func (f *fakeMounter) Bind(src, dst string) error {
	f.calls = append(f.calls, "bind "+src+" "+dst)
	if f.fail[src] {
		return errors.New("EPERM")
	}
	return nil
}

func (f *fakeMounter) Unmount(dst string) error {
	f.calls = append(f.calls, "umount "+dst)
	return nil
}

func TestBindSystem(t *testing.T) {
	m := &fakeMounter{}
	unbind, err := BindSystem("/sysroot", m)
	if err != nil {
		t.Fatal(err)
	}
	if err := unbind(); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"bind /dev /sysroot/dev", "bind /proc /sysroot/proc", "bind /sys /sysroot/sys", "bind /run /sysroot/run",
		"umount /sysroot/run", "umount /sysroot/sys", "umount /sysroot/proc", "umount /sysroot/dev",
	}
	if diff := cmp.Diff(want, m.calls); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}

	// A failed bind is reported, the others stay, and only what was bound
	// is unmounted.
	m = &fakeMounter{fail: map[string]bool{"/sys": true}}
	unbind, err = BindSystem("/sysroot", m)
	if err == nil || !strings.Contains(err.Error(), "binding /sys on /sysroot/sys") {
		t.Errorf("err = %v", err)
	}
	m.calls = nil
	if err := unbind(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"umount /sysroot/run", "umount /sysroot/proc", "umount /sysroot/dev"}, m.calls); diff != "" {
		t.Errorf("unbind (-want +got):\n%s", diff)
	}
}
