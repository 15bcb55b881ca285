package disk

// cloud-init's cc_mounts, pure: the new /etc/fstab from the old one, the
// `mounts`, `mount_default_fields` and `device_aliases` config, and a way
// to resolve device names.
//
// Rules (cc_mounts, with the differences marked):
//   - Lines of the old fstab holding "comment=cloudconfig" are cloud-config
//     entries of an earlier run: they are dropped and regenerated; other
//     lines are kept verbatim and in order (blank lines are dropped).
//   - Each `mounts` item is a list [spec, file, vfstype, mntops, freq,
//     passno]; a null or missing field takes mount_default_fields' value,
//     numbers become strings. A spec is resolved: "ephemeral" means
//     "ephemeral0"; "name.N" is partition N of name; device_aliases map
//     names; metadata names (ami, root, swap, ephemeralN, ebsN) go through
//     the datasource's block-device mapping; short names (sdb, xvdb1, vdd,
//     sr0) get /dev/; a whole disk with a partition 1 means that partition.
//   - Differences: a spec that names a device (a metadata name, an alias,
//     a short name, a /dev path) which is not there is dropped with a note
//     (cloud-init writes the unresolved name into fstab); an entry whose
//     device already has a line in fstab is dropped with a note (cloud-init
//     writes it again under its unresolved name). Other specs (LABEL=,
//     UUID=, host:/path, tmpfs) pass through unchecked.
//   - The defaults [ephemeral0, /mnt, auto, <default options>, 0, 2] and
//     [swap, none, swap, sw, 0, 0] are added when their device resolves and
//     no item names the same device.
//   - An item whose file field is null removes every earlier item for the
//     same device (that is how `[ephemeral0, null]` disables /mnt).
//   - Every generated line gets ",comment=cloudconfig" appended to its
//     options, the swap file's line too (cloud-init 24+ leaves it untagged
//     and so duplicates it on the next run).
//   - When nothing is generated the fstab is left alone.
//   - Difference: an item with a line break in a field is dropped with a
//     note (cloud-init writes it, and the rest of the field becomes a line
//     of its own: an fstab entry nobody asked for, untagged, so kept and
//     never removed by later runs).

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// MountComment tags the fstab lines cloudroot (and cloud-init) generate.
const MountComment = "comment=cloudconfig"

// DefaultMountOptions are the options of generated mounts. cloud-init uses
// "defaults,nofail,x-systemd.after=cloud-init-network.service,_netdev" on
// systemd so that mounts wait until cloud-init has formatted the disks;
// cloudroot formats them in the initramfs, before the root's init reads
// fstab, so there is nothing to wait for — and ordering mounts after
// cloudroot-config.service (itself after network-online.target) would
// delay local filesystems for the network. nofail keeps a missing disk from
// failing the boot.
const DefaultMountOptions = "defaults,nofail"

// DefaultMountFields are mount_default_fields' default; nil is None.
func DefaultMountFields() []*string {
	return []*string{nil, nil, ptr("auto"), ptr(DefaultMountOptions), ptr("0"), ptr("2")}
}

func ptr(s string) *string { return &s }

var (
	shortDeviceRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([x]{0,1}[shv]d[a-z][0-9]*|sr[0-9]+)$`) })
	networkRE     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^.+:.*`) })
)

// DeviceEnv resolves device names for mounts and disk_setup.
type DeviceEnv struct {
	// Meta maps a metadata name (ephemeral0, swap, ebs0, ami, root) to a
	// device name or path, as a datasource's device_name_to_device ("" =
	// unknown).
	Meta func(name string) string
	// Exists reports whether a device node exists.
	Exists func(path string) bool
	// Aliases are device_aliases.
	Aliases map[string]string
}

// IsMetaDeviceName reports whether name is a metadata device name.
func IsMetaDeviceName(name string) bool {
	switch name {
	case "ami", "root", "swap":
		return true
	}
	for _, p := range []string{"ephemeral", "ebs"} {
		if strings.HasPrefix(name, p) && !strings.Contains(name, ":") {
			return true
		}
	}
	return false
}

