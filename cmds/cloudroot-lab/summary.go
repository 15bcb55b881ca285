package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/cloudroot/cloudroot/integration/harness"
)

// summary prints what a demo boot provisioned, read back from the image.
// Password hashes and private keys are never printed.
type summary struct {
	w           io.Writer
	im          *harness.Image
	passwd      map[string]harness.PasswdEntry
	groups      map[string]harness.GroupEntry
	statusFound bool
}

func (s *summary) section(title string) { fmt.Fprintf(s.w, "\n== %s\n", title) }

func (s *summary) line(format string, args ...any) {
	fmt.Fprintf(s.w, "  "+format+"\n", args...)
}

// read returns a file, or "" after printing why it could not be read.
func (s *summary) read(p string) (string, bool) {
	b, err := s.im.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		s.line("%s: (absent)", p)
		return "", false
	}
	if err != nil {
		s.line("%s: %v", p, err)
		return "", false
	}
	return string(b), true
}

func (s *summary) user(uid int) string {
	for _, e := range s.passwd {
		if e.UID == uid {
			return e.Name
		}
	}
	return fmt.Sprint(uid)
}

func (s *summary) group(gid int) string {
	for _, e := range s.groups {
		if e.GID == gid {
			return e.Name
		}
	}
	return fmt.Sprint(gid)
}

// meta is "0640 root:adm" for p, or why not.
func (s *summary) meta(p string) string {
	fi, err := s.im.Stat(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "absent"
		}
		return err.Error()
	}
	m := fmt.Sprintf("%04o", uint32(fi.Mode.Perm()))
	if fi.Mode&fs.ModeSetuid != 0 {
		m = "u+s " + m
	}
	if fi.Mode.IsDir() {
		m = "dir " + m
	}
	return fmt.Sprintf("%s %s:%s", m, s.user(fi.UID), s.group(fi.GID))
}

func (s *summary) print() {
	fmt.Fprintf(s.w, "== Summary, read back from %s (ext4 at byte offset %d)\n", rel(s.im.Path), s.im.Offset)
	if b, err := s.im.ReadFile("/etc/passwd"); err == nil {
		s.passwd = harness.ParsePasswd(b)
	}
	if b, err := s.im.ReadFile("/etc/group"); err == nil {
		s.groups = harness.ParseGroup(b)
	}
	s.identity()
	s.accounts()
	s.sudo()
	s.ssh()
	s.files()
	s.commands()
	s.layout()
	s.status()
	s.timings()
}

func (s *summary) identity() {
	s.section("identity")
	if h, ok := s.read("/etc/hostname"); ok {
		s.line("hostname (/etc/hostname): %s", strings.TrimSpace(h))
	}
	if h, ok := s.read("/etc/hosts"); ok {
		s.line("/etc/hosts:")
		for _, l := range harness.Lines([]byte(h)) {
			if !strings.HasPrefix(strings.TrimSpace(l), "#") {
				s.line("  %s", l)
			}
		}
	}
}

func (s *summary) accounts() {
	s.section("users (uid >= 1000, and svc)")
	shadowB, _ := s.im.ReadFile("/etc/shadow")
	shadow := harness.ParseShadow(shadowB)
	var names []string
	for n, e := range s.passwd {
		if (e.UID >= 1000 && e.UID < 60000) || n == "svc" {
			names = append(names, n)
		}
	}
	sort.Slice(names, func(i, j int) bool { return s.passwd[names[i]].UID < s.passwd[names[j]].UID })
	if len(names) == 0 {
		s.line("(none)")
	}
	for _, n := range names {
		e := s.passwd[n]
		pw, ok := shadow[n]
		state := "no /etc/shadow entry"
		if ok {
			state = harness.PasswordState(pw)
		}
		home := e.Home
		if !s.im.Exists(e.Home) {
			home += " (not created)"
		}
		s.line("%-8s uid=%-5d gid=%d(%s) home=%s shell=%s", n, e.UID, e.GID, s.group(e.GID), home, e.Shell)
		s.line("         groups=%s password=%s", strings.Join(harness.Groups(s.groups, n), ","), state)
	}
	s.section("groups")
	for _, n := range []string{"admins", "ops", "adm", "sudo"} {
		g, ok := s.groups[n]
		if !ok {
			s.line("%-7s (absent)", n)
			continue
		}
		s.line("%-7s gid=%-5d members=%s", n, g.GID, strings.Join(g.Members, ","))
	}
}

