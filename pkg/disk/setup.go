package disk

// disk_setup and fs_setup, planned purely: Plan turns the config and what
// the disks hold into steps, and never plans to touch
//   - a device or partition that is mounted (InUse), whatever the config;
//   - a disk holding partitions or a filesystem, unless its disk_setup says
//     overwrite: true;
//   - a partition or disk holding a filesystem, unless its fs_setup says
//     overwrite: true, or replace_fs names the filesystem found there.
// A disk whose table already has the wanted type and partition types is
// left alone (cloud-init's check_partition_layout), as is a filesystem that
// already has the wanted type and label.
//
// Layouts follow cloud-init: `layout: true` is one partition over the disk,
// a list gives each partition a percentage of the disk (optionally
// [percent, type]); the last partition takes the rest. cloudroot starts
// every partition on a 1 MiB boundary and rounds sizes down to 1 MiB, the
// alignment sfdisk and sgdisk would have applied.

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// DeviceInfo is what the planner knows of a disk.
type DeviceInfo struct {
	Path       string `json:"path"`
	Size       int64  `json:"size"` // bytes
	SectorSize int    `json:"sectorSize,omitempty"`
	PTType     string `json:"ptType,omitempty"` // "gpt", "dos" or ""
	FSType     string `json:"fsType,omitempty"` // a filesystem on the whole disk
	Label      string `json:"label,omitempty"`
	// InUse says where the disk itself is mounted or used ("" = not).
	InUse      string     `json:"inUse,omitempty"`
	Partitions []PartInfo `json:"partitions,omitempty"`
}

// PartInfo is one existing partition.
type PartInfo struct {
	Number int    `json:"number"`
	Path   string `json:"path"`
	Start  int64  `json:"start"` // sectors
	Size   int64  `json:"size"`  // sectors
	Type   string `json:"type,omitempty"`
	FSType string `json:"fsType,omitempty"`
	Label  string `json:"label,omitempty"`
	InUse  string `json:"inUse,omitempty"`
}

// PartitionPath names partition n of disk as the kernel does: "p" between
// a name ending in a digit and the number (nvme0n1p1, loop0p1).
func PartitionPath(disk string, n int) string {
	if disk != "" && disk[len(disk)-1] >= '0' && disk[len(disk)-1] <= '9' {
		return disk + "p" + strconv.Itoa(n)
	}
	return disk + strconv.Itoa(n)
}

func (d DeviceInfo) describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d bytes", d.Path, d.Size)
	if d.PTType != "" {
		fmt.Fprintf(&b, ", %s table", d.PTType)
	}
	if d.FSType != "" {
		fmt.Fprintf(&b, ", %s filesystem %q", d.FSType, d.Label)
	}
	for _, p := range d.Partitions {
		fmt.Fprintf(&b, "; %d: start=%d size=%d type=%s", p.Number, p.Start, p.Size, p.Type)
		if p.FSType != "" {
			fmt.Fprintf(&b, " %s %q", p.FSType, p.Label)
		}
	}
	if d.PTType == "" && d.FSType == "" {
		b.WriteString(", empty")
	}
	return b.String()
}

func (d DeviceInfo) sectorSize() int {
	if d.SectorSize == 0 {
		return DefaultSectorSize
	}
	return d.SectorSize
}

// LayoutPart is one item of a disk_setup layout.
type LayoutPart struct {
	Percent int    `json:"percent"`
	Type    string `json:"type,omitempty"` // "" = Linux
}

// DiskSpec is one disk_setup entry.
type DiskSpec struct {
	TableType string       `json:"tableType"` // "mbr" (default) or "gpt"
	Layout    []LayoutPart `json:"layout"`    // nil: don't partition
	Overwrite bool         `json:"overwrite,omitempty"`
}

// FSSpec is one fs_setup entry.
type FSSpec struct {
	Label      string   `json:"label,omitempty"`
	Filesystem string   `json:"filesystem"`
	Device     string   `json:"device"`
	Partition  string   `json:"partition,omitempty"` // auto, any, none or N
	Overwrite  bool     `json:"overwrite,omitempty"`
	ReplaceFS  string   `json:"replaceFS,omitempty"`
	ExtraOpts  []string `json:"extraOpts,omitempty"`
	Cmd        string   `json:"cmd,omitempty"`
}

