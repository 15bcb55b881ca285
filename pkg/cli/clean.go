//go:build !cloudroot_front

package cli

// clean: remove cloud-init's artifacts so the next boot provisions afresh,
// as cloud-init 26.x's cloudinit/cmd/clean.py does, confined to env.Root:
//
//   - everything under /var/lib/cloud except seed/ (also seed/ with --seed)
//     and dot files (cloud-init's glob skips them);
//     "Artifacts already cleaned." (stderr and stdout) when it is gone;
//   - --logs: def_log_file and the `output` tee targets of the system
//     config and their rotated copies, never device files. Without an
//     `output` key cloudroot counts /var/log/cloud-init-output.log, which it
//     always writes (cloud-init gets it from its 05_logging.cfg);
//   - --configs network: the network files cloud-init renders (netplan
//     50-cloud-init.yaml, NetworkManager 99-cloud-init.conf and
//     cloud-init-*.nmconnection, networkd 10-cloud-init-*.network, ENI
//     50-cloud-init.cfg); ssh_config: sshd_config.d/50-cloud-init.conf;
//     fstab: /etc/fstab lines carrying comment=cloudconfig; datasource:
//     nothing (no cloudroot datasource keeps state outside /var/lib/cloud),
//     but "No datasource found, nothing cleaned." when 26.x's fetch would
//     find none (no hand-off state, no None in datasource_list) and
//     /var/lib/cloud exists; all: every one of them;
//   - the executables in /etc/cloud/clean.d run, in name order; a file
//     there that is not executable is skipped with subp's WARNING;
//   - --machine-id: /etc/machine-id becomes "uninitialized\n" (0444) under
//     systemd, is removed otherwise;
//   - --reboot: `shutdown -r now` once everything else succeeded.
//
// Exit 0, or 1 with "Error:\n..." on stderr when something could not be
// removed, a clean.d part failed or the reboot could not be started.

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/cloudroot/cloudroot/pkg/cilog"
	"github.com/cloudroot/cloudroot/pkg/cloudcfg"
	"github.com/cloudroot/cloudroot/pkg/state"
	"github.com/cloudroot/cloudroot/pkg/target"
)

func cleanCommand() Command {
	return Command{
		Name:  "clean",
		Short: "Remove logs and artifacts so cloud-init can re-run.",
		Run:   runClean,
	}
}

const cleanUsage = "usage: cloud-init clean [-h] [-l] [--machine-id] [-r] [-s]\n" +
	"                        [-c {all,ssh_config,network,datasource,fstab} [{all,ssh_config,network,datasource,fstab} ...]]\n"

// Files cloud-init generates, per --configs type.
var (
	cleanNetworkFiles = []string{
		"/etc/netplan/50-cloud-init.yaml",
		"/etc/NetworkManager/conf.d/99-cloud-init.conf",
		"/etc/NetworkManager/conf.d/30-cloud-init-ip6-addr-gen-mode.conf",
		"/etc/NetworkManager/system-connections/cloud-init-*.nmconnection",
		"/etc/systemd/network/10-cloud-init-*.network",
		"/etc/network/interfaces.d/50-cloud-init.cfg",
	}
	cleanSSHFiles = []string{"/etc/ssh/sshd_config.d/50-cloud-init.conf"}
)

const (
	cleanRunPartsDir = "/etc/cloud/clean.d"
	machineIDFile    = "/etc/machine-id"
	fstabMarker      = "comment=cloudconfig"
)

type cleanOptions struct {
	logs, seed, machineID, reboot bool
	configs                       []string
}

func parseCleanArgs(env *Env, args []string) (cleanOptions, int, bool) {
	var o cleanOptions
	choices := []string{"all", "ssh_config", "network", "datasource", "fstab"}
	for i := 0; i < len(args); i++ {
		switch a := args[i]; a {
		case "-l", "--logs":
			o.logs = true
		case "-s", "--seed":
			o.seed = true
		case "--machine-id":
			o.machineID = true
		case "-r", "--reboot":
			o.reboot = true
		case "-c", "--configs":
			n := 0
			for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				i++
				if !slices.Contains(choices, args[i]) {
					fmt.Fprintf(env.Stderr, "%scloud-init clean: error: argument -c/--configs: invalid choice: '%s' (choose from 'all', 'ssh_config', 'network', 'datasource', 'fstab')\n", cleanUsage, args[i])
					return o, 2, false
				}
				o.configs = append(o.configs, args[i])
				n++
			}
			if n == 0 {
				fmt.Fprintf(env.Stderr, "%scloud-init clean: error: argument -c/--configs: expected at least one argument\n", cleanUsage)
				return o, 2, false
			}
		case "-h", "--help":
			fmt.Fprint(env.Stdout, cleanUsage+cleanHelp)
			return o, 0, false
		default:
			fmt.Fprintf(env.Stderr, "%scloud-init clean: error: unrecognized arguments: %s\n", cleanUsage, a)
			return o, 2, false
		}
	}
	return o, 0, true
}