func (s *summary) sudo() {
	const p = "/etc/sudoers.d/90-cloud-init-users"
	s.section("sudo")
	if b, ok := s.read(p); ok {
		s.line("%s (%s):", p, s.meta(p))
		for _, l := range harness.Lines([]byte(b)) {
			if !strings.HasPrefix(l, "#") {
				s.line("  %s", l)
			}
		}
	}
	if b, ok := s.read("/etc/sudoers"); ok {
		for _, l := range harness.Lines([]byte(b)) {
			if t := strings.TrimSpace(l); strings.HasPrefix(t, "#includedir") || strings.HasPrefix(t, "@includedir") {
				s.line("/etc/sudoers: %s", l)
			}
		}
	}
}

func (s *summary) ssh() {
	s.section("ssh")
	homes := map[string]string{"root": "/root"}
	names := []string{"root"}
	for n, e := range s.passwd {
		if e.UID >= 1000 && e.UID < 60000 {
			homes[n] = e.Home
			names = append(names, n)
		}
	}
	sort.Strings(names[1:])
	for _, n := range names {
		p := path.Join(homes[n], ".ssh", "authorized_keys")
		b, err := s.im.ReadFile(p)
		if err != nil {
			continue
		}
		keys, prefixed := 0, 0
		for _, l := range harness.Lines(b) {
			if strings.HasPrefix(strings.TrimSpace(l), "#") {
				continue
			}
			keys++
			if strings.Contains(l, "command=") {
				prefixed++
			}
		}
		extra := ""
		if prefixed > 0 {
			extra = fmt.Sprintf(", %d with a forced command (disable_root)", prefixed)
		}
		s.line("%-8s %s: %d key(s)%s, %s, .ssh %s", n, p, keys, extra, s.meta(p), s.meta(path.Dir(p)))
	}
	ents, err := s.im.ReadDir("/etc/ssh")
	if err != nil {
		s.line("/etc/ssh: %v", err)
		return
	}
	found := false
	for _, e := range ents {
		if strings.HasPrefix(e, "ssh_host_") && strings.HasSuffix(e, "_key") {
			found = true
			p := "/etc/ssh/" + e
			s.line("host key %s (%s), .pub %s", p, s.meta(p), s.meta(p+".pub"))
		}
	}
	if !found {
		s.line("no host keys in /etc/ssh")
	}
	for _, p := range []string{"/etc/ssh/sshd_config.d/50-cloud-init.conf"} {
		if b, err := s.im.ReadFile(p); err == nil {
			s.line("%s: %s", p, strings.Join(harness.Lines(b), "; "))
		}
	}
}

func (s *summary) files() {
	s.section("written files")
	var paths []string
	if ents, err := s.im.ReadDir("/etc/demo"); err == nil {
		for _, e := range ents {
			paths = append(paths, "/etc/demo/"+e)
		}
	} else {
		s.line("/etc/demo: %v", err)
	}
	if s.im.Exists("/home/alice/notes.txt") {
		paths = append(paths, "/home/alice/notes.txt")
	}
	for _, p := range paths {
		s.line("%s (%s):", p, s.meta(p))
		b, err := s.im.ReadFile(p)
		if err != nil {
			s.line("  %v", err)
			continue
		}
		for _, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
			s.line("  | %s", l)
		}
	}
}

