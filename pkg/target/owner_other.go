//go:build !unix

package target

import "io/fs"

// fileOwner returns the uid and gid of fi, or -1, -1 when unknown.
func fileOwner(fi fs.FileInfo) (uid, gid int) { return -1, -1 }
