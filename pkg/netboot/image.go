package netboot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
)

// HeadSize is the part of a disk image written last: the MBR, the GPT
// header and its partition entries, and the usual 1 MiB alignment gap
// before the first partition.
const HeadSize = 1 << 20

// Errors callers branch on.
var (
	// ErrNotEmpty: the target disk has data and overwriting was not asked.
	ErrNotEmpty = errors.New("target disk is not empty")
	// ErrTooLarge: the image does not fit the target.
	ErrTooLarge = errors.New("image is larger than the target disk")
)

// Disk is a target disk (an *os.File on a block device, or a file in
// tests).
type Disk interface {
	io.ReaderAt
	io.WriterAt
	Sync() error
}

// Empty reports whether the disk's first and last HeadSize bytes are all
// zero: no partition table (MBR, GPT and its backup) and no filesystem
// superblock there. The reason says where data was found.
func Empty(d io.ReaderAt, size int64) (bool, string, error) {
	buf := make([]byte, HeadSize)
	for _, off := range []int64{0, max(size-HeadSize, 0)} {
		n, err := d.ReadAt(buf[:min(HeadSize, size-off)], off)
		if err != nil && !errors.Is(err, io.EOF) {
			return false, "", fmt.Errorf("reading the target at %d: %w", off, err)
		}
		if i := bytes.IndexFunc(buf[:n], func(r rune) bool { return r != 0 }); i >= 0 {
			return false, fmt.Sprintf("data at byte %d", off+int64(i)), nil
		}
	}
	return true, "", nil
}

// ImageWriter writes an image's bytes sequentially to a disk, holding the
// first HeadSize bytes in memory until Commit.
type ImageWriter struct {
	disk Disk
	size int64
	head []byte
	off  int64
}

// NewImageWriter writes to d, whose size is size bytes.
func NewImageWriter(d Disk, size int64) *ImageWriter {
	return &ImageWriter{disk: d, size: size}
}

// Write implements io.Writer.
func (w *ImageWriter) Write(p []byte) (int, error) {
	if w.off+int64(len(p)) > w.size {
		return 0, fmt.Errorf("%w (%d bytes)", ErrTooLarge, w.size)
	}
	n := 0
	if w.off < HeadSize {
		k := min(int64(len(p)), HeadSize-w.off)
		w.head = append(w.head, p[:k]...)
		n += int(k)
		w.off += k
		p = p[k:]
	}
	if len(p) > 0 {
		m, err := w.disk.WriteAt(p, w.off)
		n += m
		w.off += int64(m)
		if err != nil {
			return n, fmt.Errorf("writing the target at %d: %w", w.off, err)
		}
	}
	return n, nil
}

// Written is the image size so far.
func (w *ImageWriter) Written() int64 { return w.off }

// Commit syncs the body, then writes and syncs the head.
func (w *ImageWriter) Commit() error {
	if err := w.disk.Sync(); err != nil {
		return fmt.Errorf("syncing the target: %w", err)
	}
	if _, err := w.disk.WriteAt(w.head, 0); err != nil {
		return fmt.Errorf("writing the partition table: %w", err)
	}
	if err := w.disk.Sync(); err != nil {
		return fmt.Errorf("syncing the target: %w", err)
	}
	return nil
}

// Abort zeroes the head so the disk does not look bootable.
func (w *ImageWriter) Abort() error {
	return zeroAt(w.disk, 0, min(HeadSize, w.size))
}

func zeroAt(d Disk, off, n int64) error {
	if n <= 0 {
		return nil
	}
	if _, err := d.WriteAt(make([]byte, n), off); err != nil {
		return fmt.Errorf("zeroing %d bytes at %d: %w", n, off, err)
	}
	return d.Sync()
}

// Install writes one image to one disk.
type Install struct {
	Fetcher *Fetcher
	Image   bootenv.Image
	// Disk and Size are the opened target.
	Disk Disk
	Size int64
	// StageDir, when set, is a RAM directory (tmpfs) the compressed image
	// is downloaded into and verified before anything touches the disk, if
	// it fits in StageMax bytes; else the image streams to the disk with
	// the head held back.
	StageDir string
	StageMax int64
	// Out receives console messages.
	Out io.Writer
}

// Result says what Install did.
type Result struct {
	Bytes    int64 // image bytes written (decompressed)
	Download int64 // bytes downloaded
	SHA256   string
	Staged   bool // verified in RAM before the disk was touched
}

// errTooBigToStage sends an image past the staging path.
var errTooBigToStage = errors.New("too big to stage in RAM")

