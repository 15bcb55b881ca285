package main

import (
	"os"
	"syscall"
)

// allocated is the space a file takes on disk (sparse images take less).
func allocated(fi os.FileInfo) (int64, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return st.Blocks * 512, true
}