// SetupConfig is device_aliases, disk_setup and fs_setup.
type SetupConfig struct {
	Disks       map[string]DiskSpec
	Filesystems []FSSpec
	// Names resolves device names (aliases, ephemeral0...).
	Names DeviceEnv
}

// Step is one planned action.
type Step struct {
	Action string `json:"action"` // "partition", "mkfs" or "skip"
	// Config is the config entry the step comes from.
	Config string    `json:"config"`
	Device string    `json:"device,omitempty"`
	Reason string    `json:"reason,omitempty"`
	Old    string    `json:"old,omitempty"`
	New    string    `json:"new,omitempty"`
	Table  *NewTable `json:"table,omitempty"`
	Argv   []string  `json:"argv,omitempty"`
	// Disk, Offset and Length place a mkfs step's target on its disk:
	// the whole disk (Length 0) or the partition at Offset for Length
	// bytes. An executor formatting a partition of an image file, which
	// has no device node, works from these.
	Disk   string `json:"disk,omitempty"`
	Offset int64  `json:"offset,omitempty"`
	Length int64  `json:"length,omitempty"`
	// Warn marks a skip that cloud-init reports as a WARNING: it would have
	// tried and failed (a missing device or partition, a mkfs refused on a
	// mounted device or on another filesystem), where a deliberate skip
	// (already formatted, data kept because overwrite is false, layout
	// false) is only logged.
	Warn bool `json:"warn,omitempty"`
}

// ReasonNotFound is the reason of a skip whose device name (Step.Device)
// resolves to no disk the planner was given.
const ReasonNotFound = "device not found"

// Plan is the ordered steps: partitioning first, then filesystems.
type Plan struct {
	Steps []Step `json:"steps"`
}

// String renders the plan for humans, one step a line.
func (p Plan) String() string {
	var b strings.Builder
	for _, s := range p.Steps {
		switch s.Action {
		case "partition":
			fmt.Fprintf(&b, "partition %s (%s)\n    old: %s\n    new: %s\n", s.Device, s.Config, s.Old, s.New)
		case "mkfs":
			fmt.Fprintf(&b, "mkfs %s (%s): %s\n    old: %s\n", s.Device, s.Config, strings.Join(s.Argv, " "), s.Old)
		default:
			fmt.Fprintf(&b, "skip %s (%s): %s\n", s.Device, s.Config, s.Reason)
		}
	}
	return b.String()
}

// resolveDevice maps a disk_setup/fs_setup device name to a path.
func (n DeviceEnv) resolveDevice(name string) (string, bool) {
	base := name
	if a, ok := n.Aliases[base]; ok {
		base = a
	}
	if IsMetaDeviceName(base) {
		if n.Meta == nil {
			return "", false
		}
		m := n.Meta(base)
		if m == "" {
			return "", false
		}
		base = m
	}
	if !strings.HasPrefix(base, "/") {
		base = "/dev/" + base
	}
	return base, true
}

