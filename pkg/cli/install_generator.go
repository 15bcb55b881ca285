//go:build !cloudroot_front

package cli

// `cloudroot generator NORMAL_DIR EARLY_DIR LATE_DIR` — the systemd
// generator `cloudroot install` links as
// /usr/lib/systemd/system-generators/cloudroot-generator (the agent answers
// to that name, see Argv). The contract, after cloud-init 26.x's
// cloud-init-generator, which runs ds-identify and follows its exit code:
//
//   - cloudroot's initramfs ran (its hand-off state is in /run): its
//     ds-identify decided. Disabled when cloud-init=disabled is on the
//     kernel command line, KERNEL_CMDLINE=cloud-init=disabled is in the
//     environment (containers), /etc/cloud/cloud-init.disabled exists, or
//     the initramfs left /run/cloud-init/disabled (no datasource).
//   - No hand-off state (the root was booted by another initrd, or is a
//     container): ds-identify runs here, in-process (pkg/identify, the
//     code the initramfs runs), on this root's /sys, /proc/cmdline, block
//     devices, /etc/cloud and environment; a result already in
//     /run/cloud-init (.ds-identify.result with cloud.cfg) is reused as
//     ds-identify does. It writes /run/cloud-init/cloud.cfg (the
//     datasource_list the in-root stages read), ds-identify.log and
//     .ds-identify.result. Exit 0 enables; 1 (nothing found) and 2
//     (disabled by command line, file or environment) disable.
//   - Enabled: EARLY_DIR/multi-user.target.wants/cloud-init.target links to
//     /usr/lib/systemd/system/cloud-init.target, and /run/cloud-init/enabled
//     replaces /run/cloud-init/disabled. Disabled: that link is removed and
//     /run/cloud-init/disabled written.
//   - cloudroot's initramfs ran and the in-root stages did not (no
//     /run/cloud-init/cloudroot/in-root): the in-root stage units
//     (cloudroot-local.service, cloudroot-network.service) are masked for
//     this boot, EARLY_DIR/<unit> -> /dev/null as systemd-debug-generator
//     masks systemd.mask= units. Their conditions would skip them, but
//     systemd checks a condition only when it starts the unit, and it
//     starts cloudroot-network.service (cloud-init-network's ordering)
//     after systemd-networkd-wait-online and before sysinit.target and
//     sshd: unmasked, the skipped unit holds the whole boot and sshd until
//     the network is online (22 s of a trixie boot under TCG).
//   - /run/cloud-init/cloud-init-generator.log is this run's, with
//     cloud-init's generator's lines ("checking for datasource",
//     "ds-identify rc=N", "enabled via LINK -> TARGET", "cloud-init is
//     enabled but no datasource found, disabling", ...).
//   - Exit 0 whatever happens to the log; 1 when the link could not be
//     made or removed, 3 when ds-identify could not run (systemd logs a
//     failing generator and boots on).

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/identify"
	"github.com/cloudroot/cloudroot/pkg/state"
)

func generatorCommand() Command {
	return Command{
		Name:  "generator",
		Short: "The systemd generator: enable cloud-init.target unless cloud-init is disabled (generator NORMAL EARLY LATE).",
		Run:   runGenerator,
	}
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
	normal, early, late := args[0], args[0], args[0]
	if len(args) == 3 {
		early, late = args[1], args[2]
	}
	link := filepath.Join(early, "multi-user.target.wants", "cloud-init.target")
	runDir := env.Path("/run/cloud-init")
	log := []string{fmt.Sprintf("%s normal=%s early=%s late=%s", GeneratorName, normal, early, late), "checking for datasource"}
	// Which marker was there before this run (ds-identify replaces it).
	_, wasEnabled := os.Stat(filepath.Join(runDir, "enabled"))
	_, wasDisabled := os.Stat(filepath.Join(runDir, "disabled"))
	rc := generatorDecision(env, &log)
	var err error
	switch rc {
	case identify.ExitEnabled:
		if _, lerr := os.Lstat(link); lerr == nil {
			log = append(log, "already enabled: no change needed")
		} else if mkErr := os.MkdirAll(filepath.Dir(link), 0o755); mkErr != nil {
			err = fmt.Errorf("creating %s: %w", filepath.Dir(link), mkErr)
		} else if lnErr := os.Symlink(filepath.Join(systemdUnitDir, "cloud-init.target"), link); lnErr != nil {
			err = fmt.Errorf("linking %s: %w", link, lnErr)
		} else {
			log = append(log, "enabled via "+link+" -> "+filepath.Join(systemdUnitDir, "cloud-init.target"))
		}
		if wasDisabled == nil {
			log = append(log, "removing "+filepath.Join(runDir, "disabled")+" and creating "+filepath.Join(runDir, "enabled"))
		}
		markRun(runDir, "enabled", "disabled")
	case identify.ExitDisabled, identify.ExitOff:
		if rc == identify.ExitDisabled {
			log = append(log, "cloud-init is enabled but no datasource found, disabling")
		} else {
			log = append(log, "cloud-init is disabled by kernel command line or etc_file")
		}
		if _, lerr := os.Lstat(link); lerr != nil {
			log = append(log, "already disabled: no change needed [no "+link+"]")
		} else if rmErr := os.Remove(link); rmErr != nil && !errors.Is(rmErr, fs.ErrNotExist) {
			err = fmt.Errorf("removing %s: %w", link, rmErr)
		} else {
			log = append(log, "disabled. removed existing "+link)
		}
		if wasEnabled == nil {
			log = append(log, "removing "+filepath.Join(runDir, "enabled")+" and creating "+filepath.Join(runDir, "disabled"))
		}
		markRun(runDir, "disabled", "enabled")
	default:
		err = fmt.Errorf("unexpected result 'ds=%d'", rc)
	}
	if mErr := maskInRootUnits(env, early, &log); mErr != nil {
		err = errors.Join(err, mErr)
	}
	if err != nil {
		log = append(log, err.Error())
	}
	// The log is this run's (cloud-init's generator truncates it).
	if mkErr := os.MkdirAll(runDir, 0o755); mkErr == nil {
		os.WriteFile(filepath.Join(runDir, "cloud-init-generator.log"), []byte(strings.Join(log, "\n")+"\n"), 0o644)
	}
	if err != nil {
		fmt.Fprintln(env.Stderr, GeneratorName+": "+err.Error())
		if rc != identify.ExitEnabled && rc != identify.ExitDisabled && rc != identify.ExitOff {
			return 3
		}
		return 1
	}
	return 0
}

