package initramfs

// The image half: stage a root tree in a temp dir (modules, /init, extras,
// empty mount points), then write it as a newc cpio archive with every file
// owned by 0:0, mtime 0, plus the device nodes the kernel needs before
// devtmpfs is mounted (it opens /dev/console for init's stdio).

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/u-root/mkuimage/cpio"
)

// Compression names accepted by Config.Compress.
const (
	CompressGzip = "gzip"
	CompressZstd = "zstd"
	CompressNone = "none"
)

// EmptyDirs are created in every image (mount points and the places /init
// writes to). /tmp is sticky and world-writable.
var EmptyDirs = []string{"dev", "proc", "sys", "run", "tmp", "etc", "sysroot", "mnt"}

// DeviceNodes are written into the archive's /dev. The kernel opens
// /dev/console for /init's stdio before anything mounts devtmpfs there.
var DeviceNodes = []cpio.Record{
	cpio.CharDev("dev/console", 0o600, 5, 1),
	cpio.CharDev("dev/null", 0o666, 1, 3),
	cpio.CharDev("dev/tty", 0o666, 5, 0),
	cpio.CharDev("dev/urandom", 0o666, 1, 9),
}

// File is an extra file or directory tree copied into the image.
type File struct {
	Src string // on the host
	Dst string // in the image, relative to its root ("usr/bin/cloudroot")
}

// ParseFile parses "SRC:DST". DST may start with "/".
func ParseFile(s string) (File, error) {
	src, dst, ok := strings.Cut(s, ":")
	dst = strings.TrimLeft(dst, "/")
	if !ok || src == "" || dst == "" {
		return File{}, fmt.Errorf("want SRC:DST, got %q", s)
	}
	if !filepath.IsLocal(dst) {
		return File{}, fmt.Errorf("destination %q leaves the image root", dst)
	}
	return File{Src: src, Dst: filepath.Clean(dst)}, nil
}

// Config describes one image.
type Config struct {
	// KmodDir is the depmod'ed module tree (build/kernel/modules).
	KmodDir string
	// Version is the kernel's uname -r; empty means the base name of
	// KmodDir after resolving symlinks.
	Version string
	// Drivers are the modules to include and load.
	Drivers []Request
	// HostHardware, when set, adds the modules the devices it describes
	// match (ReadModaliases: a sysfs root or a modalias list): a
	// host-only image.
	HostHardware string
	// Init is the static binary that becomes /init.
	Init string
	// FirmwareDir is where the firmware the packed modules declare is
	// taken from (Debian's /lib/firmware); empty or absent: none.
	FirmwareDir string
	// Programs are dynamically linked host programs copied with their
	// interpreter and libraries (StagePrograms): Debian's lvm.
	Programs []string
	// Extra files and trees.
	Extra []File
	// Compress is CompressGzip (the default when empty), CompressZstd or
	// CompressNone.
	Compress string
}

// Stats describes a built image.
type Stats struct {
	Version      string
	CPIOBytes    int64 // uncompressed archive
	ImageBytes   int64 // what was written
	Modules      int   // module files staged
	ModuleBytes  int64
	InitBytes    int64
	Firmware     FirmwareStats
	ProgramBytes int64
	Load         []string // etc/cloudroot/modules.load
	Notes        []string // from module resolution
}