// LayoutTable computes the partitions of a layout on a disk.
func LayoutTable(tableType string, size int64, ss int, layout []LayoutPart) (NewTable, error) {
	t := NewTable{Type: tableType, SectorSize: ss}
	sectors := size / int64(ss)
	grain := int64(1<<20) / int64(ss)
	if grain < 1 {
		grain = 1
	}
	var first, last int64
	switch tableType {
	case "gpt":
		f, l := GPTUsable(size, ss)
		first, last = max(f, grain), l
		if len(layout) > gptEntries {
			return t, fmt.Errorf("%d partitions: GPT holds %d", len(layout), gptEntries)
		}
	case "mbr":
		first, last = grain, min(sectors-1, mbrMaxLBA)
		if len(layout) > 4 {
			return t, fmt.Errorf("%d partitions: an MBR holds 4 primary partitions (use table_type: gpt)", len(layout))
		}
	default:
		return t, fmt.Errorf("table_type %q: want mbr or gpt", tableType)
	}
	total := 0
	for i, p := range layout {
		var err error
		if tableType == "gpt" {
			_, err = GPTTypeGUID(p.Type)
		} else {
			_, err = MBRType(p.Type)
		}
		if err != nil {
			return t, fmt.Errorf("partition %d: %w", i+1, err)
		}
		if p.Percent <= 0 || p.Percent > 100 {
			return t, fmt.Errorf("partition size %d%%: want 1-100", p.Percent)
		}
		total += p.Percent
	}
	if total > 100 {
		return t, fmt.Errorf("partition sizes add up to %d%% of the disk", total)
	}
	cursor := first
	for i, p := range layout {
		start := (cursor + grain - 1) / grain * grain
		end := last
		if i < len(layout)-1 {
			sz := sectors * int64(p.Percent) / 100 / grain * grain
			if sz == 0 {
				return t, fmt.Errorf("partition %d (%d%%) is smaller than 1 MiB", i+1, p.Percent)
			}
			end = start + sz - 1
		}
		if end > last || start > end {
			return t, fmt.Errorf("partition %d does not fit on a disk of %d bytes", i+1, size)
		}
		t.Partitions = append(t.Partitions, NewPartition{Start: start, Size: end - start + 1, Type: p.Type})
		cursor = end + 1
	}
	return t, nil
}

func describeTable(t NewTable) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s table", t.Type)
	for i, p := range t.Partitions {
		typ := p.Type
		if typ == "" {
			typ = "linux"
		}
		fmt.Fprintf(&b, "; %d: start=%d size=%d type=%s", i+1, p.Start, p.Size, typ)
	}
	return b.String()
}

// sameType compares a layout type with a type bootenv read.
func sameType(table, want, got string) bool {
	if table == "gpt" {
		w, err := GPTTypeGUID(want)
		return err == nil && strings.EqualFold(w, got)
	}
	w, err := MBRType(want)
	g, gerr := MBRType(got)
	return err == nil && gerr == nil && w == g
}

func layoutMatches(d DeviceInfo, spec DiskSpec) bool {
	wantPT := map[string]string{"gpt": "gpt", "mbr": "dos"}[spec.TableType]
	if d.PTType != wantPT || len(d.Partitions) != len(spec.Layout) {
		return false
	}
	for i, p := range spec.Layout {
		if !sameType(spec.TableType, p.Type, d.Partitions[i].Type) {
			return false
		}
	}
	return true
}

func inUse(d DeviceInfo) string {
	if d.InUse != "" {
		return d.Path + " is in use (" + d.InUse + ")"
	}
	for _, p := range d.Partitions {
		if p.InUse != "" {
			return p.Path + " is in use (" + p.InUse + ")"
		}
	}
	return ""
}

