package disk

import (
	"context"
	"fmt"
	"os"
	"time"
)

// DeviceWriter is the table-writing half of an Executor for real block
// devices and image files: it writes the table, tells the kernel, and
// waits (bounded by NodeWait) for the partition nodes to appear. A node
// the kernel knows (it is in /sys/class/block) but nothing created —
// no udev, /dev not a devtmpfs — is created with mknod.
type DeviceWriter struct {
	// NodeWait bounds the wait for partition device nodes (0: 5s).
	NodeWait time.Duration
}

// WriteTable replaces the table of the disk at path.
func (w DeviceWriter) WriteTable(ctx context.Context, path string, t NewTable) error {
	d, err := Open(path, true)
	if err != nil {
		return err
	}
	defer d.Close()
	if d.IsBlockDevice() {
		if err := lockDevice(d); err != nil {
			return fmt.Errorf("locking %s: %w", path, err)
		}
	}
	if err := WriteTable(d, t, nil); err != nil {
		return fmt.Errorf("writing a %s table to %s: %w", t.Type, path, err)
	}
	if !d.IsBlockDevice() {
		return nil
	}
	if err := AnnounceTable(d, t); err != nil {
		return err
	}
	wait := w.NodeWait
	if wait == 0 {
		wait = 5 * time.Second
	}
	deadline := time.Now().Add(wait)
	for i := range t.Partitions {
		p := PartitionPath(path, i+1)
		for {
			if _, err := os.Stat(p); err == nil {
				break
			}
			if made, err := makePartitionNode(p); err != nil {
				return err
			} else if made {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("partition node %s did not appear within %s", p, wait)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	return nil
}
