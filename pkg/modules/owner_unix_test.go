//go:build unix

package modules

import (
	"io/fs"
	"syscall"
)

func ownerOf(fi fs.FileInfo) (int, int) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return -1, -1
	}
	return int(st.Uid), int(st.Gid)
}
