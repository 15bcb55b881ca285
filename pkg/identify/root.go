package identify

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
)

// FromRoot gathers Inputs from under dir the way ds-identify does with
// PATH_ROOT=dir: DMI from dir/sys/class/dmi/id, the command line from
// dir/proc/cmdline, filesystems by probing the block devices of
// dir/sys/class/block through their nodes in dir/dev, uname from
// dir/proc/sys/kernel/{ostype,osrelease,version} (machine: this program's
// architecture), and every other file (etc/cloud, var/lib/cloud, sys, dev,
// proc, run) through an fs.FS confined to dir (os.Root: symlinks may not
// leave it). Virt, Env and Guestinfo are left for the caller.
//
// Missing pieces are not errors (a root without sysfs has no DMI and no
// devices); only a dir that cannot be opened is.
func FromRoot(dir string) (Inputs, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return Inputs{}, fmt.Errorf("opening root %s: %w", dir, err)
	}
	fsys := root.FS()
	in := Inputs{
		DMI:   bootenv.ReadDMI(filepath.Join(dir, "sys")),
		Files: fsys,
		Host:  fsys,
		Uname: unameFrom(fsys),
	}
	if line, ok := readFirstLine(fsys, "proc/cmdline"); ok {
		in.Cmdline = bootenv.ParseCmdline(line)
	}
	devs, err := bootenv.Env{SysRoot: filepath.Join(dir, "sys"), DevRoot: filepath.Join(dir, "dev")}.List()
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return in, fmt.Errorf("listing block devices under %s: %w", dir, err)
	}
	in.FS = FSFromDevices(devs)
	return in, nil
}

// FSFromDevices turns probed block devices into blkid's view: one entry per
// device with a recognised filesystem, named /dev/<name>.
func FSFromDevices(devs []bootenv.Device) []FSInfo {
	var out []FSInfo
	for _, d := range devs {
		if d.FS.Type == "" {
			continue
		}
		out = append(out, FSInfo{
			Device: "/dev/" + d.Name,
			Type:   d.FS.Type,
			Label:  d.FS.Label,
			UUID:   d.FS.UUID,
			Size:   d.Size,
		})
	}
	return out
}

func unameFrom(fsys fs.FS) Uname {
	u := Uname{Sysname: "Linux", Machine: Machine(runtime.GOARCH)}
	if v, ok := readFirstLine(fsys, "proc/sys/kernel/ostype"); ok && v != "" {
		u.Sysname = v
	}
	u.Release, _ = readFirstLine(fsys, "proc/sys/kernel/osrelease")
	u.Version, _ = readFirstLine(fsys, "proc/sys/kernel/version")
	return u
}

// Machine maps a GOARCH to `uname -m`.
func Machine(goarch string) string {
	switch goarch {
	case "amd64":
		return "x86_64"
	case "386":
		return "i686"
	case "arm64":
		return "aarch64"
	case "arm":
		return "armv7l"
	case "loong64":
		return "loongarch64"
	}
	return goarch // ppc64le, s390x, riscv64… are spelled alike
}