// SplitDotted splits "ephemeral0.1" into ("ephemeral0", 1); n is 0 when
// there is no numeric suffix.
func SplitDotted(s string) (string, int) {
	if i := strings.LastIndexByte(s, '.'); i > 0 {
		if n, err := strconv.Atoi(s[i+1:]); err == nil && n > 0 {
			return s[:i], n
		}
	}
	return s, 0
}

// PartitionPath finds partition n of dev by the names the kernel and udev
// use: dev+"1", dev+"p1", dev+"-part1".
func (e DeviceEnv) PartitionPath(dev string, n int) (string, bool) {
	for _, suf := range []string{"", "p", "-part"} {
		p := dev + suf + strconv.Itoa(n)
		if e.Exists != nil && e.Exists(p) {
			return p, true
		}
	}
	return "", false
}

// Sanitize resolves a mounts spec. checked says whether the spec names a
// device at all; when it does and the device is missing, ok is false.
func (e DeviceEnv) Sanitize(spec string) (dev string, checked, ok bool) {
	name := spec
	if name == "ephemeral" {
		name = "ephemeral0"
	}
	if networkRE().MatchString(spec) {
		return spec, false, true
	}
	base, part := SplitDotted(name)
	orig := base
	if a, ok := e.Aliases[base]; ok {
		base = a
	}
	switch {
	case IsMetaDeviceName(base):
		checked = true
		if e.Meta == nil {
			return "", true, false
		}
		m := e.Meta(base)
		if m == "" {
			return "", true, false
		}
		if !strings.HasPrefix(m, "/") {
			m = "/dev/" + m
		}
		base = m
	case shortDeviceRE().MatchString(base):
		checked = true
		base = "/dev/" + base
	case strings.HasPrefix(base, "/dev/") || base != orig:
		checked = true
	default:
		return spec, false, true
	}
	exists := func(p string) bool { return e.Exists != nil && e.Exists(p) }
	if part > 0 {
		p, ok := e.PartitionPath(base, part)
		return p, true, ok
	}
	if p, ok := e.PartitionPath(base, 1); ok && exists(base) {
		return p, true, true
	}
	return base, true, exists(base)
}

// FstabResult is the rendered fstab and what changed.
type FstabResult struct {
	// Write is false when there are no cloud-config entries: the fstab is
	// then left as it is.
	Write   bool
	Content []byte
	// Entries are the generated lines' fields, options tagged.
	Entries [][]string
	// Dirs are the mount points to create.
	Dirs []string
	// Changes are "- line" / "+ line" for the log.
	Changes []string
	// Notes say what was dropped and why.
	Notes []string
}

// MountsConfig is the part of cloud-config cc_mounts reads.
type MountsConfig struct {
	Mounts        []any     // the `mounts` list as decoded
	DefaultFields []*string // mount_default_fields (nil: DefaultMountFields)
	// DefaultOptions are the options of the implicit ephemeral0 mount
	// ("" = DefaultMountOptions).
	DefaultOptions string
	// SwapFile, when set, is a swap file to list.
	SwapFile string
}

// ParseDefaultFields reads mount_default_fields (a list; null items are
// None).
func ParseDefaultFields(v any) ([]*string, error) {
	l, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("mount_default_fields: want a list, got %T", v)
	}
	out := make([]*string, len(l))
	for i, x := range l {
		if x != nil {
			s := scalar(x)
			out[i] = &s
		}
	}
	return out, nil
}

