//go:build linux

package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// here reads what guard needs, touching nothing.
func here() where {
	w := where{PID: os.Getpid(), Args: os.Args[1:]}
	var st unix.Statfs_t
	if err := unix.Statfs("/", &st); err == nil {
		w.RootFS = int64(st.Type)
	}
	w.OwnMntNS, _ = os.Readlink("/proc/self/ns/mnt")
	w.InitMntNS, _ = os.Readlink("/proc/1/ns/mnt")
	return w
}
