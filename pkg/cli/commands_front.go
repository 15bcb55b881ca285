//go:build cloudroot_front

package cli

// Commands is what the front binary (cmds/cloudroot, built with the
// cloudroot_front tag) answers itself: `status`, besides the top level's
// --version. Every other command line is handed to the full agent before
// Run sees it, so this package links none of the other commands'
// dependencies (docs/performance.md, "A front binary").
func Commands() []Command {
	return []Command{statusCommand()}
}