// Plan plans disk_setup then fs_setup on devices.
func PlanSetup(cfg SetupConfig, devices []DeviceInfo) (Plan, error) {
	var plan Plan
	disks := map[string]*DeviceInfo{}
	for i := range devices {
		d := devices[i]
		d.Partitions = append([]PartInfo(nil), d.Partitions...)
		disks[d.Path] = &d
	}
	names := make([]string, 0, len(cfg.Disks))
	for n := range cfg.Disks {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		spec := cfg.Disks[name]
		where := "disk_setup." + name
		if spec.Layout == nil {
			plan.Steps = append(plan.Steps, Step{Action: "skip", Config: where, Device: name, Reason: "layout is false: not partitioning"})
			continue
		}
		path, ok := cfg.Names.resolveDevice(name)
		d := disks[path]
		if !ok || d == nil {
			plan.Steps = append(plan.Steps, Step{Action: "skip", Config: where, Device: name, Reason: ReasonNotFound, Warn: true})
			continue
		}
		old := d.describe()
		if u := inUse(*d); u != "" {
			plan.Steps = append(plan.Steps, Step{Action: "skip", Config: where, Device: path, Old: old, Reason: "refusing to partition: " + u})
			continue
		}
		if layoutMatches(*d, spec) {
			plan.Steps = append(plan.Steps, Step{Action: "skip", Config: where, Device: path, Old: old, Reason: "partition layout already matches"})
			continue
		}
		if !spec.Overwrite && (len(d.Partitions) > 0 || d.FSType != "") {
			plan.Steps = append(plan.Steps, Step{Action: "skip", Config: where, Device: path, Old: old,
				Reason: "device holds partitions or a filesystem and overwrite is false"})
			continue
		}
		t, err := LayoutTable(spec.TableType, d.Size, d.sectorSize(), spec.Layout)
		if err != nil {
			return Plan{}, fmt.Errorf("%s (%s): %w", where, path, err)
		}
		plan.Steps = append(plan.Steps, Step{Action: "partition", Config: where, Device: path, Old: old, New: describeTable(t), Table: &t})
		// What fs_setup will see.
		d.PTType = map[string]string{"gpt": "gpt", "mbr": "dos"}[spec.TableType]
		d.FSType, d.Label = "", ""
		d.Partitions = nil
		for i, p := range t.Partitions {
			d.Partitions = append(d.Partitions, PartInfo{Number: i + 1, Path: PartitionPath(path, i+1), Start: p.Start, Size: p.Size, Type: p.Type})
		}
	}
	for i, fs := range cfg.Filesystems {
		st := planFS(fmt.Sprintf("fs_setup[%d]", i), fs, cfg.Names, disks)
		plan.Steps = append(plan.Steps, st)
		if st.Action == "mkfs" {
			markFormatted(disks, st.Device, fs)
		}
	}
	return plan, nil
}

// markFormatted records a planned filesystem, so later fs_setup entries
// see it.
func markFormatted(disks map[string]*DeviceInfo, path string, fs FSSpec) {
	fstype := fs.Filesystem
	if fstype == "" {
		fstype = "unknown"
	}
	for _, d := range disks {
		if d.Path == path {
			d.FSType, d.Label = fstype, fs.Label
		}
		for i := range d.Partitions {
			if d.Partitions[i].Path == path {
				d.Partitions[i].FSType, d.Partitions[i].Label = fstype, fs.Label
			}
		}
	}
}

// node is a formatting candidate: a whole disk or a partition.
type node struct {
	path, fstype, label, inUse string
	disk                       bool
	start, size                int64 // sectors, for a partition
}

