package cli

// `cloudroot generator NORMAL_DIR EARLY_DIR LATE_DIR` — the systemd
// generator `cloudroot install` links as
// /usr/lib/systemd/system-generators/cloudroot-generator (the agent answers
// to that name, see Argv). The contract, after cloud-init's
// cloud-init-generator:
//
//   - cloud-init is disabled when cloud-init=disabled is on the kernel
//     command line, KERNEL_CMDLINE=cloud-init=disabled is in the environment
//     (containers), /etc/cloud/cloud-init.disabled exists, or the
//     initramfs's ds-identify left /run/cloud-init/disabled (no datasource).
//   - Enabled: EARLY_DIR/multi-user.target.wants/cloud-init.target links to
//     /usr/lib/systemd/system/cloud-init.target, and /run/cloud-init/enabled
//     replaces /run/cloud-init/disabled. Disabled: that link is removed and
//     /run/cloud-init/disabled written.
//   - What it decided is appended to /run/cloud-init/cloud-init-generator.log.
//   - Exit 0 whatever happens to the log; 1 only when the link could not be
//     made or removed (systemd logs a failing generator and boots on).

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
)

func generatorCommand() Command {
	return Command{
		Name:  "generator",
		Short: "The systemd generator: enable cloud-init.target unless cloud-init is disabled (generator NORMAL EARLY LATE).",
		Run:   runGenerator,
	}
}

// Argv turns a process's os.Args into the arguments Run takes: invoked as
// cloudroot-generator (the generator link), the agent runs `generator`;
// invoked as cloud-id, `cloud-id`.
func Argv(osArgs []string) []string {
	if len(osArgs) == 0 {
		return nil
	}
	switch filepath.Base(osArgs[0]) {
	case GeneratorName:
		return append([]string{"generator"}, osArgs[1:]...)
	case "cloud-id":
		return append([]string{"cloud-id"}, osArgs[1:]...)
	}
	return osArgs[1:]
}

func runGenerator(_ context.Context, env *Env, args []string) int {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
		fmt.Fprintln(env.Stdout, "usage: cloudroot generator NORMAL_DIR EARLY_DIR LATE_DIR")
		return 0
	}
	if len(args) != 3 && len(args) != 1 {
		fmt.Fprintln(env.Stderr, "usage: cloudroot generator NORMAL_DIR EARLY_DIR LATE_DIR")
		return 2
	}
	early := args[0]
	if len(args) == 3 {
		early = args[1]
	}
	why := generatorDisabled(env)
	link := filepath.Join(early, "multi-user.target.wants", "cloud-init.target")
	runDir := env.Path("/run/cloud-init")
	var msg string
	var err error
	if why != "" {
		msg = "cloud-init is disabled (" + why + "): not adding cloud-init.target"
		if rmErr := os.Remove(link); rmErr != nil && !errors.Is(rmErr, fs.ErrNotExist) {
			err = fmt.Errorf("removing %s: %w", link, rmErr)
		}
		markRun(runDir, "disabled", "enabled")
	} else {
		msg = "enabled: " + link + " -> " + filepath.Join(systemdUnitDir, "cloud-init.target")
		if mkErr := os.MkdirAll(filepath.Dir(link), 0o755); mkErr != nil {
			err = fmt.Errorf("creating %s: %w", filepath.Dir(link), mkErr)
		} else if cur, rlErr := os.Readlink(link); rlErr != nil || cur != filepath.Join(systemdUnitDir, "cloud-init.target") {
			os.Remove(link)
			if lnErr := os.Symlink(filepath.Join(systemdUnitDir, "cloud-init.target"), link); lnErr != nil {
				err = fmt.Errorf("linking %s: %w", link, lnErr)
			}
		}
		markRun(runDir, "enabled", "disabled")
	}
	line := GeneratorName + ": " + msg
	if err != nil {
		line += ": " + err.Error()
	}
	if f, ferr := os.OpenFile(filepath.Join(runDir, "cloud-init-generator.log"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644); ferr == nil {
		fmt.Fprintln(f, line)
		f.Close()
	}
	if err != nil {
		fmt.Fprintln(env.Stderr, line)
		return 1
	}
	return 0
}

// generatorDisabled says why cloud-init is disabled on this boot, or "".
func generatorDisabled(env *Env) string {
	if os.Getenv("KERNEL_CMDLINE") == "cloud-init=disabled" {
		return "KERNEL_CMDLINE=cloud-init=disabled"
	}
	if b, err := os.ReadFile(env.Path("/proc/cmdline")); err == nil && bootenv.ParseCmdline(strings.TrimSpace(string(b))).Disabled() {
		return "cloud-init=disabled on the kernel command line"
	}
	if _, err := os.Stat(env.Path("/etc/cloud/cloud-init.disabled")); err == nil {
		return "/etc/cloud/cloud-init.disabled exists"
	}
	if _, err := os.Stat(env.Path("/run/cloud-init/disabled")); err == nil {
		return "ds-identify in the initramfs disabled it (/run/cloud-init/disabled)"
	}
	return ""
}

// markRun writes the on marker in /run/cloud-init and removes the off one,
// as cloud-init's generator does. Best effort: /run may not be writable yet.
func markRun(runDir, on, off string) {
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		return
	}
	os.Remove(filepath.Join(runDir, off))
	if f, err := os.OpenFile(filepath.Join(runDir, on), os.O_WRONLY|os.O_CREATE, 0o644); err == nil {
		f.Close()
	}
}