// generatorDecision is ds-identify's exit code for this boot, as
// cloud-init's generator gets it, with the lines it logs. When cloudroot's
// initramfs ran (its hand-off state is in /run), its ds-identify decided
// and the generator follows it (the explicit switches first); otherwise
// ds-identify runs here, in-process (pkg/identify: the code the initramfs
// runs), reusing a result already in /run/cloud-init as ds-identify does,
// and writes cloud.cfg (the datasource_list the in-root stages read),
// ds-identify.log and the marker.
func generatorDecision(env *Env, log *[]string) int {
	if _, err := os.Stat(env.Path(state.StateFile)); err == nil {
		*log = append(*log, "cloudroot's initramfs ran (its hand-off state is there): its ds-identify decided")
		if why := generatorDisabled(env); why != "" {
			*log = append(*log, "cloud-init is disabled ("+why+")")
			if strings.HasPrefix(why, "ds-identify") {
				return identify.ExitDisabled
			}
			return identify.ExitOff
		}
		return identify.ExitEnabled
	}
	*log = append(*log, "no cloudroot initramfs state for this boot: running ds-identify in the root")
	if code, ok := cachedIdentify(env.Root); ok {
		*log = append(*log, fmt.Sprintf("ds-identify rc=%d (cached in %s)", code, identify.PathRunResult))
		return code
	}
	r, err := dsIdentify(env, env.Root, false)
	if err != nil {
		*log = append(*log, "ds-identify: "+err.Error())
		return identifyFailed
	}
	*log = append(*log, fmt.Sprintf("ds-identify rc=%d", r.ExitCode), fmt.Sprintf("ds-identify: %s: %s", r.Decision, r.Reason))
	return r.ExitCode
}

// inRootUnits are the units of the in-root local and network stages
// (cloud-init-local.service and cloud-init-network.service by their
// aliases).
var inRootUnits = []string{"cloudroot-local.service", "cloudroot-network.service"}

// maskInRootUnits links inRootUnits to /dev/null in the generator's early
// directory when cloudroot's initramfs handed over this boot's state and
// no in-root stage wrote it (the marker comes first, so a daemon-reload
// between the in-root stages never masks the network one).
func maskInRootUnits(env *Env, early string, log *[]string) error {
	if _, err := os.Stat(env.Path(state.StateFile)); err != nil {
		return nil
	}
	if _, err := os.Stat(env.Path(state.InRootMarker)); err == nil {
		return nil
	}
	if err := os.MkdirAll(early, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", early, err)
	}
	var errs []error
	for _, u := range inRootUnits {
		link := filepath.Join(early, u)
		if _, err := os.Lstat(link); err == nil {
			continue
		}
		if err := os.Symlink("/dev/null", link); err != nil {
			errs = append(errs, fmt.Errorf("masking %s: %w", u, err))
			continue
		}
		*log = append(*log, "the initramfs ran the local and network stages: masked "+link+" -> /dev/null")
	}
	return errors.Join(errs...)
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
