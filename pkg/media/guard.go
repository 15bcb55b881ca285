package media

import (
	"fmt"
	"io/fs"
)

// guardFS turns a panic in any call into the underlying reader into an
// ErrCorrupt error naming the device. With maxDir set (ISO9660), a path is
// only handed on when each directory it names is one, of at most maxDir
// bytes: go-diskfs reads whatever record a path names as a directory, in
// one allocation of the record's size.
type guardFS struct {
	fsys   fs.FS
	name   string
	maxDir int64
}

// checkDirs checks, when g.maxDir is set, that each of dirs is a directory
// of at most maxDir bytes, as the underlying reader's Stat sees it.
func (g *guardFS) checkDirs(op string, dirs ...string) error {
	if g.maxDir <= 0 {
		return nil
	}
	for _, d := range dirs {
		if d == "." {
			continue
		}
		fi, err := fs.Stat(g.fsys, d)
		if err != nil {
			return err
		}
		if !fi.IsDir() {
			return &fs.PathError{Op: op, Path: d, Err: fmt.Errorf("not a directory: %w", fs.ErrNotExist)}
		}
		if fi.Size() > g.maxDir {
			return &fs.PathError{Op: op, Path: d, Err: fmt.Errorf("%s: %w: directory of %d bytes, more than %d", g.name, ErrCorrupt, fi.Size(), g.maxDir)}
		}
	}
	return nil
}

// parents are the directories above name, outermost first.
func parents(name string) []string {
	var out []string
	for i, c := range name {
		if c == '/' {
			out = append(out, name[:i])
		}
	}
	return out
}

var (
	_ fs.ReadDirFS = (*guardFS)(nil)
	_ fs.StatFS    = (*guardFS)(nil)
)

// recovered sets *err from a panic, if there was one.
func recovered(name, op, path string, err *error) {
	if p := recover(); p != nil {
		*err = &fs.PathError{Op: op, Path: path, Err: fmt.Errorf("%s: %w: reader panicked: %v", name, ErrCorrupt, p)}
	}
}

func (g *guardFS) Open(name string) (f fs.File, err error) {
	defer recovered(g.name, "open", name, &err)
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	if err := g.checkDirs("open", parents(name)...); err != nil {
		return nil, err
	}
	f, err = g.fsys.Open(name)
	if err != nil {
		return nil, err
	}
	return &guardFile{f: f, fs: g, path: name}, nil
}

func (g *guardFS) ReadDir(name string) (ents []fs.DirEntry, err error) {
	defer recovered(g.name, "readdir", name, &err)
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrInvalid}
	}
	if err := g.checkDirs("readdir", append(parents(name), name)...); err != nil {
		return nil, err
	}
	return fs.ReadDir(g.fsys, name)
}

func (g *guardFS) Stat(name string) (fi fs.FileInfo, err error) {
	defer recovered(g.name, "stat", name, &err)
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrInvalid}
	}
	if err := g.checkDirs("stat", parents(name)...); err != nil {
		return nil, err
	}
	return fs.Stat(g.fsys, name)
}

// guardFile guards an open file's calls the same way.
type guardFile struct {
	f    fs.File
	fs   *guardFS
	path string
}

var _ fs.ReadDirFile = (*guardFile)(nil)

func (g *guardFile) Stat() (fi fs.FileInfo, err error) {
	defer recovered(g.fs.name, "stat", g.path, &err)
	return g.f.Stat()
}

func (g *guardFile) Read(p []byte) (n int, err error) {
	defer recovered(g.fs.name, "read", g.path, &err)
	return g.f.Read(p)
}

func (g *guardFile) Close() (err error) {
	defer recovered(g.fs.name, "close", g.path, &err)
	return g.f.Close()
}

func (g *guardFile) ReadDir(n int) (ents []fs.DirEntry, err error) {
	defer recovered(g.fs.name, "readdir", g.path, &err)
	if err := g.fs.checkDirs("readdir", g.path); err != nil {
		return nil, err
	}
	d, ok := g.f.(fs.ReadDirFile)
	if !ok {
		return nil, &fs.PathError{Op: "readdir", Path: g.path, Err: fmt.Errorf("not a directory")}
	}
	return d.ReadDir(n)
}
