//go:build !cloudroot_front

package cli

// growpart (cloud-utils' command line, output and exit codes) and
// `cloudroot disk plan|apply` (cloud-init's disk_setup/fs_setup on named
// disks or image files).

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/disk"
	"github.com/cloudroot/cloudroot/pkg/yaml11"
)

func growpartCommand() Command {
	return Command{
		Name:  "growpart",
		Short: "Grow a partition to fill the free space after it (cloud-utils growpart).",
		Run:   runGrowpart,
	}
}

func growpartUsage(w io.Writer) {
	fmt.Fprint(w, `growpart disk partition
   rewrite partition table so that partition takes up all the space it can
   options:
    -h | --help            print Usage and exit
         --fudge F         if part could be resized, but change would be less
                           than 'F' bytes, do not resize (default: 1048576)
    -N | --dry-run         only report what would be done
    -v | --verbose         increase verbosity / debug
    -u | --update  R       update the kernel partition table info after
                           growing: auto (default), force, on or off

   Works on block devices and on image files.
   Example:
    - growpart /dev/sda 1
      Resize partition 1 on /dev/sda
`)
}

// runGrowpart: exit 0 when grown (or, dry, growable), 1 when nothing
// changed, 2 on error — as growpart.
func runGrowpart(ctx context.Context, env *Env, args []string) int {
	var o disk.GrowOptions
	var pos []string
	verbose := 0
	fail := func(format string, a ...any) int {
		fmt.Fprintf(env.Stdout, "FAILED: "+format+"\n", a...)
		return 2
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		val := func() (string, bool) {
			if k, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(k, "--") {
				return v, true
			}
			if i+1 < len(args) {
				i++
				return args[i], true
			}
			return "", false
		}
		switch {
		case a == "-h" || a == "--help":
			growpartUsage(env.Stdout)
			return 0
		case a == "-N" || a == "--dry-run":
			o.DryRun = true
		case a == "-v" || a == "--verbose":
			verbose++
		case a == "--fudge" || strings.HasPrefix(a, "--fudge="):
			v, ok := val()
			n, err := strconv.ParseInt(v, 10, 64)
			if !ok || err != nil || n < 0 {
				return fail("invalid --fudge %q", v)
			}
			o.Fudge = n
			if n == 0 {
				o.Fudge = -1
			}
		case a == "-u" || a == "--update" || strings.HasPrefix(a, "--update="):
			v, _ := val()
			switch v {
			case "off":
				o.NoKernelUpdate = true
			case "auto", "on", "force":
			default:
				return fail("unknown --update option: %s", v)
			}
		case a == "--free-percent" || strings.HasPrefix(a, "--free-percent="):
			return fail("--free-percent is not supported by cloudroot")
		case a == "--":
			pos = append(pos, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(a, "-") && a != "-":
			return fail("unknown option %s", a)
		default:
			pos = append(pos, a)
		}
	}
	if len(pos) < 2 {
		growpartUsage(env.Stderr)
		fmt.Fprintln(env.Stderr, "must supply disk and partition-number")
		return 2
	}
	if len(pos) > 2 {
		return fail("confused by arg %s", pos[2])
	}
	dev, partArg := pos[0], pos[1]
	part, err := strconv.Atoi(partArg)
	if err != nil || part < 1 {
		return fail("partition-number must be a number")
	}
	if verbose > 0 {
		level := slog.LevelInfo
		if verbose > 1 {
			level = slog.LevelDebug
		}
		o.Log = slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: level}))
	} else if env.Log != nil {
		o.Log = env.Log
	}
	r, err := disk.GrowPath(dev, part, o)
	if err != nil {
		return fail("%v", err)
	}
	switch {
	case !r.Changed:
		fmt.Fprintf(env.Stdout, "NOCHANGE: %s\n", r.Reason)
		return 1
	case o.DryRun:
		fmt.Fprintf(env.Stdout, "CHANGE: %s\n", r.Info())
	default:
		fmt.Fprintf(env.Stdout, "CHANGED: %s\n", r.Info())
	}
	return 0
}

func diskCommand() Command {
	return Command{
		Name:  "disk",
		Short: "Plan or apply disk_setup/fs_setup from a cloud-config on disks or image files.",
		Run:   runDisk,
	}
}

const diskUsage = `usage: cloudroot disk {plan|apply} --config USERDATA [--alias NAME=DISK]... DISK...

  plan   print what disk_setup and fs_setup would do to the DISKs
  apply  do it: write partition tables, run mkfs (on this host)

DISKs are block devices or image files; the config's device names
(/dev/sdb, aliases, ephemeral0) must resolve to one of them: give
--alias ephemeral0=/path/to/disk for metadata names (a name that
resolves to none of them is an error).
On an image file the filesystems are made on its partitions in place,
without root or a loop device: mke2fs at the partition's offset, other
mkfs tools on a scratch file copied in (the host's mkfs.* must exist).
A disk holding partitions or a filesystem is only changed when the config
says overwrite: true (filesystems: overwrite or replace_fs); a mounted one
never.
`