// Run checks the target, fetches, verifies and writes.
func (in *Install) Run(ctx context.Context) (Result, error) {
	var res Result
	empty, why, err := Empty(in.Disk, in.Size)
	if err != nil {
		return res, err
	}
	if !empty && !in.Image.Overwrite {
		return res, fmt.Errorf("%s (%s): %w; set cloudroot.image-overwrite to replace it", in.Image.Target, why, ErrNotEmpty)
	}
	want, err := in.Fetcher.Expected(ctx, in.Image.URL, in.Image.Checksum)
	if err != nil {
		return res, err
	}
	if in.StageDir != "" {
		res, err = in.staged(ctx, want, !empty)
		if !errors.Is(err, errTooBigToStage) {
			return res, err
		}
		fmt.Fprintf(in.Out, "cloudroot-init: image is larger than the RAM staging limit (%s MiB): streaming it to %s\n", mib(in.StageMax), in.Image.Target)
	}
	return in.streamed(ctx, want, !empty)
}

// wipe zeroes a non-empty target's head and tail before it is written, so
// an old partition table never describes half-written data.
func (in *Install) wipe() error {
	if err := zeroAt(in.Disk, 0, min(HeadSize, in.Size)); err != nil {
		return err
	}
	return zeroAt(in.Disk, max(in.Size-HeadSize, 0), min(HeadSize, in.Size))
}

func (in *Install) staged(ctx context.Context, want string, wipe bool) (Result, error) {
	res := Result{Staged: true}
	f, err := os.CreateTemp(in.StageDir, "image-*")
	if err != nil {
		return res, fmt.Errorf("staging the image: %w", err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	v := NewVerifier(want)
	res.Download, err = in.Fetcher.Copy(ctx, in.Image.URL, io.MultiWriter(f, v), func(size int64) error {
		if size < 0 || size > in.StageMax {
			return errTooBigToStage
		}
		return nil
	})
	if err != nil {
		return res, err
	}
	res.SHA256 = v.Sum()
	if err := v.Check(); err != nil {
		return res, fmt.Errorf("%s: %w; the disk was not touched", filepath.Base(in.Image.URL), err)
	}
	fmt.Fprintf(in.Out, "cloudroot-init: image checksum ok (sha256 %s)\n", res.SHA256)
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return res, err
	}
	if wipe {
		if err := in.wipe(); err != nil {
			return res, err
		}
	}
	w := NewImageWriter(in.Disk, in.Size)
	res.Bytes, err = in.write(f, w)
	return res, err
}

// write decompresses r into w and commits, or aborts on failure.
func (in *Install) write(r io.Reader, w *ImageWriter) (int64, error) {
	err := func() error {
		zr, err := Decompress(r, in.Image.Compression)
		if err != nil {
			return err
		}
		defer zr.Close()
		if _, err := io.Copy(w, zr); err != nil {
			return fmt.Errorf("writing the image: %w", err)
		}
		return nil
	}()
	if err != nil {
		return w.Written(), errors.Join(err, w.Abort())
	}
	return w.Written(), w.Commit()
}

func (in *Install) streamed(ctx context.Context, want string, wipe bool) (Result, error) {
	var res Result
	if wipe {
		if err := in.wipe(); err != nil {
			return res, err
		}
	}
	v := NewVerifier(want)
	pr, pw := io.Pipe()
	type dl struct {
		n   int64
		err error
	}
	done := make(chan dl, 1)
	go func() {
		n, err := in.Fetcher.Copy(ctx, in.Image.URL, io.MultiWriter(v, pw), nil)
		pw.CloseWithError(err)
		done <- dl{n, err}
	}()
	w := NewImageWriter(in.Disk, in.Size)
	werr := func() error {
		zr, err := Decompress(pr, in.Image.Compression)
		if err != nil {
			return err
		}
		defer zr.Close()
		if _, err := io.Copy(w, zr); err != nil {
			return fmt.Errorf("writing the image: %w", err)
		}
		// Drain what the decompressor left (trailing padding) so the hash
		// covers the whole download.
		_, err = io.Copy(io.Discard, pr)
		return err
	}()
	pr.CloseWithError(errors.New("image writer stopped"))
	d := <-done
	res.Download, res.Bytes, res.SHA256 = d.n, w.Written(), v.Sum()
	err := errors.Join(werr, d.err)
	if err == nil {
		if err = v.Check(); err == nil {
			fmt.Fprintf(in.Out, "cloudroot-init: image checksum ok (sha256 %s)\n", res.SHA256)
			return res, w.Commit()
		}
	}
	return res, errors.Join(fmt.Errorf("%s: %w; the partition table was not written", filepath.Base(in.Image.URL), err), w.Abort())
}
