package netconfig

import (
	"fmt"
	"io/fs"
	"sort"
)

// Renderer names, as cloud-init spells them in system_info.network.renderers.
const (
	RendererNetplan        = "netplan"
	RendererNetworkd       = "networkd"
	RendererENI            = "eni"
	RendererSysconfig      = "sysconfig"
	RendererNetworkManager = "network-manager"
)

// Header is the comment cloud-init puts at the top of the files it owns.
const Header = `# This file is generated from information provided by the datasource.  Changes
# to it will not persist across an instance reboot.  To disable cloud-init's
# network configuration capabilities, write a file
# /etc/cloud/cloud.cfg.d/99-disable-network-config.cfg with the following:
# network: {config: disabled}
`

// File is one rendered file.
type File struct {
	Data []byte
	Mode fs.FileMode
	// IfMissing: write only when the target has no file at this path (the
	// base /etc/network/interfaces that sources cloud-init's fragment).
	IfMissing bool
	// Owner is the user and group that should own the file ("" is root).
	Owner string
}

// Output is what a renderer produces: files keyed by absolute path on the
// target, and what it had to leave out.
type Output struct {
	Files    map[string]File
	Warnings []string
}

// Paths returns the output paths, sorted.
func (o *Output) Paths() []string {
	ps := make([]string, 0, len(o.Files))
	for p := range o.Files {
		ps = append(ps, p)
	}
	sort.Strings(ps)
	return ps
}

// Contents returns path → content, the shape of cloud-init's renderers.
func (o *Output) Contents() map[string][]byte {
	m := make(map[string][]byte, len(o.Files))
	for p, f := range o.Files {
		m[p] = f.Data
	}
	return m
}

func newOutput() *Output { return &Output{Files: map[string]File{}} }

func (o *Output) add(path, data string, mode fs.FileMode) {
	o.Files[path] = File{Data: []byte(data), Mode: mode}
}

func (o *Output) warnf(format string, args ...any) {
	o.Warnings = append(o.Warnings, fmt.Sprintf(format, args...))
}

// RenderFunc renders a config for one renderer.
type RenderFunc func(cfg *Config) (*Output, error)

// Renderers is every renderer, by name, in cloud-init's default priority.
var Renderers = []struct {
	Name   string
	Render RenderFunc
}{
	{RendererENI, RenderENI},
	{RendererSysconfig, RenderSysconfig},
	{RendererNetplan, RenderNetplan},
	{RendererNetworkManager, RenderNetworkManager},
	{RendererNetworkd, RenderNetworkd},
}

// Render renders cfg with the renderer called name. A disabled config
// renders no files.
func Render(name string, cfg *Config) (*Output, error) {
	for _, r := range Renderers {
		if r.Name == name {
			if cfg == nil || cfg.Disabled {
				return newOutput(), nil
			}
			return r.Render(cfg)
		}
	}
	return nil, fmt.Errorf("renderer %q: %w", name, ErrUnknownRenderer)
}

// unsupported warns about model features a renderer cannot express.
func unsupported(o *Output, cfg *Config, renderer string, routingPolicy, routeExtras bool) {
	for _, i := range cfg.Interfaces {
		if routingPolicy && len(i.RoutingPolicy) > 0 {
			o.warnf("%s: routing-policy cannot be expressed by the %s renderer; dropped", i.Name, renderer)
		}
		if routeExtras {
			for _, s := range i.Subnets {
				for _, r := range s.Routes {
					if r.Table != 0 {
						o.warnf("%s: route to %s in table %d: tables cannot be expressed by the %s renderer; dropped", i.Name, r.To, r.Table, renderer)
					}
					if r.OnLink && r.Table == 0 {
						o.warnf("%s: route to %s: on-link cannot be expressed by the %s renderer; route written without it", i.Name, r.To, renderer)
					}
				}
			}
		}
	}
}

// mainTableOnly returns cfg without the routes of non-main tables, for the
// renderers that cannot express tables: such a route written to the main
// table would hijack traffic (a second default route).
func mainTableOnly(cfg *Config) *Config {
	drop := false
	for _, r := range cfg.Routes {
		drop = drop || r.Table != 0
	}
	for _, i := range cfg.Interfaces {
		for _, s := range i.Subnets {
			for _, r := range s.Routes {
				drop = drop || r.Table != 0
			}
		}
	}
	if !drop {
		return cfg
	}
	keep := func(rs []Route) []Route {
		var out []Route
		for _, r := range rs {
			if r.Table == 0 {
				out = append(out, r)
			}
		}
		return out
	}
	c := *cfg
	c.Routes = keep(cfg.Routes)
	c.Interfaces = make([]*Interface, len(cfg.Interfaces))
	for n, i := range cfg.Interfaces {
		ic := *i
		ic.Subnets = make([]Subnet, len(i.Subnets))
		for k, s := range i.Subnets {
			s.Routes = keep(s.Routes)
			ic.Subnets[k] = s
		}
		c.Interfaces[n] = &ic
	}
	return &c
}