func (s *summary) commands() {
	s.section("bootcmd / runcmd effects")
	ents, err := s.im.ReadDir("/var/log")
	if err != nil {
		s.line("/var/log: %v", err)
		return
	}
	for _, e := range ents {
		if !strings.HasPrefix(e, "demo-") {
			continue
		}
		p := "/var/log/" + e
		b, err := s.im.ReadFile(p)
		if err != nil {
			s.line("%s: %v", p, err)
			continue
		}
		l := harness.Lines(b)
		s.line("%s (%d line(s)):", p, len(l))
		for _, x := range l {
			s.line("  | %s", x)
		}
	}
}

func (s *summary) layout() {
	s.section("/var/lib/cloud")
	fi, err := s.im.Stat(harness.InstanceLinkPath)
	switch {
	case err != nil:
		s.line("instance: %v", err)
	case fi.Mode&fs.ModeSymlink != 0:
		s.line("instance -> %s", fi.LinkTarget)
	default:
		s.line("instance: not a symlink (%v)", fi.Mode)
	}
	for _, p := range []string{harness.InstanceIDPath, harness.PrevInstanceIDPath, "/var/lib/cloud/instance/datasource"} {
		if b, ok := s.read(p); ok {
			s.line("%s: %s", strings.TrimPrefix(p, "/var/lib/cloud/"), strings.TrimSpace(b))
		}
	}
	if sem, err := s.im.ReadDir("/var/lib/cloud/instance/sem"); err == nil {
		s.line("instance/sem: %s", strings.Join(sem, " "))
	}
	if b, err := s.im.ReadFile(harness.BootFinishedPath); err == nil {
		s.line("instance/boot-finished: %s", strings.Join(harness.Lines(b), " "))
	} else {
		s.line("instance/boot-finished: absent")
	}
}

func (s *summary) status() {
	s.section("status")
	st, err := s.im.Status()
	if err != nil {
		s.line("%s: %v", harness.StatusPath, err)
		return
	}
	s.statusFound = true
	s.line("%s: datasource %q, stage %q, boot_status_code %q", harness.StatusPath, st.Datasource, st.Stage, st.BootStatusCode)
	for _, n := range harness.Stages {
		x, ok := st.Stages[n]
		if !ok {
			s.line("  %-15s (absent)", n)
			continue
		}
		s.line("  %-15s start=%-9s finished=%-9s took=%-8s errors=%d recoverable=%d", n, f3(x.Start), f3(x.Finished), dur(x.Duration()), len(x.Errors), countRecoverable(x))
	}
	for _, e := range st.AllErrors() {
		s.line("  ! %s", e)
	}
	res, err := s.im.Result()
	if err != nil {
		s.line("%s: %v", harness.ResultPath, err)
		return
	}
	n := 0
	for _, v := range res.RecoverableErrors {
		n += len(v)
	}
	s.line("%s: datasource %q, errors=%d recoverable=%d", harness.ResultPath, res.Datasource, len(res.Errors), n)
	for _, e := range res.Errors {
		s.line("  ! %s", e)
	}
}

func countRecoverable(x harness.StageStatus) int {
	n := 0
	for _, v := range x.RecoverableErrors {
		n += len(v)
	}
	return n
}

func f3(f *float64) string {
	if f == nil {
		return "null"
	}
	return fmt.Sprintf("%.3f", *f)
}

func dur(d float64) string {
	if d < 0 {
		return "?"
	}
	return fmt.Sprintf("%.3fs", d)
}

func (s *summary) timings() {
	s.section("stage timings (" + harness.StatePath + ")")
	st, err := s.im.State()
	if err != nil {
		s.line("%v", err)
		return
	}
	for _, t := range st.Timings {
		e := ""
		if t.Error != "" {
			e = "  error: " + t.Error
		}
		s.line("%-22s at %8.3fs  took %7.3fs%s", t.Stage, t.Start, t.Duration, e)
	}
}
