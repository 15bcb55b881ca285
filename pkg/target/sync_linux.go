package target

import (
	"fmt"

	"golang.org/x/sys/unix"
)

func syncFS(dir string) error {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("target: sync %s: %w", dir, err)
	}
	defer unix.Close(fd)
	if err := unix.Syncfs(fd); err != nil {
		return fmt.Errorf("target: syncfs %s: %w", dir, err)
	}
	return nil
}
