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
	Run:        Typed(runKeyboard),
}

// keyboardConfig is the module's configuration.
type keyboardConfig struct {
	Present  bool             `cfg:"keyboard,present"`
	Keyboard *keyboardSection `cfg:"keyboard"`
}

// keyboardSection is the keyboard mapping; a model not given is the
// distro's default.
type keyboardSection struct {
	HasLayout bool    `cfg:"layout,present"`
	Layout    string  `cfg:"layout"`
	Model     *string `cfg:"model"`
	Variant   string  `cfg:"variant"`
	Options   string  `cfg:"options"`
}

// TypeErrors words a keyboard value that is not a mapping.
func (keyboardConfig) TypeErrors() map[string]string {
	return map[string]string{"keyboard": "keyboard: expected a mapping, got %s"}
}

func runKeyboard(ctx context.Context, c *Context, cfg keyboardConfig) error {
	if !cfg.Present {
		return nil
	}
	kc := cfg.Keyboard
	switch {
	case kc == nil:
		return fmt.Errorf("keyboard: expected a mapping, got %s", pyval.TypeName(nil))
	case !kc.HasLayout:
		return errors.New("keyboard: 'layout' is required")
	}
	f := c.Facts()
	model := f.DefaultKeyboardModel()
	if kc.Model != nil {
		model = *kc.Model
	}
	isDir := func(p string) bool { fi, err := c.Root.Stat(p); return err == nil && fi.IsDir() }
	isFile := func(p string) bool { fi, err := c.Root.Stat(p); return err == nil && fi.Mode().IsRegular() }
	writes, cmds, warnings, err := f.KeyboardPlan(kc.Layout, model, kc.Variant, kc.Options, isDir, isFile)
	if err != nil {
		return err
	}
	for _, w := range warnings {
		c.Warnf("%s", w)
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
		if err := c.RunCmd(ctx, cmd); err != nil {
			return fmt.Errorf("keyboard: %w", err)
		}
	}
	return nil
}
