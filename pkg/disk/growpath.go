package disk

import "fmt"

// GrowPath opens path (a block device or an image file), grows partition
// partNum, and after a real change on a block device tells the kernel the
// partition's new size (TellKernel), so that a filesystem resize that
// follows sees it. The block device is flock()ed meanwhile, as growpart
// does against udev (https://systemd.io/BLOCK_DEVICE_LOCKING/).
func GrowPath(path string, partNum int, o GrowOptions) (Result, error) {
	d, err := Open(path, !o.DryRun)
	if err != nil {
		return Result{}, fmt.Errorf("growing %s partition %d: %w", path, partNum, err)
	}
	defer d.Close()
	if d.IsBlockDevice() && !o.DryRun {
		if err := lockDevice(d); err != nil {
			return Result{}, fmt.Errorf("growing %s partition %d: locking: %w", path, partNum, err)
		}
	}
	if o.Name == "" {
		o.Name = path
	}
	r, err := Grow(d, partNum, o)
	if err != nil || !r.Changed || o.DryRun || o.NoKernelUpdate {
		return r, err
	}
	ss := int64(r.SectorSize)
	if err := TellKernel(d, partNum, r.OldStart*ss, r.NewSize()*ss); err != nil {
		return r, err
	}
	return r, nil
}
