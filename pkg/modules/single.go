package modules

import "github.com/cloudroot/cloudroot/pkg/state"

// ResolveSingle reports whether name resolves to a module, logging what
// RunSingle logs when it does not (removed, or cloud-init's "Could not
// find module named ..."), without running anything: `cloud-init --force
// single` with no datasource gets that far in 26.x's main_single
// (Modules._fixup_modules) before cloudify fails.
func ResolveSingle(c *Context, name string, freq state.Frequency) bool {
	return len(resolve(c, []Entry{{Name: name, Frequency: string(freq)}})) > 0
}
