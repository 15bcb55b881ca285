package modules

// keyboard (cloud-init cc_keyboard, config stage, per-instance, the
// alpine, arch, debian, redhat and suse families) sets the keyboard layout
// with the distro's set_keymap (pkg/distro Facts.KeyboardPlan): Debian
// writes /etc/default/keyboard and restarts console-setup, Alpine runs
// setup-keymap after checking its keymap files, systemd distros run
// `localectl set-x11-keymap`. The service restart happens only on a booted
// system.

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/cloudroot/cloudroot/pkg/distro"
	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
	"github.com/cloudroot/cloudroot/pkg/state"
)

// Keyboard is cc_keyboard.
var Keyboard = Module{
	Name:       "keyboard",
	Frequency:  state.PerInstance,
	Keys:       []string{"keyboard"},
	Distros:    distro.ExpandOSFamily("alpine", "arch", "debian", "redhat", "suse"),
	ActivateBy: []string{"keyboard"},
	Run:        runKeyboard,
}

// keyboardConfig is the module's configuration.
type keyboardConfig struct {
	Present                         bool
	Layout, Model, Variant, Options string
}

func decodeKeyboard(c *Context, defModel string) (keyboardConfig, error) {
	var kc keyboardConfig
	v, ok := c.Config["keyboard"]
	if !ok {
		return kc, nil
	}
	kc.Present = true
	m, ok := v.(map[string]any)
	if !ok {
		return kc, fmt.Errorf("keyboard: expected a mapping, got %s", pyval.TypeName(v))
	}
	if _, ok := m["layout"]; !ok {
		return kc, errors.New("keyboard: 'layout' is required")
	}
	kc.Layout = scalarString(m["layout"])
	kc.Model = defModel
	if x, ok := m["model"]; ok {
		kc.Model = scalarString(x)
	}
	kc.Variant, kc.Options = scalarString(m["variant"]), scalarString(m["options"])
	return kc, nil
}

func runKeyboard(ctx context.Context, c *Context) error {
	f := c.facts()
	kc, err := decodeKeyboard(c, f.DefaultKeyboardModel())
	if err != nil || !kc.Present {
		return err
	}
	isDir := func(p string) bool { fi, err := c.Root.Stat(p); return err == nil && fi.IsDir() }
	isFile := func(p string) bool { fi, err := c.Root.Stat(p); return err == nil && fi.Mode().IsRegular() }
	writes, cmds, warnings, err := f.KeyboardPlan(kc.Layout, kc.Model, kc.Variant, kc.Options, isDir, isFile)
	if err != nil {
		return err
	}
	for _, w := range warnings {
		c.warn("%s", w)
	}
	for _, w := range writes {
		if err := c.Root.WriteFile(w.Path, []byte(w.Content), 0o644); err != nil {
			return fmt.Errorf("keyboard: %w", err)
		}
	}
	for _, cmd := range cmds {
		if f.Keyboard.Restart != "" && slices.Contains(cmd.Argv, f.Keyboard.Restart) && !c.Booted {
			continue // console-setup starts with the system and reads the file
		}
		if err := runCmd(ctx, c, cmd); err != nil {
			return fmt.Errorf("keyboard: %w", err)
		}
	}
	return nil
}
