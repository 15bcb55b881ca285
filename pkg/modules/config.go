package modules

import (
	"context"

	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
)

// Config is the merged cloud-config, as decoded from YAML.
type Config map[string]any

// Has reports whether key is present (even if null).
func (c Config) Has(key string) bool { _, ok := c[key]; return ok }

// scalarString is pyval.ScalarStr.
func scalarString(v any) string { return pyval.ScalarStr(v) }

// StringList accepts a string or a list of scalars, as many cloud-init
// keys do (pyval.ScalarList).
func StringList(v any) []string { return pyval.ScalarList(v) }

// stringList is a string or a list as cloud-init's callers iterate it:
// a string is a one-item list, a list gives scalarString of each item
// ("" kept); anything else is nil.
func stringList(v any) []string {
	switch t := v.(type) {
	case string:
		return []string{t}
	case []any:
		out := make([]string, 0, len(t))
		for _, e := range t {
			out = append(out, scalarString(e))
		}
		return out
	}
	return nil
}

// Typed makes a module's Run from run, which receives the module's
// configuration as a T: the runner's call decodes the merged config into
// T once, with pyval's lenient decoder (cloud-init's loose typing, its
// deprecated spellings translated and logged as deprecations), before run
// starts. T is a struct whose `cfg` tags name the top-level keys the
// module reads; a value of the wrong shape fails the module with the
// decoder's message, as cloud-init's handler raises.
func Typed[T any](run func(ctx context.Context, c *Context, cfg T) error) func(context.Context, *Context) error {
	return func(ctx context.Context, c *Context) error {
		var cfg T
		if err := c.decoder().Decode(c.Config, &cfg); err != nil {
			return err
		}
		return run(ctx, c, cfg)
	}
}

// isMapping reports whether v decoded from a YAML mapping.
func isMapping(v any) bool {
	switch v.(type) {
	case map[string]any:
		return true
	}
	return false
}

// NoKeys is the configuration of a module that reads no keys of its own
// (reset_rmc; ubuntu_autoinstall, whose autoinstall key is the live
// installer's): Typed(run) with it decodes nothing.
type NoKeys struct{}

// decoder is the lenient decoder reporting to c.
func (c *Context) decoder() *pyval.Decoder {
	return &pyval.Decoder{
		Deprecated: c.deprecated,
		Warn:       func(msg string) { c.Warnf("%s", msg) },
	}
}
