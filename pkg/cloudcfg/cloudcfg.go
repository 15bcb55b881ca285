// Package cloudcfg assembles the configuration modules see, from cloud-init's
// sources in its precedence order (lowest first; Load does all of it):
//
//  1. built-in defaults (Builtin)
//  2. /etc/cloud/cloud.cfg
//  3. /etc/cloud/cloud.cfg.d/*.cfg, in lexical order
//  4. /run/cloud-init/cloud.cfg (written by detection)
//  5. kernel command line cc: ... end_cc (ParseCmdlineCC)
//  6. the datasource's own config object
//  7. vendor-data cloud-config (unless user-data says vendor_data: {enabled: false})
//  8. vendor-data2 cloud-config (likewise with vendor_data2)
//  9. user-data cloud-config
//
// Sources 1-5 are the "system" config (instance-data merged_system_cfg).
// Sources are merged with cloud-init's util.mergemanydict, the cloud-config
// parts of one payload with handlers/cloud_config.py's rules and
// merge_how; merge.go states both.
package cloudcfg

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/yaml11"
)

// Reader reads files of the target root.
type Reader interface {
	ReadFile(p string) ([]byte, error)
	ReadDir(p string) ([]fs.DirEntry, error)
}

// Builtin is cloud-init's CFG_BUILTIN plus the base cloud.cfg defaults that
// apply when an image ships no /etc/cloud/cloud.cfg.
func Builtin() map[string]any {
	return map[string]any{
		"datasource_list":   []any{"NoCloud", "ConfigDrive", "None"},
		"users":             []any{"default"},
		"disable_root":      true,
		"preserve_hostname": false,
		"ssh_pwauth":        false,
		"def_log_file":      "/var/log/cloud-init.log",
		"syslog_fix_perms":  []any{"syslog:adm", "root:adm", "root:wheel", "root:root"},
		"vendor_data":       map[string]any{"enabled": true, "prefix": []any{}},
	}
}

// Source is one loaded configuration source.
type Source struct {
	Name   string
	Config map[string]any
}

// Paths of the system sources, inside the target root.
const (
	PathCloudCfg   = "/etc/cloud/cloud.cfg"
	PathCloudCfgD  = "/etc/cloud/cloud.cfg.d"
	PathRuntimeCfg = "/run/cloud-init/cloud.cfg"
)

// LoadSystem reads sources 2-4 from the target root. Unreadable or invalid
// files are returned as errors naming the file; the rest still load.
func LoadSystem(r Reader) ([]Source, error) {
	sys := readSystem(r, r)
	var out []Source
	if sys.cloudCfg != nil {
		out = append(out, *sys.cloudCfg)
	}
	out = append(out, sys.confd...)
	if sys.runtime != nil {
		out = append(out, *sys.runtime)
	}
	var errs []error
	for _, p := range sys.problems {
		errs = append(errs, fmt.Errorf("cloudcfg: %w", p))
	}
	return out, errors.Join(errs...)
}

type systemFiles struct {
	cloudCfg *Source
	confd    []Source
	runtime  *Source
	problems []*Problem
	warnings []string // repeated keys (the last value is used)
}

// SystemFiles are the system configuration files (cloud.cfg, cloud.cfg.d,
// the runtime config) read once, for Load to merge any number of times
// (LoadOptions.Files) without reading them again. Load never changes them.
type SystemFiles struct{ files systemFiles }

// ReadSystemFiles reads cloud.cfg and cloud.cfg.d from root and the
// runtime config from run (nil: root), as Load would.
func ReadSystemFiles(root, run Reader) *SystemFiles {
	if run == nil {
		run = root
	}
	return &SystemFiles{files: readSystem(root, run)}
}

// readSystem reads cloud.cfg and cloud.cfg.d from root and the runtime
// config from run. A missing file is no problem.
func readSystem(root, run Reader) systemFiles {
	var sys systemFiles
	read := func(r Reader, p string) *Source {
		if r == nil {
			return nil
		}
		b, err := r.ReadFile(p)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				sys.problems = append(sys.problems, &Problem{Source: p, Err: fmt.Errorf("read %s: %w", p, err)})
			}
			return nil
		}
		m, warns, err := yaml11.LoadMap("", b)
		for _, w := range warns {
			sys.warnings = append(sys.warnings, p+": "+w.Message())
		}
		if err != nil {
			sys.problems = append(sys.problems, &Problem{Source: p, Err: err})
			return nil
		}
		return &Source{Name: p, Config: m}
	}
	sys.cloudCfg = read(root, PathCloudCfg)
	if root != nil {
		ents, err := root.ReadDir(PathCloudCfgD)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			sys.problems = append(sys.problems, &Problem{Source: PathCloudCfgD, Err: fmt.Errorf("read directory %s: %w", PathCloudCfgD, err)})
		}
		var names []string
		for _, e := range ents {
			if !e.IsDir() && strings.HasSuffix(e.Name(), ".cfg") {
				names = append(names, e.Name())
			}
		}
		sort.Strings(names)
		for _, n := range names {
			if s := read(root, path.Join(PathCloudCfgD, n)); s != nil {
				sys.confd = append(sys.confd, *s)
			}
		}
	}
	sys.runtime = read(run, PathRuntimeCfg)
	return sys
}

// Merge merges sources given lowest-priority first with mergemanydict
// semantics; it is MergeSources.
func Merge(sources ...map[string]any) map[string]any {
	return MergeSources(sources...)
}
