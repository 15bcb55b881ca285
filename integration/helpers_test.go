package integration

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cloudroot/cloudroot/integration/harness"
)

// EnvIntegration set to 1 turns missing artifacts and tools into failures.
const EnvIntegration = "CLOUDROOT_INTEGRATION"

// bootTimeout bounds one VM run; a boot takes 6-10 s with vmlinux on TCG.
const bootTimeout = 120 * time.Second

// artifacts returns the build artifacts, or skips (fails under
// CLOUDROOT_INTEGRATION=1) when something a boot needs is missing.
func artifacts(t *testing.T) harness.Artifacts {
	t.Helper()
	a, err := harness.Discover()
	if err != nil {
		t.Fatal(err)
	}
	var miss []string
	miss = append(miss, a.Missing()...)
	miss = append(miss, harness.HaveTools(harness.QEMU, "debugfs", "mkfs.vfat", "mcopy", "cp")...)
	if harness.HaveTools("genisoimage") != nil && harness.HaveTools("xorriso") != nil {
		miss = append(miss, "genisoimage (or xorriso)")
	}
	if len(miss) > 0 {
		msg := fmt.Sprintf("integration artifacts or tools missing: %s (build with `just agent kernel initramfs rootfs`; tools: `just deps`)", strings.Join(miss, ", "))
		if os.Getenv(EnvIntegration) == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg + "; set " + EnvIntegration + "=1 to make this a failure")
	}
	return a
}

// vm is one root disk booted one or more times by a test.
type vm struct {
	t     *testing.T
	a     harness.Artifacts
	dir   string
	disk  string
	boots int
}

func newVM(t *testing.T) *vm {
	t.Helper()
	return newVMFrom(t, artifacts(t))
}

// newVMFrom is newVM with the artifacts of another build (arm64's).
func newVMFrom(t *testing.T, a harness.Artifacts) *vm {
	t.Helper()
	dir := t.TempDir()
	v := &vm{t: t, a: a, dir: dir, disk: filepath.Join(dir, "disk.img")}
	if err := harness.CopyDisk(a.Rootfs, v.disk); err != nil {
		t.Fatal(err)
	}
	return v
}

// seed makes a seed image of kind (a harness.Seed* kind) in a fresh directory.
func (v *vm) seed(files map[string][]byte, kind string) string {
	v.t.Helper()
	dir, err := os.MkdirTemp(v.dir, "seed-")
	if err != nil {
		v.t.Fatal(err)
	}
	p, err := harness.MakeSeed(dir, files, kind)
	if err != nil {
		v.t.Fatal(err)
	}
	return p
}

// boot runs the VM to its end, streaming the console into the test log and
// into build/integration/<Test>[-bootN].log.
func (v *vm) boot(o harness.BootOptions) *harness.Run {
	v.t.Helper()
	v.boots++
	o.Kernel, o.Disk = v.a.Kernel, v.disk
	if o.Arch == "" {
		o.Arch = v.a.Arch
	}
	if o.Initramfs == "" {
		o.Initramfs = v.a.Initramfs
	}
	if o.Timeout == 0 {
		o.Timeout = bootTimeout
	}
	logDir := filepath.Join(v.a.Dir, "integration")
	if err := os.MkdirAll(logDir, 0o755); err == nil {
		name := strings.ReplaceAll(v.t.Name(), "/", "_")
		if v.boots > 1 {
			name += fmt.Sprintf("-boot%d", v.boots)
		}
		o.ConsoleLog = filepath.Join(logDir, name+".log")
	}
	lw := harness.NewLineWriter(func(s string) { v.t.Logf("%s", s) })
	o.Output = lw
	ctx, cancel := context.WithCancel(context.Background())
	v.t.Cleanup(cancel)
	r, err := harness.Boot(ctx, o)
	lw.Flush()
	if err != nil {
		v.t.Fatalf("boot %d: %v", v.boots, err)
	}
	v.t.Logf("boot %d (%s): %s; console log %s", v.boots, filepath.Base(o.Kernel), r.Summary(), o.ConsoleLog)
	return r
}

// image opens the disk for inspection (QEMU has exited).
func (v *vm) image() *disk {
	v.t.Helper()
	im, err := harness.OpenImage(v.disk)
	if err != nil {
		v.t.Fatal(err)
	}
	return &disk{t: v.t, im: im}
}

// wantPoweredOff fails unless the guest powered the VM off by itself.
func wantPoweredOff(t *testing.T, r *harness.Run) {
	t.Helper()
	if !r.PoweredOff() {
		t.Errorf("the VM did not power off by itself: %s\nlast console lines:\n%s", r.Summary(), tail(r.Console, 25))
	}
}

// wantExited fails when QEMU had to be killed.
func wantExited(t *testing.T, r *harness.Run) {
	t.Helper()
	if r.TimedOut || r.ExitErr != nil {
		t.Errorf("QEMU did not exit by itself: %s\nlast console lines:\n%s", r.Summary(), tail(r.Console, 25))
	}
}

func wantConsole(t *testing.T, r *harness.Run, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if !strings.Contains(r.Console, s) {
			t.Errorf("console lacks %q", s)
		}
	}
}

func wantConsoleMatch(t *testing.T, r *harness.Run, re string) {
	t.Helper()
	if !regexp.MustCompile(re).MatchString(r.Console) {
		t.Errorf("console does not match %s", re)
	}
}

func tail(s string, n int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "\n")
}

// disk asserts on the root filesystem of a powered-off VM.
type disk struct {
	t  *testing.T
	im *harness.Image
}

