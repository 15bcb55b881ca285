//go:build !cloudroot_front

package cli

// What a distribution package of cloudroot ships, from the same plan as
// `cloudroot install`: the agent, its names, the systemd units, the
// generator and the default cloud.cfg. The enable links the plan makes in
// /etc/systemd/system are not files of a package (Debian's maintainer
// scripts make them with deb-systemd-helper, as `systemctl enable` would):
// PackageLayout returns them as the list of units to enable instead.

import (
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
)

// PackageEntry is one file or symlink of the package tree.
type PackageEntry struct {
	Path string // absolute, inside the root
	Data []byte // a regular file's bytes
	Mode fs.FileMode
	Link string // a symlink's target (then Data is nil)
	Why  string
}

// PackageLayout lists the systemd plan of `cloudroot install` for agent (one
// binary serving every command, installed as both the front and the agent) and
// cloudCfg (written as /etc/cloud/cloud.cfg, the default of variant) as
// package entries, and the units the plan enables.
func PackageLayout(agent, cloudCfg []byte, variant string) (entries []PackageEntry, enable []string, err error) {
	return PackageLayoutOf(Binaries{Front: agent, Agent: agent}, cloudCfg, variant)
}

// PackageLayoutOf is PackageLayout for the front binary and the full agent.
func PackageLayoutOf(bins Binaries, cloudCfg []byte, variant string) (entries []PackageEntry, enable []string, err error) {
	p, err := buildPlan(InitSystemd, bins, false, cloudCfg, variant)
	if err != nil {
		return nil, nil, fmt.Errorf("planning the install: %w", err)
	}
	for _, a := range p.Actions {
		switch {
		case a.Kind == actLink && strings.HasPrefix(a.Path, systemdEtcDir+"/"):
			if u := path.Base(a.Target); !slices.Contains(enable, u) {
				enable = append(enable, u)
			}
		case a.Kind == actWrite:
			entries = append(entries, PackageEntry{Path: a.Path, Data: a.Data, Mode: a.Mode, Why: a.Why})
		case a.Kind == actLink:
			entries = append(entries, PackageEntry{Path: a.Path, Link: a.Target, Why: a.Why})
		default:
			return nil, nil, fmt.Errorf("install plan: %s %s has no place in a package", a.Kind, a.Path)
		}
	}
	return entries, enable, nil
}
