//go:build !cloudroot_front

package cli

// collect-logs: a tarball of everything needed to debug a boot, as cloud-init
// 26.x's cloudinit/cmd/devel/logs.py builds it:
//
//	cloud-init-logs-YYYY-MM-DD/
//	  version                       `cloud-init --version`
//	  dmesg.txt                     unless --redact-sensitive
//	  journal.txt, journal-previous.txt
//	  var/log/cloud-init.log, cloud-init-output.log (+ rotated; always)
//	  etc/cloud/**                  except keys/, templates/, 99-installer.cfg
//	  var/lib/cloud/{data,handlers,seed}/* and instance/* (files only)
//	  run/cloud-init/*              (files only)
//	  var/log/installer/...         subiquity/curtin files when present
//
// Files that are not world-readable (instance-data-sensitive.json, user-data)
// are left out with -r/--redact-sensitive, and included by default, after
// which the WARNING about sensitive data is printed. -u/--include-userdata
// is accepted and does nothing (deprecated in 26.x). Root only. dmesg and
// journalctl run only when the root is "/" (a test root has no journal);
// dpkg-version is not written (cloudroot is no Debian package).
//
// The tarball is written 0600 as a new file renamed over -t's path: an
// existing file there is replaced, not written through (a symlink is not
// followed, an existing file's 0644 mode not kept). 26.x's tar(1) leaves
// it at the umask's 0644; cloudroot differs here (docs/security.md).
//
// Messages go to stderr: "Wrote /abs/cloud-init.tar.gz"; errors are the
// message alone, exit 1.

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/cloudroot/cloudroot/pkg/state"
	"github.com/cloudroot/cloudroot/pkg/target"
)

func collectLogsCommand() Command {
	return Command{
		Name:  "collect-logs",
		Short: "Collect and tar all cloud-init debug info.",
		Run:   runCollectLogs,
	}
}

const collectLogsUsage = "usage: cloud-init collect-logs [-h] [--verbose] [--tarfile TARFILE]\n" +
	"                               [--include-userdata] [--redact-sensitive]\n"

type collectOptions struct {
	tarfile          string
	verbosity        int
	userdata, redact bool
}

// installerFiles are logs.py's INSTALLER_APPORT_FILES; the sensitive ones
// only without redaction.
var (
	installerFiles = []string{
		"/var/log/installer/ubuntu_desktop_installer.log",
		"/var/log/installer/subiquity-server-debug.log",
		"/var/log/installer/subiquity-client-debug.log",
		"/var/log/installer/curtin-install.log",
		"/var/log/installer/subiquity-curtin-install.conf",
		"/var/log/installer/curtin-install/subiquity-initial.conf",
		"/var/log/installer/curtin-install/subiquity-curthooks.conf",
		"/var/log/installer/curtin-install/subiquity-extract.conf",
		"/var/log/installer/curtin-install/subiquity-partitioning.conf",
		"/var/log/installer/curtin-error-logs.tar",
		"/var/log/installer/curtin-errors.tar",
		"/var/log/installer/block/probe-data.json",
	}
	installerSensitiveFiles = []string{
		"/var/log/installer/autoinstall-user-data",
		"/autoinstall.yaml",
		"/etc/cloud/cloud.cfg.d/99-installer.cfg",
	}
)

