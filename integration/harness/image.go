package harness

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
)

// Image is an ext4 filesystem inside a disk image, read and written with
// debugfs (no root, no loop devices, no mount).
type Image struct {
	// Path is the disk image file.
	Path string
	// Offset is the filesystem's byte offset in Path (partition 1 of a GPT
	// or MBR disk; 0 for a bare filesystem).
	Offset int64
}

// FileInfo is what debugfs stat says about an inode.
type FileInfo struct {
	// Mode holds the permission bits, the type bits (fs.ModeDir,
	// fs.ModeSymlink...) and setuid/setgid/sticky.
	Mode     fs.FileMode
	UID, GID int
	Size     int64
	// LinkTarget is a symlink's target, verbatim.
	LinkTarget string
}

// OpenImage finds the filesystem in a disk image: partition 1 when the image
// has a partition table, else the whole image.
func OpenImage(p string) (*Image, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("opening image: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("opening image: %w", err)
	}
	if HaveTools("debugfs") != nil {
		return nil, errors.New("opening image: debugfs (e2fsprogs) is not installed")
	}
	t, err := bootenv.ProbeTable(f, fi.Size(), 0)
	if err != nil {
		if errors.Is(err, bootenv.ErrNoTable) {
			return &Image{Path: p}, nil
		}
		return nil, fmt.Errorf("opening image %s: %w", p, err)
	}
	part, ok := t.Partition(1)
	if !ok {
		return nil, fmt.Errorf("opening image %s: the %s table has no partition 1", p, t.Type)
	}
	return &Image{Path: p, Offset: part.Start}, nil
}

func (im *Image) spec() string {
	if im.Offset == 0 {
		return im.Path
	}
	return fmt.Sprintf("%s?offset=%d", im.Path, im.Offset)
}

// quote makes a path one debugfs argument.
func quote(p string) string {
	if strings.ContainsAny(p, " \t\"") {
		return `"` + strings.ReplaceAll(p, `"`, `\"`) + `"`
	}
	return p
}

const debugfsTimeout = 30 * time.Second

// debugfs runs one read-only request and returns its stdout. A "File not
// found" complaint becomes an error wrapping fs.ErrNotExist.
func (im *Image) debugfs(p, req string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), debugfsTimeout)
	defer cancel()
	out, errb, err := runTool(ctx, nil, nil, "debugfs", "-R", req, im.spec())
	if err != nil {
		return nil, fmt.Errorf("debugfs %q on %s: %w", req, im.Path, err)
	}
	if msg := debugfsErrors(errb); msg != "" {
		if strings.Contains(msg, "File not found") {
			return nil, &fs.PathError{Op: strings.Fields(req)[0], Path: p, Err: fs.ErrNotExist}
		}
		return nil, fmt.Errorf("debugfs %q on %s: %s", req, im.Path, msg)
	}
	return out, nil
}

// debugfsErrors is debugfs' stderr without its version banner.
func debugfsErrors(stderr []byte) string {
	var lines []string
	for _, l := range strings.Split(string(stderr), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "debugfs ") && strings.Contains(l, "(") && !strings.Contains(l, ":") {
			continue
		}
		lines = append(lines, l)
	}
	return strings.Join(lines, "; ")
}

// ReadFile returns a file's content. Symlinks are followed inside the
// image (so /var/lib/cloud/instance/... works).
func (im *Image) ReadFile(p string) ([]byte, error) {
	for range 16 {
		fi, err := im.Stat(p)
		if err != nil {
			return nil, err
		}
		switch {
		case fi.Mode.IsDir():
			return nil, &fs.PathError{Op: "read", Path: p, Err: errors.New("is a directory")}
		case fi.Mode&fs.ModeSymlink != 0:
			t := fi.LinkTarget
			if !path.IsAbs(t) {
				t = path.Join(path.Dir(p), t)
			}
			p = t
			continue
		}
		return im.debugfs(p, "cat "+quote(p))
	}
	return nil, &fs.PathError{Op: "read", Path: p, Err: errors.New("too many levels of symbolic links")}
}

