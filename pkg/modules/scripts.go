package modules

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/state"
)

// runParts runs every executable regular file in dir (inside the target) in
// lexical order, like cloud-init's util.runparts: a failure is recorded and
// the rest still run; non-executable files are skipped.
func runParts(ctx context.Context, c *Context, dir string, env map[string]string) error {
	return runPartsPrefix(ctx, c, dir, env, nil)
}

// runPartsPrefix is runParts with a command prepended to every script
// (cloud-init's exe_prefix, used for vendor_data.prefix).
func runPartsPrefix(ctx context.Context, c *Context, dir string, env map[string]string, prefix []string) error {
	ents, err := c.Root.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // subp.runparts' skip_no_exist, silently
	}
	if err != nil {
		c.Log.Debug("no scripts", "path", dir, "err", err)
		return nil
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	var failed []string
	var errs []error
	for _, n := range names {
		p := path.Join(dir, n)
		fi, err := c.Root.Stat(p)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if fi.Mode().Perm()&0o111 == 0 {
			c.Log.Debug("skipping non-executable script", "path", p)
			continue
		}
		c.Log.Info("running script", "path", p)
		argv := append(append([]string{}, prefix...), p)
		if err := runFile(ctx, c, argv, env); err != nil {
			failed = append(failed, n)
			errs = append(errs, fmt.Errorf("%s: %w", p, err))
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("runparts: %d failures (%s) in %d attempted commands: %w",
			len(failed), strings.Join(failed, ","), len(names), errors.Join(errs...))
	}
	return nil
}

func scriptsModule(name string, freq state.Frequency, dir func(*Context) string) Module {
	return Module{
		Name:      name,
		Frequency: freq,
		Run: func(ctx context.Context, c *Context) error {
			d := dir(c)
			if err := runParts(ctx, c, d, map[string]string{"INSTANCE_ID": c.InstanceID}); err != nil {
				return fmt.Errorf("%s: failed to run module %s (scripts in %s): %w", name, name, d, err)
			}
			return nil
		},
	}
}

// Script modules of the final stage.
var (
	ScriptsPerOnce     = scriptsModule("scripts_per_once", state.PerOnce, func(*Context) string { return state.ScriptsPerOnce })
	ScriptsPerBoot     = scriptsModule("scripts_per_boot", state.PerAlways, func(*Context) string { return state.ScriptsPerBoot })
	ScriptsPerInstance = scriptsModule("scripts_per_instance", state.PerInstance, func(*Context) string { return state.ScriptsPerInst })
	ScriptsUser        = scriptsModule("scripts_user", state.PerInstance, func(c *Context) string { return c.InstanceDir() + "/scripts" })
)

// ScriptsVendor is cc_scripts_vendor: vendor-data scripts from
// instance/scripts/vendor, each run behind vendor_data.prefix when set (a
// string or a list, as cloud-init accepts).
var ScriptsVendor = Module{
	Name:      "scripts_vendor",
	Frequency: state.PerInstance,
	Keys:      []string{"vendor_data"},
	Run: Typed(func(ctx context.Context, c *Context, cfg scriptsVendorConfig) error {
		d := c.InstanceDir() + "/scripts/vendor"
		prefix := cfg.VendorData.Prefix
		if err := runPartsPrefix(ctx, c, d, map[string]string{"INSTANCE_ID": c.InstanceID}, prefix); err != nil {
			return fmt.Errorf("scripts_vendor: failed to run module scripts_vendor (scripts in %s): %w", d, err)
		}
		return nil
	}),
}

// scriptsVendorConfig is scripts_vendor's configuration (a vendor_data
// that is not a mapping gives no prefix).
type scriptsVendorConfig struct {
	VendorData struct {
		Prefix []string `cfg:"prefix,scalar"`
	} `cfg:"vendor_data,loose"`
}
