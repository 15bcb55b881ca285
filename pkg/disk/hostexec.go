package disk

// HostExecutor carries out a plan on this host, for `cloudroot disk apply`
// on block devices and on image files. A partition of an image file has
// no device node, so its filesystem is made in place, without root and
// without a loop device:
//   - ext2/3/4: mke2fs writes at the partition's offset itself
//     (`-E offset=BYTES IMAGE SIZEk`, merged into any -E the config gives);
//   - every other filesystem (vfat, xfs, btrfs, swap) and `cmd`: mkfs runs
//     on a sparse scratch file the partition's size next to the image, the
//     partition's range of the image is zeroed (a hole punched, as a discard
//     would) and the scratch file's data extents are copied in. (mkfs.fat
//     has --offset, but 4.2 picks the FAT size from the whole file's size,
//     not the partition's, and fails on a small partition of a big image;
//     on the scratch file it is given -h, the hidden sectors it would
//     have read from a partition device.)
// A whole image file (partition: none) is formatted directly: every mkfs
// takes a file.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// HostExecutor writes tables with DeviceWriter and runs mkfs with the
// host's tools.
type HostExecutor struct {
	DeviceWriter
	// Out receives the tools' output (nil: discarded).
	Out io.Writer
}

var (
	_ Executor  = HostExecutor{}
	_ Formatter = HostExecutor{}
)

// Run runs argv; its device (the last argument, except for a `cmd`) must
// exist.
func (h HostExecutor) Run(ctx context.Context, argv []string) error {
	if len(argv) == 0 {
		return errors.New("empty command")
	}
	if argv[0] != "sh" {
		dev := argv[len(argv)-1]
		if _, err := os.Stat(dev); err != nil {
			return fmt.Errorf("%s does not exist: %w", dev, err)
		}
	}
	return h.run(ctx, argv)
}

func (h HostExecutor) run(ctx context.Context, argv []string) error {
	var stderr bytes.Buffer
	c := exec.CommandContext(ctx, argv[0], argv[1:]...)
	out := h.Out
	if out == nil {
		out = io.Discard
	}
	c.Stdout = out
	c.Stderr = io.MultiWriter(out, &stderr)
	if err := c.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if i := strings.LastIndexByte(msg, '\n'); i >= 0 {
			msg = msg[i+1:]
		}
		if msg != "" {
			return fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, msg)
		}
		return fmt.Errorf("%s: %w", strings.Join(argv, " "), err)
	}
	return nil
}

// trace says on Out what is run for a partition of an image file, whose
// plan shows the mkfs command for a device node.
func (h HostExecutor) trace(format string, a ...any) {
	if h.Out != nil {
		fmt.Fprintf(h.Out, "+ "+format+"\n", a...)
	}
}

// Format makes the filesystem of a mkfs step: in place on a partition of
// an image file, else by running its argv.
func (h HostExecutor) Format(ctx context.Context, s Step) error {
	if s.Length == 0 || s.Disk == "" {
		return h.Run(ctx, s.Argv)
	}
	fi, err := os.Stat(s.Disk)
	if err != nil || !fi.Mode().IsRegular() {
		return h.Run(ctx, s.Argv)
	}
	if argv, ok := OffsetArgv(s); ok {
		h.trace("%s: %s", s.Device, strings.Join(argv, " "))
		return h.run(ctx, argv)
	}
	return h.formatScratch(ctx, s)
}