// Exists reports whether p names an inode.
func (im *Image) Exists(p string) bool {
	_, err := im.Stat(p)
	return err == nil
}

var (
	reType  = regexp.MustCompile(`Type:\s+(.+?)\s+Mode:\s+([0-7]+)`)
	reOwner = regexp.MustCompile(`User:\s+(\d+)\s+Group:\s+(\d+)`)
	reSize  = regexp.MustCompile(`\bSize:\s+(\d+)`)
	reFast  = regexp.MustCompile(`Fast link dest:\s+"(.*)"`)
)

// Stat describes p without following a final symlink.
func (im *Image) Stat(p string) (FileInfo, error) {
	out, err := im.debugfs(p, "stat "+quote(p))
	if err != nil {
		return FileInfo{}, err
	}
	fi, fast, err := parseStat(string(out))
	if err != nil {
		return FileInfo{}, fmt.Errorf("stat %s in %s: %w", p, im.Path, err)
	}
	if fi.Mode&fs.ModeSymlink != 0 && !fast {
		// A slow symlink keeps its target in a data block; cat prints it.
		b, err := im.debugfs(p, "cat "+quote(p))
		if err != nil {
			return FileInfo{}, err
		}
		fi.LinkTarget = string(b)
	}
	return fi, nil
}

// parseStat reads debugfs' stat output; fast reports a "Fast link dest".
func parseStat(out string) (fi FileInfo, fast bool, err error) {
	m := reType.FindStringSubmatch(out)
	if m == nil {
		return fi, false, fmt.Errorf("unexpected debugfs stat output: %q", firstLine(out))
	}
	perm, err := strconv.ParseUint(m[2], 8, 32)
	if err != nil {
		return fi, false, fmt.Errorf("mode %q: %w", m[2], err)
	}
	fi.Mode = fs.FileMode(perm & 0o777)
	if perm&0o4000 != 0 {
		fi.Mode |= fs.ModeSetuid
	}
	if perm&0o2000 != 0 {
		fi.Mode |= fs.ModeSetgid
	}
	if perm&0o1000 != 0 {
		fi.Mode |= fs.ModeSticky
	}
	switch m[1] {
	case "regular":
	case "directory":
		fi.Mode |= fs.ModeDir
	case "symlink":
		fi.Mode |= fs.ModeSymlink
	case "FIFO":
		fi.Mode |= fs.ModeNamedPipe
	case "socket":
		fi.Mode |= fs.ModeSocket
	case "character special":
		fi.Mode |= fs.ModeDevice | fs.ModeCharDevice
	case "block special":
		fi.Mode |= fs.ModeDevice
	default:
		fi.Mode |= fs.ModeIrregular
	}
	if o := reOwner.FindStringSubmatch(out); o != nil {
		fi.UID, _ = strconv.Atoi(o[1])
		fi.GID, _ = strconv.Atoi(o[2])
	}
	if s := reSize.FindStringSubmatch(out); s != nil {
		fi.Size, _ = strconv.ParseInt(s[1], 10, 64)
	}
	if f := reFast.FindStringSubmatch(out); f != nil {
		fi.LinkTarget = f[1]
		fast = true
	}
	return fi, fast, nil
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// ReadDir lists a directory's entry names, sorted, without "." and "..".
func (im *Image) ReadDir(p string) ([]string, error) {
	fi, err := im.Stat(p)
	if err != nil {
		return nil, err
	}
	if !fi.Mode.IsDir() {
		return nil, &fs.PathError{Op: "readdir", Path: p, Err: errors.New("not a directory")}
	}
	out, err := im.debugfs(p, "ls -p "+quote(p))
	if err != nil {
		return nil, err
	}
	return parseLsP(string(out)), nil
}

// parseLsP reads `ls -p` lines: /inode/mode/uid/gid/name/size/.
func parseLsP(out string) []string {
	var names []string
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(l, "/") {
			continue
		}
		f := strings.Split(l, "/")
		// "", ino, mode, uid, gid, name, size, ""
		if len(f) < 7 || f[1] == "0" {
			continue
		}
		name := f[5]
		if name == "." || name == ".." || name == "" {
			continue
		}
		names = append(names, name)
	}
	return names
}

