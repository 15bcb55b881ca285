package disk

import (
	"fmt"
	"strings"
)

// ParseSetup reads device_aliases, disk_setup and fs_setup from
// cloud-config. Problems with one entry are returned as warnings and the
// entry is left out; names resolve through names (its Aliases are set from
// device_aliases).
func ParseSetup(cfg map[string]any, names DeviceEnv) (SetupConfig, []string) {
	return ParseSetupValues(SetupValues{DeviceAliases: cfg["device_aliases"], DiskSetup: cfg["disk_setup"], FSSetup: cfg["fs_setup"]}, names)
}

// SetupValues are the cloud-config values ParseSetup reads, as decoded
// (nil when absent or null).
type SetupValues struct {
	DeviceAliases, DiskSetup, FSSetup any
}

// ParseSetupValues is ParseSetup of the three values already taken from
// the config.
func ParseSetupValues(v SetupValues, names DeviceEnv) (SetupConfig, []string) {
	var warns []string
	sc := SetupConfig{Disks: map[string]DiskSpec{}, Names: names}
	if a, ok := v.DeviceAliases.(map[string]any); ok {
		sc.Names.Aliases = map[string]string{}
		for k, v := range a {
			sc.Names.Aliases[k] = scalar(v)
		}
	} else if v.DeviceAliases != nil {
		warns = append(warns, "device_aliases: want a mapping")
	}
	if raw := v.DiskSetup; raw != nil {
		m, ok := raw.(map[string]any)
		if !ok {
			warns = append(warns, "disk_setup: want a mapping")
		}
		for name, v := range m {
			spec, err := parseDiskSpec(v)
			if err != nil {
				warns = append(warns, fmt.Sprintf("disk_setup.%s: %v", name, err))
				continue
			}
			sc.Disks[name] = spec
		}
	}
	if raw := v.FSSetup; raw != nil {
		l, ok := raw.([]any)
		if !ok {
			warns = append(warns, "fs_setup: want a list")
		}
		for i, v := range l {
			fs, err := parseFSSpec(v)
			if err != nil {
				warns = append(warns, fmt.Sprintf("fs_setup[%d]: %v", i, err))
				continue
			}
			sc.Filesystems = append(sc.Filesystems, fs)
		}
	}
	return sc, warns
}

func boolOf(v any) bool {
	switch t := v.(type) {
	case bool:
		return t
	case string:
		switch strings.ToLower(t) {
		case "true", "yes", "on", "1":
			return true
		}
	case int:
		return t != 0
	}
	return false
}

func parseDiskSpec(v any) (DiskSpec, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return DiskSpec{}, fmt.Errorf("want a mapping, got %T", v)
	}
	s := DiskSpec{TableType: "mbr", Overwrite: boolOf(m["overwrite"])}
	if t := strings.ToLower(scalar(m["table_type"])); t != "" {
		s.TableType = t
	}
	if s.TableType != "mbr" && s.TableType != "gpt" {
		return s, fmt.Errorf("table_type %q: want mbr or gpt", s.TableType)
	}
	switch l := m["layout"].(type) {
	case nil:
	case bool:
		if l {
			s.Layout = []LayoutPart{{Percent: 100}}
		}
	case string:
		if boolOf(l) {
			s.Layout = []LayoutPart{{Percent: 100}}
		}
	case []any:
		s.Layout = []LayoutPart{}
		for i, it := range l {
			var p LayoutPart
			switch x := it.(type) {
			case int:
				p.Percent = x
			case []any:
				if len(x) != 2 {
					return s, fmt.Errorf("layout[%d]: want [percent, type]", i)
				}
				n, ok := x[0].(int)
				if !ok {
					return s, fmt.Errorf("layout[%d]: percent %v is not a number", i, x[0])
				}
				p.Percent, p.Type = n, scalar(x[1])
			default:
				return s, fmt.Errorf("layout[%d]: want a percentage or [percent, type], got %v", i, it)
			}
			s.Layout = append(s.Layout, p)
		}
	default:
		return s, fmt.Errorf("layout: want true, false or a list, got %T", l)
	}
	return s, nil
}

func parseFSSpec(v any) (FSSpec, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return FSSpec{}, fmt.Errorf("want a mapping, got %T", v)
	}
	fs := FSSpec{
		Label:      scalar(m["label"]),
		Filesystem: scalar(m["filesystem"]),
		Device:     scalar(m["device"]),
		Partition:  scalar(m["partition"]),
		Overwrite:  boolOf(m["overwrite"]),
		ReplaceFS:  scalar(m["replace_fs"]),
	}
	switch c := m["cmd"].(type) {
	case nil:
	case string:
		fs.Cmd = c
	case []any:
		parts := make([]string, len(c))
		for i, x := range c {
			parts[i] = scalar(x)
		}
		fs.Cmd = strings.Join(parts, " ")
	}
	switch o := m["extra_opts"].(type) {
	case nil:
	case string:
		fs.ExtraOpts = strings.Fields(o)
	case []any:
		for _, x := range o {
			fs.ExtraOpts = append(fs.ExtraOpts, scalar(x))
		}
	default:
		return fs, fmt.Errorf("extra_opts: want a string or a list")
	}
	return fs, nil
}
