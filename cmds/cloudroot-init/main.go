// Command cloudroot-init is the initramfs's /init (PID 1). It mounts the
// early filesystems, loads drivers, finds and mounts the root, finds the
// NoCloud seed, provisions the root with the init-stage modules, writes the
// hand-off state and status, and switch_roots into the target's init.
//
// It owns no logic of its own: the work is in pkg/bootenv, pkg/stages,
// pkg/modules and friends; this file wires them in boot order and keeps the
// boot going whatever fails, except a missing root filesystem.
//
// Before it touches anything it checks where it is (guard): not PID 1 of
// an initramfs, it prints its usage or version and exits without mounting.
package main

import (
	"fmt"
	"io"
	"os"
)

func main() {
	if code, ok := gate(here(), os.Stdout, os.Stderr); !ok {
		os.Exit(code)
	}
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "cloudroot-init: %v\n", err)
		os.Exit(1)
	}
}

// gate applies guard: ok means boot; otherwise it has printed what it
// had to and code is the exit status.
func gate(w where, stdout, stderr io.Writer) (code int, ok bool) {
	act, why := guard(w)
	switch act {
	case actBoot:
		return 0, true
	case actUsage:
		fmt.Fprint(stdout, usage)
		return 0, false
	case actVersion:
		fmt.Fprintf(stdout, "cloudroot-init %s\n", Version)
		return 0, false
	default:
		fmt.Fprintf(stderr, "cloudroot-init: %s\n%s", why, usage)
		return 1, false
	}
}