// WriteFile creates or replaces a regular file, owned by root with mode
// 0644. Its parent directory must exist (see MkdirAll).
func (im *Image) WriteFile(p string, data []byte) error {
	p = path.Clean(p)
	tmp, err := os.CreateTemp("", "harness-write-")
	if err != nil {
		return fmt.Errorf("writing %s into %s: %w", p, im.Path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s into %s: %w", p, im.Path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s into %s: %w", p, im.Path, err)
	}
	var cmds []string
	if im.Exists(p) {
		cmds = append(cmds, "rm "+quote(p))
	}
	cmds = append(cmds,
		"write "+quote(tmp.Name())+" "+quote(p),
		"sif "+quote(p)+" mode 0100644",
		"sif "+quote(p)+" uid 0",
		"sif "+quote(p)+" gid 0",
	)
	if err := im.write(cmds); err != nil {
		return fmt.Errorf("writing %s into %s: %w", p, im.Path, err)
	}
	return nil
}

// Mkdir creates one directory (mode 0755, root-owned); its parent must exist.
func (im *Image) Mkdir(p string) error {
	if err := im.write([]string{"mkdir " + quote(path.Clean(p))}); err != nil {
		return fmt.Errorf("mkdir %s in %s: %w", p, im.Path, err)
	}
	return nil
}

// MkdirAll creates p and its missing parents.
func (im *Image) MkdirAll(p string) error {
	p = path.Clean("/" + p)
	if p == "/" {
		return nil
	}
	if fi, err := im.Stat(p); err == nil {
		if !fi.Mode.IsDir() {
			return fmt.Errorf("mkdir %s in %s: exists and is not a directory", p, im.Path)
		}
		return nil
	}
	if err := im.MkdirAll(path.Dir(p)); err != nil {
		return err
	}
	return im.Mkdir(p)
}

// write runs debugfs -w with cmds on stdin; any complaint is an error.
func (im *Image) write(cmds []string) error {
	ctx, cancel := context.WithTimeout(context.Background(), debugfsTimeout)
	defer cancel()
	in := []byte(strings.Join(cmds, "\n") + "\n")
	_, errb, err := runTool(ctx, in, nil, "debugfs", "-w", "-f", "-", im.spec())
	if err != nil {
		return err
	}
	if msg := debugfsErrors(errb); msg != "" {
		return errors.New(msg)
	}
	return nil
}

// ReadString is ReadFile as a string ("" and the error when it fails).
func (im *Image) ReadString(p string) (string, error) {
	b, err := im.ReadFile(p)
	return string(b), err
}

// Lines splits a file into its non-empty lines.
func Lines(b []byte) []string {
	var out []string
	for _, l := range bytes.Split(b, []byte("\n")) {
		if s := strings.TrimRight(string(l), "\r"); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Chmod sets the permission bits of an existing regular file or directory.
func (im *Image) Chmod(p string, perm fs.FileMode) error {
	fi, err := im.Stat(p)
	if err != nil {
		return err
	}
	typ := uint32(0o100000)
	if fi.Mode.IsDir() {
		typ = 0o040000
	}
	mode := fmt.Sprintf("0%o", typ|uint32(perm.Perm()))
	if err := im.write([]string{"sif " + quote(path.Clean(p)) + " mode " + mode}); err != nil {
		return fmt.Errorf("chmod %s in %s: %w", p, im.Path, err)
	}
	return nil
}