func scalar(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case nil:
		return ""
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

// RenderFstab applies cc_mounts to an fstab.
func RenderFstab(fstab []byte, cfg MountsConfig, env DeviceEnv) FstabResult {
	var res FstabResult
	defaults := cfg.DefaultFields
	if defaults == nil {
		defaults = DefaultMountFields()
	}
	defOpts := cfg.DefaultOptions
	if defOpts == "" {
		defOpts = DefaultMountOptions
	}
	var kept, removed []string
	fstabDevs := map[string]string{}
	for _, line := range strings.Split(string(fstab), "\n") {
		if strings.Contains(line, MountComment) {
			removed = append(removed, line)
			continue
		}
		if f := strings.Fields(line); len(f) > 0 {
			fstabDevs[f[0]] = line
			kept = append(kept, line)
		}
	}
	type entry []*string
	var items []entry
	for i, raw := range cfg.Mounts {
		l, ok := raw.([]any)
		if !ok || len(l) == 0 {
			res.Notes = append(res.Notes, fmt.Sprintf("mounts[%d]: not a list, ignored: %v", i, raw))
			continue
		}
		start := scalar(l[0])
		e := make(entry, len(l))
		broken := -1
		for j, x := range l {
			if x != nil {
				s := scalar(x)
				e[j] = &s
				if strings.ContainsAny(s, "\n\r") && broken < 0 {
					broken = j
				}
			}
		}
		if broken >= 0 {
			res.Notes = append(res.Notes, fmt.Sprintf("mounts[%d]: field %d holds a line break, entry dropped", i, broken+1))
			continue
		}
		dev, checked, ok := env.Sanitize(start)
		switch {
		case checked && !ok:
			res.Notes = append(res.Notes, fmt.Sprintf("mounts[%d]: device %s does not exist, entry dropped", i, start))
			continue
		case checked && fstabDevs[dev] != "":
			res.Notes = append(res.Notes, fmt.Sprintf("mounts[%d]: device %s is already in fstab (%s), entry dropped", i, dev, fstabDevs[dev]))
			continue
		}
		e[0] = &dev
		for j := range e {
			if e[j] == nil && j < len(defaults) {
				e[j] = defaults[j]
			}
		}
		for j := len(e); j < len(defaults); j++ {
			e = append(e, defaults[j])
		}
		items = append(items, e)
	}
	for _, d := range [][]string{{"ephemeral0", "/mnt", "auto", defOpts, "0", "2"}, {"swap", "none", "swap", "sw", "0", "0"}} {
		dev, _, ok := env.Sanitize(d[0])
		if !ok || fstabDevs[dev] != "" {
			continue
		}
		dup := false
		for _, it := range items {
			if *it[0] == dev {
				dup = true
			}
		}
		if dup {
			continue
		}
		e := entry{&dev}
		for _, s := range d[1:] {
			e = append(e, ptr(s))
		}
		items = append(items, e)
	}
	// A null file field removes that device's earlier entries.
	var act [][]string
	deny := map[string]bool{}
	for i := len(items) - 1; i >= 0; i-- {
		it := items[i]
		if len(it) < 2 || it[1] == nil || deny[*it[0]] {
			deny[*it[0]] = true
			continue
		}
		fields := make([]string, len(it))
		for j, p := range it {
			if p != nil {
				fields[j] = *p
			} else {
				fields[j] = "None"
			}
		}
		act = append([][]string{fields}, act...)
	}
	if cfg.SwapFile != "" {
		act = append(act, []string{cfg.SwapFile, "none", "swap", "sw", "0", "0"})
	}
	for _, f := range act {
		if len(f) > 3 {
			f[3] += "," + MountComment
		}
	}
	if len(act) == 0 {
		res.Content = fstab
		return res
	}
	res.Write = true
	res.Entries = act
	var adds []string
	lines := kept
	for _, f := range act {
		l := strings.Join(f, "\t")
		lines = append(lines, l)
		adds = append(adds, strings.ReplaceAll(l, "\t", " "))
		if len(f) > 1 && strings.HasPrefix(f[1], "/") {
			res.Dirs = append(res.Dirs, f[1])
		}
	}
	drops := make([]string, 0, len(removed))
	for _, r := range removed {
		drops = append(drops, strings.ReplaceAll(r, "\t", " "))
	}
	for _, d := range drops {
		if !contains(adds, d) {
			res.Changes = append(res.Changes, "- "+d)
		}
	}
	for _, a := range adds {
		if !contains(drops, a) {
			res.Changes = append(res.Changes, "+ "+a)
		}
	}
	var b bytes.Buffer
	b.WriteString(strings.Join(lines, "\n"))
	b.WriteByte('\n')
	res.Content = b.Bytes()
	return res
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
