// Package cloudcfg assembles the configuration modules see, from cloud-init's
// sources in its precedence order (lowest first):
//
//  1. built-in defaults (Builtin)
//  2. /etc/cloud/cloud.cfg
//  3. /etc/cloud/cloud.cfg.d/*.cfg, in lexical order
//  4. /run/cloud-init/cloud.cfg (written by detection)
//  5. vendor-data cloud-config
//  6. user-data cloud-config
//
// Merge rule between sources (cloud-init's util.mergemanydict): the higher
// source wins; mappings are merged recursively key by key; lists and scalars
// are never combined — a higher source's list replaces a lower one's
// (so user-data `runcmd` replaces a `runcmd` from cloud.cfg.d, as in
// cloud-init). merge_how / merge_type and the other formats arrive with the
// user-data pipeline.
package cloudcfg

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/datasource"
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

// LoadSystem reads sources 2-4 from the target root. Unreadable or invalid
// files are returned as errors naming the file; the rest still load.
func LoadSystem(r Reader) ([]Source, error) {
	var out []Source
	var errs []error
	add := func(p string) {
		b, err := r.ReadFile(p)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, fmt.Errorf("cloudcfg: read %s: %w", p, err))
			}
			return
		}
		m, err := datasource.DecodeYAMLMap(b)
		if err != nil {
			errs = append(errs, fmt.Errorf("cloudcfg: %s: %w", p, err))
			return
		}
		out = append(out, Source{Name: p, Config: m})
	}
	add("/etc/cloud/cloud.cfg")
	if ents, err := r.ReadDir("/etc/cloud/cloud.cfg.d"); err == nil {
		var names []string
		for _, e := range ents {
			if !e.IsDir() && strings.HasSuffix(e.Name(), ".cfg") {
				names = append(names, e.Name())
			}
		}
		sort.Strings(names)
		for _, n := range names {
			add(path.Join("/etc/cloud/cloud.cfg.d", n))
		}
	}
	add("/run/cloud-init/cloud.cfg")
	return out, errors.Join(errs...)
}

// Merge merges sources given lowest-priority first with mergemanydict
// semantics (see the package comment).
func Merge(sources ...map[string]any) map[string]any {
	out := map[string]any{}
	for _, s := range sources {
		out = mergeInto(out, s)
	}
	return out
}

// mergeInto lays hi over lo.
func mergeInto(lo, hi map[string]any) map[string]any {
	out := make(map[string]any, len(lo)+len(hi))
	for k, v := range lo {
		out[k] = v
	}
	for k, hv := range hi {
		if hm, ok := hv.(map[string]any); ok {
			if lm, ok := out[k].(map[string]any); ok {
				out[k] = mergeInto(lm, hm)
				continue
			}
		}
		out[k] = hv
	}
	return out
}