// Build stages the image described by cfg and writes the (compressed) cpio
// archive to w.
func Build(cfg Config, w io.Writer) (*Stats, error) {
	compress := cfg.Compress
	if compress == "" {
		compress = CompressGzip
	}
	switch compress {
	case CompressGzip, CompressZstd, CompressNone:
	default:
		return nil, fmt.Errorf("unknown compression %q (want %s, %s or %s)", compress, CompressGzip, CompressZstd, CompressNone)
	}
	if cfg.Init == "" {
		return nil, errors.New("no init binary given")
	}
	version := cfg.Version
	if version == "" {
		dir, err := filepath.EvalSymlinks(cfg.KmodDir)
		if err != nil {
			return nil, fmt.Errorf("resolving module dir: %w", err)
		}
		version = filepath.Base(dir)
	}

	tree, err := LoadTree(cfg.KmodDir)
	if err != nil {
		return nil, err
	}
	reqs := cfg.Drivers
	var hostNotes []string
	if cfg.HostHardware != "" {
		aliases, err := ReadModaliases(cfg.HostHardware)
		if err != nil {
			return nil, err
		}
		var host []Request
		host, hostNotes = HostRequests(tree, aliases)
		reqs = append(slices.Clone(reqs), host...)
	}
	res, err := tree.Resolve(reqs)
	if err != nil {
		return nil, fmt.Errorf("resolving drivers: %w", err)
	}
	st := &Stats{Version: version, Load: res.LoadOrder(), Notes: append(hostNotes, res.Notes...)}

	stage, err := os.MkdirTemp("", "cloudroot-initramfs-")
	if err != nil {
		return nil, fmt.Errorf("creating staging dir: %w", err)
	}
	defer os.RemoveAll(stage)

	for _, d := range EmptyDirs {
		if err := os.MkdirAll(filepath.Join(stage, d), 0o755); err != nil {
			return nil, fmt.Errorf("staging: %w", err)
		}
	}
	if err := os.Chmod(filepath.Join(stage, "tmp"), 0o777|fs.ModeSticky); err != nil {
		return nil, fmt.Errorf("staging: %w", err)
	}
	if err := Stage(cfg.KmodDir, stage, res.Modules, version); err != nil {
		return nil, err
	}
	if st.Firmware, err = StageFirmware(cfg.KmodDir, cfg.FirmwareDir, stage, res.Modules); err != nil {
		return nil, err
	}
	if st.ProgramBytes, err = StagePrograms(stage, cfg.Programs); err != nil {
		return nil, err
	}
	for _, m := range res.Modules {
		if m.Builtin || m.Path == "" {
			continue
		}
		fi, err := os.Stat(filepath.Join(stage, "lib", "modules", version, m.ImagePath()))
		if err != nil {
			return nil, fmt.Errorf("staging module %s: %w", m.Name, err)
		}
		st.Modules++
		st.ModuleBytes += fi.Size()
	}

	fi, err := os.Stat(cfg.Init)
	if err != nil {
		return nil, fmt.Errorf("init binary: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("init binary %s is not a regular file", cfg.Init)
	}
	st.InitBytes = fi.Size()
	if err := copyFile(cfg.Init, filepath.Join(stage, "init"), 0o755); err != nil {
		return nil, fmt.Errorf("staging /init: %w", err)
	}
	for _, f := range cfg.Extra {
		if f.Dst == "init" {
			return nil, fmt.Errorf("extra %s would replace /init", f.Src)
		}
		if err := copyTree(f.Src, filepath.Join(stage, f.Dst)); err != nil {
			return nil, fmt.Errorf("staging extra %s:%s: %w", f.Src, f.Dst, err)
		}
	}

	cw := &countingWriter{w: w}
	var (
		zw  io.WriteCloser
		dst io.Writer = cw
	)
	switch compress {
	case CompressGzip:
		zw, err = gzip.NewWriterLevel(cw, gzip.DefaultCompression)
	case CompressZstd:
		zw, err = zstd.NewWriter(cw, zstd.WithEncoderLevel(zstd.SpeedDefault))
	}
	if err != nil {
		return nil, fmt.Errorf("creating %s writer: %w", compress, err)
	}
	if zw != nil {
		dst = zw
	}
	raw := &countingWriter{w: dst}
	if err := WriteArchive(stage, DeviceNodes, raw); err != nil {
		return nil, err
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			return nil, fmt.Errorf("finishing %s stream: %w", compress, err)
		}
	}
	st.CPIOBytes, st.ImageBytes = raw.n, cw.n
	return st, nil
}

// WriteArchive writes the tree at root as a newc cpio archive to w, in
// lexical order (parents before children), followed by extra records and
// the trailer. Owners are 0:0 and mtimes 0, so the archive depends only on
// the tree's contents and modes.
func WriteArchive(root string, extra []cpio.Record, w io.Writer) error {
	rw := cpio.Newc.Writer(w)
	var ino uint64 = 1
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil || rel == "." {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		ino++
		info := cpio.Info{Ino: ino, Name: filepath.ToSlash(rel), NLink: 1, Mode: uint64(fi.Mode().Perm())}
		if fi.Mode()&fs.ModeSetuid != 0 {
			info.Mode |= cpio.S_ISUID
		}
		if fi.Mode()&fs.ModeSetgid != 0 {
			info.Mode |= cpio.S_ISGID
		}
		if fi.Mode()&fs.ModeSticky != 0 {
			info.Mode |= cpio.S_ISVTX
		}
		rec := cpio.Record{}
		switch {
		case fi.IsDir():
			info.Mode |= cpio.S_IFDIR
			info.NLink = 2
		case fi.Mode().IsRegular():
			info.Mode |= cpio.S_IFREG
			info.FileSize = uint64(fi.Size())
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			rec.ReaderAt = f // closed by the writer
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			rec = cpio.Symlink(info.Name, target)
			info.Mode = rec.Mode
			info.FileSize = rec.FileSize
		default:
			return fmt.Errorf("%s: unsupported file type %s", p, fi.Mode().Type())
		}
		rec.Info = info
		if err := rw.WriteRecord(rec); err != nil {
			if c, ok := rec.ReaderAt.(io.Closer); ok {
				c.Close()
			}
			return fmt.Errorf("writing %s: %w", info.Name, err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("writing cpio archive: %w", err)
	}
	for _, r := range extra {
		ino++
		r.Ino, r.NLink = ino, 1
		if err := rw.WriteRecord(r); err != nil {
			return fmt.Errorf("writing cpio archive: %s: %w", r.Name, err)
		}
	}
	if err := cpio.WriteTrailer(rw); err != nil {
		return fmt.Errorf("writing cpio archive: %w", err)
	}
	return nil
}

// copyTree copies a file, symlink or directory tree from src to dst,
// keeping permission bits.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case fi.IsDir():
			return os.MkdirAll(target, fi.Mode().Perm()|0o700)
		case fi.Mode().IsRegular():
			return copyFile(p, target, fi.Mode().Perm())
		case fi.Mode()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			return os.Symlink(link, target)
		default:
			return fmt.Errorf("%s: unsupported file type %s", p, fi.Mode().Type())
		}
	})
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
