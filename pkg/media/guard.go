package media

import (
	"fmt"
	"io/fs"
)

// guardFS turns a panic in any call into the underlying reader into an
// ErrCorrupt error naming the device.
type guardFS struct {
	fsys fs.FS
	name string
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
	f, err = g.fsys.Open(name)
	if err != nil {
		return nil, err
	}
	return &guardFile{f: f, name: g.name, path: name}, nil
}

func (g *guardFS) ReadDir(name string) (ents []fs.DirEntry, err error) {
	defer recovered(g.name, "readdir", name, &err)
	return fs.ReadDir(g.fsys, name)
}

func (g *guardFS) Stat(name string) (fi fs.FileInfo, err error) {
	defer recovered(g.name, "stat", name, &err)
	return fs.Stat(g.fsys, name)
}

// guardFile guards an open file's calls the same way.
type guardFile struct {
	f          fs.File
	name, path string
}

var _ fs.ReadDirFile = (*guardFile)(nil)

func (g *guardFile) Stat() (fi fs.FileInfo, err error) {
	defer recovered(g.name, "stat", g.path, &err)
	return g.f.Stat()
}

func (g *guardFile) Read(p []byte) (n int, err error) {
	defer recovered(g.name, "read", g.path, &err)
	return g.f.Read(p)
}

func (g *guardFile) Close() (err error) {
	defer recovered(g.name, "close", g.path, &err)
	return g.f.Close()
}

func (g *guardFile) ReadDir(n int) (ents []fs.DirEntry, err error) {
	defer recovered(g.name, "readdir", g.path, &err)
	d, ok := g.f.(fs.ReadDirFile)
	if !ok {
		return nil, &fs.PathError{Op: "readdir", Path: g.path, Err: fmt.Errorf("not a directory")}
	}
	return d.ReadDir(n)
}
