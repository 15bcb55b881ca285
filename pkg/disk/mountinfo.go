package disk

// /proc/self/mountinfo, pure: which device is mounted where, with what
// filesystem. The major:minor field is what identifies the device (the
// source field may say /dev/root).

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// DefaultMountInfo is the running system's mount table.
const DefaultMountInfo = "/proc/self/mountinfo"

// Mount is one mountinfo line.
type Mount struct {
	Major, Minor int
	Root         string // the mounted directory inside the filesystem
	MountPoint   string
	FSType       string
	Source       string
	Options      string
}

// ParseMountInfo reads mountinfo lines; malformed lines are skipped. Fields
// are separated by single spaces only: the kernel escapes space, tab,
// newline and backslash in paths, and leaves every other byte as it is (a
// carriage return or a UTF-8 no-break space is part of a path).
func ParseMountInfo(r io.Reader) ([]Mount, error) {
	var out []Mount
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.FieldsFunc(sc.Text(), func(r rune) bool { return r == ' ' })
		sep := -1
		for i, s := range f {
			if s == "-" && i >= 6 {
				sep = i
				break
			}
		}
		if sep < 0 || len(f) < sep+3 {
			continue
		}
		maj, min, ok := strings.Cut(f[2], ":")
		if !ok {
			continue
		}
		ma, err1 := strconv.Atoi(maj)
		mi, err2 := strconv.Atoi(min)
		if err1 != nil || err2 != nil {
			continue
		}
		out = append(out, Mount{
			Major: ma, Minor: mi,
			Root:       unescapeMount(f[3]),
			MountPoint: unescapeMount(f[4]),
			Options:    f[5],
			FSType:     f[sep+1],
			Source:     unescapeMount(f[sep+2]),
		})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading mountinfo: %w", err)
	}
	return out, nil
}

// unescapeMount undoes the kernel's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// FindMount returns the mount on mountpoint (the last, i.e. topmost, when
// several are stacked).
func FindMount(mounts []Mount, mountpoint string) (Mount, bool) {
	var m Mount
	found := false
	for _, x := range mounts {
		if x.MountPoint == mountpoint {
			m, found = x, true
		}
	}
	return m, found
}
