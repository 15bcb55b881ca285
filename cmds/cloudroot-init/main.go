// Command cloudroot-init is the initramfs's /init (PID 1). It mounts the
// early filesystems, loads drivers, finds and mounts the root, finds the
// NoCloud seed, provisions the root with the init-stage modules, writes the
// hand-off state and status, and switch_roots into the target's init.
//
// It owns no logic of its own: the work is in pkg/bootenv, pkg/stages,
// pkg/modules and friends; this file wires them in boot order and keeps the
// boot going whatever fails, except a missing root filesystem.
package main

import (
	"fmt"
	"os"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "cloudroot-init: %v\n", err)
		os.Exit(1)
	}
}