func parseCollectArgs(env *Env, args []string) (collectOptions, int, bool) {
	o := collectOptions{tarfile: "cloud-init.tar.gz"}
	longs := []string{"--verbose", "--tarfile", "--include-userdata", "--redact-sensitive", "--help"}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if strings.HasPrefix(a, "--") {
			name, val, hasVal := strings.Cut(a, "=")
			var match []string
			for _, l := range longs {
				if strings.HasPrefix(l, name) {
					match = append(match, l)
				}
			}
			if len(match) == 1 {
				a = match[0]
				if hasVal {
					if a != "--tarfile" {
						fmt.Fprintf(env.Stderr, "%scloud-init collect-logs: error: argument %s: ignored explicit argument '%s'\n", collectLogsUsage, a, val)
						return o, 2, false
					}
					o.tarfile = val
					continue
				}
			}
		}
		switch a {
		case "-v", "--verbose":
			o.verbosity++
		case "-vv":
			o.verbosity += 2
		case "-u", "--include-userdata":
			o.userdata = true
		case "-r", "--redact-sensitive":
			o.redact = true
		case "-t", "--tarfile":
			if i+1 >= len(args) {
				fmt.Fprintf(env.Stderr, "%scloud-init collect-logs: error: argument --tarfile/-t: expected one argument\n", collectLogsUsage)
				return o, 2, false
			}
			i++
			o.tarfile = args[i]
		case "-h", "--help":
			fmt.Fprint(env.Stdout, collectLogsUsage+collectLogsHelp)
			return o, 0, false
		default:
			fmt.Fprintf(env.Stderr, "%scloud-init collect-logs: error: unrecognized arguments: %s\n", collectLogsUsage, a)
			return o, 2, false
		}
	}
	return o, 0, true
}

func runCollectLogs(ctx context.Context, env *Env, args []string) int {
	o, code, ok := parseCollectArgs(env, args)
	if !ok {
		return code
	}
	if !env.IsRoot {
		fmt.Fprintln(env.Stderr, "This command must be run as root.")
		return 1
	}
	if o.userdata {
		fmt.Fprintln(env.Stderr, "The --include-userdata flag is deprecated and does nothing.")
	}
	tarfile, err := filepath.Abs(o.tarfile)
	if err != nil {
		fmt.Fprintln(env.Stderr, err)
		return 1
	}
	if err := collectLogs(ctx, env, tarfile, !o.redact); err != nil {
		fmt.Fprintln(env.Stderr, err)
		return 1
	}
	fmt.Fprintf(env.Stderr, "Wrote %s\n", tarfile)
	if !o.redact {
		fmt.Fprint(env.Stderr, "WARNING:\nSensitive data may have been included in the collected logs.\n"+
			"Please review the contents of the tarball before sharing or\n"+
			"rerun with --redact-sensitive to redact sensitive data.\n")
	}
	return 0
}

// logTar writes the tarball's members in order, creating parent
// directories as tar(1) lists them.
type logTar struct {
	tw   *tar.Writer
	dirs map[string]bool
	now  time.Time
}

func (l *logTar) dir(name string) error {
	if name == "." || name == "" || l.dirs[name] {
		return nil
	}
	if err := l.dir(path.Dir(name)); err != nil {
		return err
	}
	l.dirs[name] = true
	return l.tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: 0o755, ModTime: l.now})
}

func (l *logTar) file(name string, b []byte, mode fs.FileMode, mtime time.Time) error {
	if err := l.dir(path.Dir(name)); err != nil {
		return err
	}
	if err := l.tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: int64(mode.Perm()), Size: int64(len(b)), ModTime: mtime}); err != nil {
		return err
	}
	_, err := l.tw.Write(b)
	return err
}