func planFS(where string, fs FSSpec, names DeviceEnv, disks map[string]*DeviceInfo) Step {
	st := Step{Action: "skip", Config: where, Device: fs.Device}
	if fs.Device == "" {
		st.Reason, st.Warn = "no device given", true
		return st
	}
	if fs.Filesystem == "" && fs.Cmd == "" {
		st.Reason, st.Warn = "no filesystem or cmd given", true
		return st
	}
	devName, part := fs.Device, strings.ToLower(strings.TrimSpace(fs.Partition))
	if base, n := SplitDotted(devName); n > 0 {
		devName, part = base, strconv.Itoa(n)
	}
	path, ok := names.resolveDevice(devName)
	d := disks[path]
	if !ok || d == nil {
		st.Reason, st.Warn = ReasonNotFound, true
		return st
	}
	st.Device = path
	var target *node
	switch part {
	case "auto", "any", "":
		cands := []node{{path: d.Path, fstype: d.FSType, label: d.Label, inUse: d.InUse, disk: true}}
		for _, p := range d.Partitions {
			cands = append(cands, node{path: p.Path, fstype: p.FSType, label: p.Label, inUse: p.InUse, start: p.Start, size: p.Size})
		}
		labelMatch := part != "any"
		rawUsed := d.PTType != "" || d.FSType != ""
		for i := range cands {
			c := cands[i]
			if c.fstype != "" && c.fstype == fs.Filesystem && (!labelMatch || c.label == fs.Label) {
				st.Device, st.Reason = c.path, fmt.Sprintf("found %s filesystem %q: already formatted", c.fstype, c.label)
				return st
			}
			if fs.ReplaceFS != "" && c.fstype == fs.ReplaceFS && target == nil {
				target = &cands[i]
			}
		}
		if target == nil {
			for i := range cands[1:] {
				if cands[1+i].fstype == "" {
					target = &cands[1+i]
					break
				}
			}
		}
		if target == nil && !rawUsed {
			target = &cands[0]
		}
		if target == nil {
			st.Reason = "no unformatted partition found"
			return st
		}
	case "none":
		target = &node{path: d.Path, fstype: d.FSType, label: d.Label, inUse: d.InUse, disk: true}
		if d.PTType != "" && !fs.Overwrite {
			st.Reason, st.Warn = fmt.Sprintf("device holds a %s partition table and overwrite is false", d.PTType), true
			return st
		}
	default:
		n, err := strconv.Atoi(part)
		if err != nil || n < 1 {
			st.Reason = fmt.Sprintf("partition %q: want auto, any, none or a number", fs.Partition)
			return st
		}
		for _, p := range d.Partitions {
			if p.Number == n {
				target = &node{path: p.Path, fstype: p.FSType, label: p.Label, inUse: p.InUse, start: p.Start, size: p.Size}
			}
		}
		if target == nil {
			st.Reason, st.Warn = fmt.Sprintf("no partition %d on %s", n, path), true
			return st
		}
	}
	st.Device = target.path
	st.Old = "empty"
	if target.fstype != "" {
		st.Old = fmt.Sprintf("%s filesystem %q", target.fstype, target.label)
	}
	if target.inUse != "" {
		st.Reason, st.Warn = "refusing to format: in use ("+target.inUse+")", true
		return st
	}
	if target.fstype != "" {
		switch {
		case target.fstype == fs.Filesystem && target.label == fs.Label:
			st.Reason = fmt.Sprintf("found %s filesystem %q: already formatted", target.fstype, target.label)
			return st
		case fs.Overwrite || (fs.ReplaceFS != "" && fs.ReplaceFS == target.fstype):
		default:
			st.Reason, st.Warn = fmt.Sprintf("holds a filesystem (%s %q) and neither overwrite nor replace_fs allow replacing it", target.fstype, target.label), true
			return st
		}
	}
	argv, err := MkfsArgv(fs, target.path, target.disk)
	if err != nil {
		st.Reason = err.Error()
		return st
	}
	st.Action, st.Argv, st.Reason = "mkfs", argv, ""
	st.Disk = d.Path
	if !target.disk {
		ss := int64(d.sectorSize())
		st.Offset, st.Length = target.start*ss, target.size*ss
	}
	return st
}

// MkfsArgv is the command fs_setup runs: mkfs.<fs> (mkswap for swap) with
// the label, the force flag when overwriting or formatting a whole disk,
// extra_opts, then the device; or `cmd` run by sh with %(label)s,
// %(filesystem)s and %(device)s substituted.
func MkfsArgv(fs FSSpec, device string, wholeDisk bool) ([]string, error) {
	if fs.Cmd != "" {
		c := strings.NewReplacer("%(label)s", fs.Label, "%(filesystem)s", fs.Filesystem, "%(device)s", device).Replace(fs.Cmd)
		return []string{"sh", "-c", c}, nil
	}
	t := strings.ToLower(fs.Filesystem)
	family := t
	if strings.HasPrefix(t, "ext") {
		family = "ext"
	}
	labelFlag := map[string]string{"ext": "-L", "btrfs": "-L", "xfs": "-L", "swap": "-L", "vfat": "-n", "fat": "-n"}
	forceFlag := map[string]string{"ext": "-F", "btrfs": "-f", "xfs": "-f", "swap": "-f"}
	lf, known := labelFlag[family]
	if !known {
		return nil, fmt.Errorf("filesystem %q: want ext2, ext3, ext4, xfs, btrfs, vfat or swap (or give cmd)", fs.Filesystem)
	}
	argv := []string{"mkfs." + t}
	if t == "swap" {
		argv = []string{"mkswap"}
	}
	if fs.Label != "" {
		argv = append(argv, lf, fs.Label)
	}
	if f := forceFlag[family]; f != "" && (fs.Overwrite || wholeDisk || fs.ReplaceFS != "") {
		argv = append(argv, f)
	}
	argv = append(argv, fs.ExtraOpts...)
	return append(argv, device), nil
}
