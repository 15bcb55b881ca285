package disk

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
)

// Executor carries out a plan's destructive steps.
type Executor interface {
	// WriteTable replaces the partition table of the disk at path and
	// makes its partition nodes available.
	WriteTable(ctx context.Context, path string, t NewTable) error
	// Run runs a mkfs command.
	Run(ctx context.Context, argv []string) error
}

// Formatter is implemented by executors that format from the whole mkfs
// step (HostExecutor: a partition of an image file has no device node to
// give mkfs). Apply prefers it to Run.
type Formatter interface {
	Format(ctx context.Context, s Step) error
}

// Apply runs plan's steps in order, logging each destructive step with the
// device and its old and new layout. A failed partitioning skips the
// filesystems planned on that disk's partitions; failures are joined.
func Apply(ctx context.Context, plan Plan, ex Executor, log *slog.Logger) error {
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	var errs []error
	failed := map[string]bool{}
	for _, s := range plan.Steps {
		switch s.Action {
		case "partition":
			log.Info("partitioning disk", "device", s.Device, "config", s.Config, "old", s.Old, "new", s.New)
			if err := ex.WriteTable(ctx, s.Device, *s.Table); err != nil {
				failed[s.Device] = true
				for i := range s.Table.Partitions {
					failed[PartitionPath(s.Device, i+1)] = true
				}
				errs = append(errs, fmt.Errorf("%s: partitioning %s: %w", s.Config, s.Device, err))
			}
		case "mkfs":
			if failed[s.Device] {
				errs = append(errs, fmt.Errorf("%s: not formatting %s: its disk failed to partition", s.Config, s.Device))
				continue
			}
			log.Info("creating filesystem", "device", s.Device, "config", s.Config, "old", s.Old, "argv", s.Argv)
			var err error
			if f, ok := ex.(Formatter); ok {
				err = f.Format(ctx, s)
			} else {
				err = ex.Run(ctx, s.Argv)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: formatting %s: %w", s.Config, s.Device, err))
			}
		default:
			if s.Warn {
				log.Warn("skipping", "device", s.Device, "config", s.Config, "reason", s.Reason)
			} else {
				log.Info("skipping", "device", s.Device, "config", s.Config, "reason", s.Reason)
			}
		}
	}
	return errors.Join(errs...)
}

// ProbeDevice reads what the planner needs from a disk or image: its
// table, a filesystem on the whole device and one on each partition.
// Partition paths follow PartitionPath.
func ProbeDevice(path string) (DeviceInfo, error) {
	d, err := Open(path, false)
	if err != nil {
		return DeviceInfo{}, err
	}
	defer d.Close()
	return probeDevice(d, path)
}

func probeDevice(d Device, path string) (DeviceInfo, error) {
	ss, _ := sectorSizeOf(d, 0)
	info := DeviceInfo{Path: path, Size: d.Size(), SectorSize: ss}
	hint := 0
	if isBlock(d) {
		hint = ss
	}
	tab, err := bootenv.ProbeTable(d, d.Size(), hint)
	switch {
	case err == nil:
		info.PTType = tab.Type
		info.SectorSize = tab.SectorSize
		for _, p := range tab.Partitions {
			pi := PartInfo{Number: p.Number, Path: PartitionPath(path, p.Number), Start: p.FirstLBA, Size: p.LastLBA - p.FirstLBA + 1, Type: p.Type}
			if p.Size > 0 {
				if fs, err := bootenv.Probe(io.NewSectionReader(d, p.Start, p.Size), p.Size); err == nil {
					pi.FSType, pi.Label = fs.Type, fs.Label
				}
			}
			info.Partitions = append(info.Partitions, pi)
		}
	case !errors.Is(err, bootenv.ErrNoTable):
		return info, fmt.Errorf("probing %s: %w", path, err)
	}
	if fs, err := bootenv.Probe(d, d.Size()); err == nil {
		info.FSType, info.Label = fs.Type, fs.Label
	}
	return info, nil
}

// ProbeDeviceOn is ProbeDevice on an open device named path.
func ProbeDeviceOn(d Device, path string) (DeviceInfo, error) { return probeDevice(d, path) }