func collectLogs(ctx context.Context, env *Env, tarfile string, sensitive bool) error {
	now := env.Now().UTC()
	top := now.Format("cloud-init-logs-2006-01-02")
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	lt := &logTar{tw: tar.NewWriter(gz), dirs: map[string]bool{}, now: now}

	if err := lt.file(top+"/version", []byte(fmt.Sprintf("/usr/bin/cloud-init %s\n", Version)), 0o644, now); err != nil {
		return err
	}
	if env.Root == "/" {
		cmds := []struct {
			name string
			argv []string
		}{{"journal.txt", []string{"journalctl", "--boot=0", "-o", "short-precise"}},
			{"journal-previous.txt", []string{"journalctl", "--boot=-1", "-o", "short-precise"}}}
		if sensitive {
			cmds = append([]struct {
				name string
				argv []string
			}{{"dmesg.txt", []string{"dmesg"}}}, cmds...)
		}
		for _, c := range cmds {
			out, err := exec.CommandContext(ctx, c.argv[0], c.argv[1:]...).CombinedOutput()
			if err != nil && len(out) == 0 {
				out = []byte(err.Error())
			}
			if err := lt.file(top+"/"+c.name, out, 0o644, now); err != nil {
				return err
			}
		}
	}
	// Files, in logs.py's order; each at most once.
	// Paths resolve inside the root (instance is an absolute symlink).
	root, err := target.New(env.Root)
	if err != nil {
		return fmt.Errorf("opening %s: %w", env.Root, err)
	}
	seen := map[string]bool{}
	add := func(p string, always bool) error {
		if seen[p] {
			return nil
		}
		fi, err := root.Stat(p)
		if err != nil || !fi.Mode().IsRegular() {
			return nil
		}
		if !always && !sensitive && fi.Mode().Perm()&0o004 == 0 {
			return nil // not world-readable: sensitive
		}
		b, err := root.ReadFile(p)
		if err != nil {
			return nil
		}
		seen[p] = true
		return lt.file(top+p, b, fi.Mode(), fi.ModTime())
	}
	for _, p := range installerFiles {
		if err := add(p, true); err != nil {
			return err
		}
	}
	if sensitive {
		for _, p := range installerSensitiveFiles {
			if err := add(p, true); err != nil {
				return err
			}
		}
	}
	for _, hp := range cleanLogFiles(env, cleanConfig(env)) {
		if err := add(rootRel(env, hp), true); err != nil {
			return err
		}
	}
	var rest []string
	filepath.WalkDir(env.Path("/etc/cloud"), func(hp string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		p := rootRel(env, hp)
		if d.IsDir() && (p == "/etc/cloud/keys" || p == "/etc/cloud/templates") {
			return fs.SkipDir
		}
		if d.Name() != "99-installer.cfg" {
			rest = append(rest, p)
		}
		return nil
	})
	for _, g := range []string{state.CloudDir + "/data/*", state.CloudDir + "/handlers/*", state.CloudDir + "/seed/*",
		state.CloudDir + "/instance/*", state.RunDir + "/*"} {
		ms, _ := root.Glob(g)
		rest = append(rest, ms...)
	}
	for _, p := range rest {
		if err := add(p, false); err != nil {
			return err
		}
	}
	if err := lt.tw.Close(); err != nil {
		return err
	}
	if err := gz.Close(); err != nil {
		return err
	}
	return writePrivate(tarfile, buf.Bytes())
}

// writePrivate writes b to path as a new 0600 file: a temporary file made
// with O_EXCL beside it, renamed over path. An existing file at path (its
// mode, its owner, a symlink it is) is replaced, never written through:
// the tarball holds user-data and instance-data-sensitive.json, which are
// 0600 where they come from.
func writePrivate(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	tmp := f.Name()
	// CreateTemp makes the file 0600 whatever the umask; Chmod keeps it
	// so should that ever change.
	err = f.Chmod(0o600)
	if err == nil {
		_, err = f.Write(b)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// rootRel is the root-relative path of a host path under env.Root.
func rootRel(env *Env, hp string) string {
	rel, err := filepath.Rel(env.Root, hp)
	if err != nil {
		return hp
	}
	return "/" + filepath.ToSlash(rel)
}

// collectLogsHelp is 26.x's help after the usage.
const collectLogsHelp = "\noptions:\n  -h, --help            show this help message and exit\n  --verbose, -v         Be more verbose.\n  --tarfile TARFILE, -t TARFILE\n                        The tarfile to create containing all collected logs.\n                        Default: cloud-init.tar.gz\n  --include-userdata, -u\n                        DEPRECATED: This is default behavior and this flag\n                        does nothing\n  --redact-sensitive, -r\n                        Redact potentially sensitive data from logs. Sensitive\n                        data may include passwords or keys in user data and\n                        root read-only files.\n"