// read returns a file's content ("" and an error reported when missing).
func (d *disk) read(p string) string {
	d.t.Helper()
	b, err := d.im.ReadFile(p)
	if err != nil {
		d.t.Errorf("reading %s from the disk: %v", p, err)
		return ""
	}
	return string(b)
}

// readOpt is read without the error for a missing file.
// fact is what the guest's runcmd recorded in /var/lib/cloudroot-test/name
// (trimmed, and logged); an error when it recorded nothing.
func (d *disk) fact(t *testing.T, name string) string {
	t.Helper()
	s, ok := d.readOpt("/var/lib/cloudroot-test/" + name)
	if !ok {
		t.Errorf("the guest recorded no %s (runcmd or power_state's condition did not run)", name)
	}
	t.Logf("guest %s:\n%s", name, strings.TrimRight(s, "\n"))
	return strings.TrimSpace(s)
}

func (d *disk) readOpt(p string) (string, bool) {
	d.t.Helper()
	b, err := d.im.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false
	}
	if err != nil {
		d.t.Errorf("reading %s from the disk: %v", p, err)
		return "", false
	}
	return string(b), true
}

func (d *disk) wantContent(p, want string) {
	d.t.Helper()
	if b, err := d.im.ReadFile(p); err != nil {
		d.t.Errorf("reading %s from the disk: %v", p, err)
	} else if string(b) != want {
		d.t.Errorf("%s = %q, want %q", p, b, want)
	}
}

func (d *disk) wantContains(p string, subs ...string) {
	d.t.Helper()
	got, ok := d.readOpt(p)
	if !ok {
		d.t.Errorf("%s does not exist", p)
		return
	}
	for _, s := range subs {
		if !strings.Contains(got, s) {
			d.t.Errorf("%s lacks %q; it is:\n%s", p, s, got)
		}
	}
}

// wantLines checks a file has n non-empty lines and returns them.
func (d *disk) wantLines(p string, n int) []string {
	d.t.Helper()
	got, ok := d.readOpt(p)
	if !ok {
		d.t.Errorf("%s does not exist, want %d line(s)", p, n)
		return nil
	}
	l := harness.Lines([]byte(got))
	if len(l) != n {
		d.t.Errorf("%s has %d line(s), want %d:\n%s", p, len(l), n, got)
	}
	return l
}

// wantMode checks type+permission bits and owner of p.
func (d *disk) wantMode(p string, mode fs.FileMode, uid, gid int) {
	d.t.Helper()
	fi, err := d.im.Stat(p)
	if err != nil {
		d.t.Errorf("stat %s: %v", p, err)
		return
	}
	if fi.Mode != mode || fi.UID != uid || fi.GID != gid {
		d.t.Errorf("%s is %v %d:%d, want %v %d:%d", p, fi.Mode, fi.UID, fi.GID, mode, uid, gid)
	}
}

func (d *disk) wantExists(p string) {
	d.t.Helper()
	if !d.im.Exists(p) {
		d.t.Errorf("%s does not exist", p)
	}
}

func (d *disk) wantAbsent(p string) {
	d.t.Helper()
	if d.im.Exists(p) {
		d.t.Errorf("%s exists, want it absent", p)
	}
}

func (d *disk) wantLink(p, target string) {
	d.t.Helper()
	fi, err := d.im.Stat(p)
	if err != nil {
		d.t.Errorf("stat %s: %v", p, err)
		return
	}
	if fi.Mode&fs.ModeSymlink == 0 || fi.LinkTarget != target {
		d.t.Errorf("%s is %v -> %q, want a symlink to %q", p, fi.Mode, fi.LinkTarget, target)
	}
}

func (d *disk) hostname() string {
	d.t.Helper()
	return strings.TrimSpace(d.read("/etc/hostname"))
}

func (d *disk) status() *harness.Status {
	d.t.Helper()
	s, err := d.im.Status()
	if err != nil {
		d.t.Fatalf("status.json: %v", err)
	}
	return s
}

// wantStagesDone checks every stage of status.json started and finished,
// and, when clean, that none recorded an error.
func (d *disk) wantStagesDone(s *harness.Status, clean bool) {
	d.t.Helper()
	for _, n := range harness.Stages {
		st, ok := s.Stages[n]
		switch {
		case !ok:
			d.t.Errorf("status.json has no %s stage", n)
			continue
		case st.Start == nil || st.Finished == nil:
			d.t.Errorf("status.json %s: start=%v finished=%v, want both set", n, fmtp(st.Start), fmtp(st.Finished))
		case *st.Finished < *st.Start:
			d.t.Errorf("status.json %s finished (%.3f) before it started (%.3f)", n, *st.Finished, *st.Start)
		}
		if clean && len(st.Errors) > 0 {
			d.t.Errorf("status.json %s errors: %q", n, st.Errors)
		}
	}
	if s.Stage != "" {
		d.t.Errorf("status.json stage = %q after the boot ended, want null", s.Stage)
	}
	if e := s.AllErrors(); len(e) > 0 {
		d.t.Logf("status.json errors and recoverable errors:\n  %s", strings.Join(e, "\n  "))
	}
}

func fmtp(f *float64) string {
	if f == nil {
		return "null"
	}
	return fmt.Sprintf("%.3f", *f)
}

func (d *disk) passwd() map[string]harness.PasswdEntry {
	return harness.ParsePasswd([]byte(d.read("/etc/passwd")))
}

func (d *disk) groups() map[string]harness.GroupEntry {
	return harness.ParseGroup([]byte(d.read("/etc/group")))
}

// meta builds a meta-data document.
func meta(iid, hostname string) []byte {
	return []byte(fmt.Sprintf("instance-id: %s\nlocal-hostname: %s\n", iid, hostname))
}