// OffsetArgv rewrites a mkfs step on a partition of an image file for a
// tool that writes at an offset into a file by itself (mke2fs); false for
// the others.
func OffsetArgv(s Step) ([]string, bool) {
	argv := s.Argv
	if len(argv) < 2 || argv[len(argv)-1] != s.Device || s.Length < 1024 {
		return nil, false
	}
	opts := append([]string(nil), argv[1:len(argv)-1]...)
	switch tool := filepath.Base(argv[0]); tool {
	case "mkfs.ext2", "mkfs.ext3", "mkfs.ext4", "mke2fs":
		off := "offset=" + strconv.FormatInt(s.Offset, 10)
		merged := false
		for i := 0; i < len(opts); i++ {
			switch {
			case opts[i] == "-E" && i+1 < len(opts):
				opts[i+1] += "," + off
				merged = true
				i++
			case strings.HasPrefix(opts[i], "-E") && len(opts[i]) > 2:
				opts[i] += "," + off
				merged = true
			}
		}
		if !merged {
			opts = append(opts, "-E", off)
		}
		out := append([]string{argv[0]}, opts...)
		return append(out, s.Disk, strconv.FormatInt(s.Length/1024, 10)+"k"), true
	}
	return nil, false
}

// formatScratch runs the step's mkfs on a sparse scratch file the size of
// the partition and copies the result into the image at its offset.
func (h HostExecutor) formatScratch(ctx context.Context, s Step) (err error) {
	f, err := os.CreateTemp(filepath.Dir(s.Disk), "."+filepath.Base(s.Disk)+".mkfs-")
	if err != nil {
		return fmt.Errorf("scratch file for %s: %w", s.Device, err)
	}
	scratch := f.Name()
	defer func() {
		f.Close()
		if rerr := os.Remove(scratch); rerr != nil && err == nil {
			err = fmt.Errorf("removing scratch file: %w", rerr)
		}
	}()
	if err := f.Truncate(s.Length); err != nil {
		return fmt.Errorf("sizing scratch file for %s: %w", s.Device, err)
	}
	argv := append([]string(nil), s.Argv...)
	switch tool := filepath.Base(argv[0]); {
	case tool == "sh":
		argv[len(argv)-1] = strings.ReplaceAll(argv[len(argv)-1], s.Device, scratch)
	case (tool == "mkfs.vfat" || tool == "mkfs.fat" || tool == "mkfs.msdos") && !slices.Contains(argv, "-h") && s.Offset%512 == 0:
		argv = append(argv[:len(argv)-1:len(argv)-1], "-h", strconv.FormatInt(s.Offset/512, 10), scratch)
	default:
		argv[len(argv)-1] = scratch
	}
	h.trace("%s: %s on a scratch file, copied in at offset %d", s.Device, strings.Join(argv, " "), s.Offset)
	if err := h.Run(ctx, argv); err != nil {
		return err
	}
	if fi, err := f.Stat(); err != nil || fi.Size() != s.Length {
		return fmt.Errorf("formatting %s: the tool changed the scratch file's size", s.Device)
	}
	img, err := os.OpenFile(s.Disk, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("opening %s: %w", s.Disk, err)
	}
	defer img.Close()
	if err := copySparse(img, s.Offset, f, s.Length); err != nil {
		return fmt.Errorf("copying the new filesystem into %s at offset %d: %w", s.Disk, s.Offset, err)
	}
	return img.Sync()
}

// copySparse zeroes dst's [off, off+n) and copies src's data extents into
// it, so that holes stay holes.
func copySparse(dst *os.File, off int64, src *os.File, n int64) error {
	if err := zeroRange(dst, off, n); err != nil {
		return err
	}
	buf := make([]byte, 1<<20)
	for pos := int64(0); pos < n; {
		start, end, err := nextData(src, pos, n)
		if err != nil {
			return err
		}
		if start >= n {
			break
		}
		if _, err := io.CopyBuffer(io.NewOffsetWriter(dst, off+start), io.NewSectionReader(src, start, end-start), buf); err != nil {
			return err
		}
		pos = end
	}
	return nil
}

// writeZeros writes n zero bytes at off: zeroRange's fallback.
func writeZeros(f *os.File, off, n int64) error {
	buf := make([]byte, 1<<20)
	for n > 0 {
		c := min(n, int64(len(buf)))
		if _, err := f.WriteAt(buf[:c], off); err != nil {
			return err
		}
		off, n = off+c, n-c
	}
	return nil
}
