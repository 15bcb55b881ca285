package modules

// snap, as cloud-init 26.x's cc_snap: once snap seeding is done,
// `snap.assertions` (a list, or a dict whose values are taken) are joined
// with newlines into instance/snapd.assertions and acked with `snap ack`;
// then `snap.commands` (a list, or a dict run in key order) run one by
// one: a list gets `snap` prepended unless it starts with it (a null first
// element drops itself instead), a string runs in a shell (one not starting
// with "snap " is a warning). Failing commands are collected and fail the
// module after all ran.
//
// A dict of assertions is taken in key order: cloudroot's decoded config
// keeps no YAML order (cloud-init takes the dict's own order).

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
	"github.com/cloudroot/cloudroot/pkg/state"
)

// Snap is cc_snap.
var Snap = Module{
	Name:       "snap",
	Frequency:  state.PerInstance,
	Keys:       []string{"snap"},
	Distros:    []string{"ubuntu"},
	ActivateBy: []string{"snap"},
	Run:        Typed(runSnap),
}

// snapConfig is the module's configuration: snap's assertions and
// commands as given (a list or a mapping each, checked where they are
// used); a snap that is not a mapping is no configuration.
type snapConfig struct {
	Snap struct {
		// All is the whole mapping: only its size is read.
		All        map[string]any `cfg:",all"`
		Assertions any            `cfg:"assertions"`
		Commands   any            `cfg:"commands"`
	} `cfg:"snap,loose"`
}

func runSnap(ctx context.Context, c *Context, sc snapConfig) error {
	cfg := sc.Snap
	if len(cfg.All) == 0 {
		c.Log.Debug("Skipping module named snap, no 'snap' key in configuration")
		return nil
	}
	if err := waitSnapSeeded(ctx, c); err != nil {
		return err
	}
	if err := snapAssertions(ctx, c, cfg.Assertions); err != nil {
		return err
	}
	return snapCommands(ctx, c, cfg.Commands)
}

// sortedValues are a dict's values in key order.
func sortedValues(m map[string]any) []any {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]any, 0, len(keys))
	for _, k := range keys {
		out = append(out, m[k])
	}
	return out
}

func snapAssertions(ctx context.Context, c *Context, v any) error {
	var list []any
	switch t := v.(type) {
	case nil:
		return nil
	case map[string]any:
		list = sortedValues(t)
	case []any:
		list = t
	default:
		if !pyval.Truthy(v) {
			return nil
		}
		return fmt.Errorf("assertion parameter was not a list or dict: %s", pyval.Str(v))
	}
	if len(list) == 0 {
		return nil
	}
	parts := make([]string, 0, len(list))
	for _, a := range list {
		parts = append(parts, scalarString(a))
	}
	file := c.InstanceFile("snapd.assertions")
	if err := c.Root.WriteFile(file, []byte(strings.Join(parts, "\n")), 0o644); err != nil {
		return fmt.Errorf("snap: %w", err)
	}
	_, err := c.RunCapture(ctx, "snap", "ack", file)
	return err
}

// prependBase is subp.prepend_base_command: commands as argv lists.
func prependBase(c *Context, base string, cmds []any) ([][]string, error) {
	var out [][]string
	var warnings, bad []string
	for _, cmd := range cmds {
		switch t := cmd.(type) {
		case []any:
			argv := make([]string, 0, len(t)+1)
			switch {
			case len(t) > 0 && t[0] == nil:
				t = t[1:]
			case len(t) == 0 || scalarString(t[0]) != base:
				argv = append(argv, base)
			}
			for _, a := range t {
				argv = append(argv, scalarString(a))
			}
			out = append(out, argv)
		case string:
			if !strings.HasPrefix(t, base+" ") {
				warnings = append(warnings, t)
			}
			out = append(out, ShellCmd(t))
		default:
			bad = append(bad, pyval.Str(cmd))
		}
	}
	if len(warnings) > 0 {
		c.Warnf("Non-%s commands in %s config:\n%s", base, base, strings.Join(warnings, "\n"))
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("Invalid %s config. These commands are not a string or list:\n%s", base, strings.Join(bad, "\n"))
	}
	return out, nil
}

func snapCommands(ctx context.Context, c *Context, v any) error {
	var list []any
	switch t := v.(type) {
	case nil:
		return nil
	case map[string]any:
		list = sortedValues(t)
	case []any:
		list = t
	default:
		if !pyval.Truthy(v) {
			return nil
		}
		return fmt.Errorf("commands parameter was not a list or dict: %s", pyval.Str(v))
	}
	if len(list) == 0 {
		return nil
	}
	cmds, err := prependBase(c, "snap", list)
	if err != nil {
		return err
	}
	var failures []error
	for _, argv := range cmds {
		if _, err := c.RunCapture(ctx, argv...); err != nil {
			failures = append(failures, err)
		}
	}
	if len(failures) > 0 {
		err := fmt.Errorf("Failures running snap commands:\n%w", errors.Join(failures...))
		c.Logexc("%v", err)
		return err
	}
	return nil
}