func runDisk(ctx context.Context, env *Env, args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		w := env.Stderr
		code := 2
		if len(args) > 0 {
			w, code = env.Stdout, 0
		}
		fmt.Fprint(w, diskUsage)
		return code
	}
	verb := args[0]
	if verb != "plan" && verb != "apply" {
		fmt.Fprintf(env.Stderr, "error: unknown disk command %q\n%s", verb, diskUsage)
		return 2
	}
	var cfgPath string
	aliases := map[string]string{}
	var disks []string
	for i := 1; i < len(args); i++ {
		a := args[i]
		next := func() (string, bool) {
			for _, p := range []string{"--config=", "--alias="} {
				if v, ok := strings.CutPrefix(a, p); ok {
					return v, true
				}
			}
			if i+1 < len(args) {
				i++
				return args[i], true
			}
			return "", false
		}
		switch {
		case a == "--config" || a == "-c" || strings.HasPrefix(a, "--config="):
			v, ok := next()
			if !ok {
				fmt.Fprintln(env.Stderr, "error: --config needs a file")
				return 2
			}
			cfgPath = v
		case a == "--alias" || strings.HasPrefix(a, "--alias="):
			v, ok := next()
			name, dev, ok2 := strings.Cut(v, "=")
			if !ok || !ok2 || name == "" || dev == "" {
				fmt.Fprintf(env.Stderr, "error: --alias wants NAME=DISK, got %q\n", v)
				return 2
			}
			aliases[name] = absIfExists(dev)
		case strings.HasPrefix(a, "-"):
			fmt.Fprintf(env.Stderr, "error: unrecognized argument %s\n", a)
			return 2
		default:
			disks = append(disks, absIfExists(a))
		}
	}
	switch {
	case cfgPath == "":
		fmt.Fprintf(env.Stderr, "error: disk %s: no --config USERDATA given (the cloud-config with disk_setup/fs_setup)\n", verb)
		return 2
	case len(disks) == 0:
		fmt.Fprintf(env.Stderr, "error: disk %s: no DISK given (the block devices or image files to work on)\n", verb)
		return 2
	}
	b, err := os.ReadFile(cfgPath)
	if err != nil {
		fmt.Fprintf(env.Stderr, "error: %v\n", err)
		return 1
	}
	cfg, ywarns, err := yaml11.LoadMap(cfgPath, b)
	if err != nil {
		fmt.Fprintf(env.Stderr, "error: %v\n", err)
		return 1
	}
	for _, w := range ywarns {
		fmt.Fprintf(env.Stderr, "warning: %s\n", w)
	}
	sc, warns := disk.ParseSetup(cfg, disk.DeviceEnv{})
	for _, w := range warns {
		fmt.Fprintf(env.Stderr, "warning: %s\n", w)
	}
	if sc.Names.Aliases == nil {
		sc.Names.Aliases = map[string]string{}
	}
	for k, v := range aliases {
		sc.Names.Aliases[k] = v
	}
	var infos []disk.DeviceInfo
	for _, d := range disks {
		if _, err := os.Stat(d); err != nil {
			fmt.Fprintf(env.Stderr, "error: DISK %s: no such block device or image file\n", d)
			return 1
		}
		info, err := disk.ProbeDevice(d)
		if err != nil {
			fmt.Fprintf(env.Stderr, "error: %v\n", err)
			return 1
		}
		infos = append(infos, info)
	}
	plan, err := disk.PlanSetup(sc, infos)
	if err != nil {
		fmt.Fprintf(env.Stderr, "error: %v\n", err)
		return 1
	}
	fmt.Fprint(env.Stdout, plan.String())
	if unresolved := unresolvedNames(plan, disks); len(unresolved) > 0 {
		for _, u := range unresolved {
			fmt.Fprintf(env.Stderr, "error: %s\n", u)
		}
		if verb == "apply" {
			fmt.Fprintln(env.Stderr, "error: nothing applied")
		}
		return 1
	}
	if verb == "plan" {
		return 0
	}
	log := slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	if err := disk.Apply(ctx, plan, disk.HostExecutor{Out: env.Stderr}, log); err != nil {
		fmt.Fprintf(env.Stderr, "error: %v\n", err)
		return 1
	}
	return 0
}

// unresolvedNames: one line for each disk_setup/fs_setup device name that
// resolves to none of the DISKs (a plan applied to the DISKs would silently
// leave that entry out).
func unresolvedNames(plan disk.Plan, disks []string) []string {
	var out []string
	for _, s := range plan.Steps {
		if s.Action != "skip" || s.Reason != disk.ReasonNotFound {
			continue
		}
		hint := "give --alias " + s.Device + "=DISK, or name it among the DISKs"
		if disk.IsMetaDeviceName(s.Device) {
			hint = "it is a metadata name: give --alias " + s.Device + "=DISK"
		}
		out = append(out, fmt.Sprintf("%s: device %s resolves to none of the DISKs given (%s); %s",
			s.Config, s.Device, strings.Join(disks, ", "), hint))
	}
	return out
}

// absIfExists makes a relative path naming an existing file absolute, as
// the config's device names resolve to absolute paths (/dev/NAME, or an
// alias's path).
func absIfExists(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	if _, err := os.Stat(p); err != nil {
		return p
	}
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}
