package disk

import "golang.org/x/sys/unix"

// FreeBytes is the space available in the filesystem holding path
// (f_frsize * f_bfree, as cloud-init's swap sizing reads it).
func FreeBytes(path string) (int64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return 0, err
	}
	return int64(st.Frsize) * int64(st.Bfree), nil
}
