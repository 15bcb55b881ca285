//go:build !linux

package target

import "syscall"

func syncFS(dir string) error {
	syscall.Sync()
	return nil
}