func (o cleanOptions) config(kind string) bool {
	return slices.Contains(o.configs, "all") || slices.Contains(o.configs, kind)
}

func runClean(ctx context.Context, env *Env, args []string) int {
	o, code, ok := parseCleanArgs(env, args)
	if !ok {
		return code
	}
	code = removeArtifacts(env, o)
	if o.machineID {
		if isDir(env.Path("/run/systemd/system")) {
			p := env.Path(machineIDFile)
			os.Remove(p)
			if err := os.WriteFile(p, []byte("uninitialized\n"), 0o444); err != nil {
				fmt.Fprintf(env.Stderr, "Error:\nCould not write %s: %v\n", machineIDFile, err)
				code = 1
			}
		} else {
			os.Remove(env.Path(machineIDFile))
		}
	}
	if code == 0 && o.reboot {
		argv := []string{"shutdown", "-r", "now"}
		root, err := target.New(env.Root)
		if err == nil {
			err = root.Run(ctx, target.Cmd{Argv: argv, Stdout: env.Stdout, Stderr: env.Stderr})
		}
		if err != nil {
			fmt.Fprintf(env.Stderr, "Error:\nCould not reboot this system using \"%s\": %v\n", pyList(argv), err)
			code = 1
		}
	}
	return code
}

// pyList is Python's str() of a list of strings.
func pyList(s []string) string {
	q := make([]string, len(s))
	for i, v := range s {
		q[i] = "'" + v + "'"
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// cleanConfig is the system configuration clean reads (init.read_cfg):
// cloud.cfg, cloud.cfg.d and the runtime config.
func cleanConfig(env *Env) map[string]any {
	root, err := target.New(env.Root)
	if err != nil {
		return nil
	}
	if m, err := cloudcfg.Load(cloudcfg.LoadOptions{Root: root}); err == nil && m != nil {
		return m.System
	}
	return nil
}

// cleanFindsDatasource is whether 26.x's clean, asking init.fetch() with
// no dependencies, finds a datasource: this boot's hand-off state (its
// cached datasource), or None in datasource_list (the only source without
// dependencies; the built-in list ends with it).
func cleanFindsDatasource(env *Env, cfg map[string]any) bool {
	if _, err := os.Stat(env.Path(state.StateFile)); err == nil {
		return true
	}
	list, ok := cfg["datasource_list"].([]any)
	if !ok {
		return true
	}
	for _, v := range list {
		if v == "None" {
			return true
		}
	}
	return false
}

func removeArtifacts(env *Env, o cleanOptions) int {
	cfg := cleanConfig(env)
	if o.logs {
		for _, l := range cleanLogFiles(env, cfg) {
			if fi, err := os.Stat(l); err == nil && fi.Mode()&(os.ModeDevice|os.ModeCharDevice) == 0 {
				os.Remove(l)
			}
		}
	}
	if o.config("network") {
		for _, g := range cleanNetworkFiles {
			ms, _ := filepath.Glob(env.Path(g))
			for _, m := range ms {
				os.Remove(m)
			}
		}
	}
	if o.config("ssh_config") {
		for _, f := range cleanSSHFiles {
			os.Remove(env.Path(f))
		}
	}
	if o.config("fstab") {
		cleanFstab(env.Path("/etc/fstab"))
	}
	cloudDir := env.Path(state.CloudDir)
	if !isDir(cloudDir) {
		multiLog(env, "Artifacts already cleaned.")
		return 0
	}
	if o.config("datasource") && !cleanFindsDatasource(env, cfg) {
		// No cloudroot datasource keeps anything to clean outside
		// /var/lib/cloud; 26.x says when it found none to ask.
		multiLog(env, "No datasource found, nothing cleaned.")
	}
	ents, _ := filepath.Glob(cloudDir + "/*")
	for _, p := range ents {
		if strings.HasPrefix(filepath.Base(p), ".") || filepath.Base(p) == "seed" && !o.seed {
			continue // glob.glob's * skips dot files
		}
		fi, err := os.Lstat(p)
		if err == nil && fi.IsDir() {
			err = os.RemoveAll(p)
		} else if err == nil {
			err = os.Remove(p)
		}
		if err != nil {
			fmt.Fprintf(env.Stderr, "Error:\nCould not remove %s: %v\n", strings.TrimPrefix(p, strings.TrimSuffix(env.Root, "/")), err)
			return 1
		}
	}
	if err := runParts(env, env.Path(cleanRunPartsDir)); err != nil {
		fmt.Fprintf(env.Stderr, "Error:\nFailure during run-parts of %s: %v\n", cleanRunPartsDir, err)
		return 1
	}
	return 0
}

var reOutputTarget = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(\||>+)\s*(.*)$`) })

// cleanLogFiles is cloud-init's get_config_logfiles: def_log_file, the
// `output` targets (a file, or `tee -a FILE`) and their rotated copies.
func cleanLogFiles(env *Env, cfg map[string]any) []string {
	logs := []string{state.LogFile}
	if v, ok := cfg["def_log_file"].(string); ok && v != "" {
		logs[0] = v
	}
	outputs := []string{"| tee -a " + state.OutputLogFile}
	if out, ok := cfg["output"].(map[string]any); ok {
		outputs = nil
		switch v := out["all"].(type) {
		case string:
			outputs = append(outputs, v)
		case []any:
			for _, e := range v {
				if s, ok := e.(string); ok {
					outputs = append(outputs, s)
				}
			}
		}
	}
	for _, f := range outputs {
		m := reOutputTarget().FindStringSubmatch(f)
		if m == nil {
			continue
		}
		parts := strings.Fields(m[2])
		switch {
		case len(parts) == 1:
			logs = append(logs, parts[0])
		case len(parts) >= 3 && parts[0] == "tee" && parts[1] == "-a":
			logs = append(logs, parts[2])
		}
	}
	var out []string
	for _, l := range logs {
		p := env.Path(l)
		out = append(out, p)
		rot, _ := filepath.Glob(p + "*")
		for _, r := range rot {
			if fi, err := os.Stat(r); err == nil && fi.Mode().IsRegular() && r != p {
				out = append(out, r)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// cleanFstab drops the /etc/fstab lines cc_mounts wrote.
func cleanFstab(p string) {
	b, err := os.ReadFile(p)
	if err != nil {
		return
	}
	lines := strings.SplitAfter(string(b), "\n")
	var keep []string
	for _, l := range lines {
		if !strings.Contains(l, fstabMarker) {
			keep = append(keep, l)
		}
	}
	if len(keep) != len(lines) {
		os.WriteFile(p, []byte(strings.Join(keep, "")), 0o644)
	}
}

// runParts runs the executable regular files of dir in name order, as
// cloud-init's subp.runparts; failures are collected in its words.
func runParts(env *Env, dir string) error {
	// subp.runparts logs through the basic logging clean has: stderr.
	log := slog.New(cilog.NewHandler(env.Stderr, cilog.Options{Level: slog.LevelWarn, Logger: "subp.py"}))
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var failed []string
	attempted := 0
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		fi, err := os.Stat(p)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if fi.Mode()&0o111 == 0 {
			rel := filepath.Join(cleanRunPartsDir, e.Name())
			log.Warn(fmt.Sprintf("skipping %s as its not executable or the underlying file system is mounted without executable permissions.", rel))
			continue
		}
		attempted++
		cmd := exec.Command(p)
		cmd.Stdout, cmd.Stderr = env.Stdout, env.Stderr
		if err := cmd.Run(); err != nil {
			failed = append(failed, e.Name())
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("Runparts: %d failures (%s) in %d attempted commands", len(failed), strings.Join(failed, ","), attempted)
	}
	return nil
}

// multiLog is cloud-init's multi_log: text on stderr and on /dev/console,
// or on stdout when there is no console to write to.
func multiLog(env *Env, text string) {
	fmt.Fprint(env.Stderr, text)
	con := env.Path("/dev/console")
	if _, err := os.Stat(con); err == nil {
		f, err := os.OpenFile(con, os.O_WRONLY, 0)
		if err == nil {
			_, err = f.WriteString(text)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err == nil {
			return
		}
		fmt.Fprintln(env.Stdout, "Failed to write to /dev/console")
	}
	fmt.Fprint(env.Stdout, text)
}

// cleanHelp is 26.x's help after the usage.
const cleanHelp = "\noptions:\n  -h, --help            show this help message and exit\n  -l, --logs            Remove cloud-init logs.\n  --machine-id          Set /etc/machine-id to 'uninitialized\\n' for golden\n                        image creation. On next boot, systemd generates a new\n                        machine-id. Remove /etc/machine-id on non-systemd\n                        environments.\n  -r, --reboot          Reboot system after logs are cleaned so cloud-init re-\n                        runs.\n  -s, --seed            Remove cloud-init seed directory /var/lib/cloud/seed.\n  -c {all,ssh_config,network,datasource,fstab} [{all,ssh_config,network,datasource,fstab} ...], --configs {all,ssh_config,network,datasource,fstab} [{all,ssh_config,network,datasource,fstab} ...]\n                        Remove cloud-init generated config files of a certain\n                        type. Config types: all, ssh_config, network\n"
