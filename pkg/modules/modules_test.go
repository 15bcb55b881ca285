package modules

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/state"
	"github.com/cloudroot/cloudroot/pkg/target"
)

func yamlCfg(t *testing.T, s string) Config {
	t.Helper()
	m, err := datasource.DecodeYAMLMap([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return Config(m)
}

var baseFiles = map[string]string{
	"etc/passwd":     "root:x:0:0:root:/root:/bin/sh\nalice:x:1000:1000::/home/alice:/bin/sh\n",
	"etc/group":      "root:x:0:\nadm:x:4:\nalice:x:1000:\n",
	"etc/os-release": "ID=debian\nVERSION_ID=\"12\"\n",
}

func TestWriteFiles(t *testing.T) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("zipped\n"))
	zw.Close()
	cfg := yamlCfg(t, `
write_files:
  - path: /etc/a.txt
    content: "hello\n"
  - path: /etc/b.txt
    content: aGVsbG8gYgo=
    encoding: b64
    permissions: '0600'
    owner: alice:adm
  - path: /etc/c.txt
    encoding: gz+b64
    content: `+base64.StdEncoding.EncodeToString(gz.Bytes())+`
  - path: /etc/a.txt
    content: "more\n"
    append: true
  - path: /usr/local/bin/tool
    content: "#!/bin/sh\n"
    permissions: '4755'
  - path: /home/alice/later
    content: later
    defer: true
`)
	c, _, _ := testContext(t, cfg, baseFiles)
	if err := WriteFiles.Run(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{"/etc/a.txt": "hello\nmore\n", "/etc/b.txt": "hello b\n", "/etc/c.txt": "zipped\n"} {
		if got := readFile(t, c, p); got != want {
			t.Errorf("%s = %q, want %q", p, got, want)
		}
	}
	if got := mode(t, c, "/etc/b.txt").Perm(); got != 0o600 {
		t.Errorf("b.txt mode = %o", got)
	}
	if got := mode(t, c, "/usr/local/bin/tool"); got&fs.ModeSetuid == 0 || got.Perm() != 0o755 {
		t.Errorf("tool mode = %v, want setuid 0755", got)
	}
	if os.Geteuid() == 0 {
		fi, _ := c.Root.Stat("/etc/b.txt")
		if uid, gid := ownerOf(fi); uid != 1000 || gid != 4 {
			t.Errorf("b.txt owner = %d:%d, want 1000:4", uid, gid)
		}
	}
	if c.Root.Exists("/home/alice/later") {
		t.Error("deferred file written in the init stage")
	}
	if err := WriteFilesDeferred.Run(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, c, "/home/alice/later"); got != "later" {
		t.Errorf("deferred file = %q", got)
	}
}

func TestWriteFilesErrors(t *testing.T) {
	cfg := yamlCfg(t, `
write_files:
  - content: no path
  - path: /etc/ok
    content: fine
  - path: /etc/bad-owner
    owner: nobody-here:root
  - path: /etc/bad-enc
    content: x
    encoding: rot13
  - path: /etc/bad-perm
    permissions: 'rwx'
  - path: relative/path
`)
	c, _, _ := testContext(t, cfg, baseFiles)
	err := WriteFiles.Run(context.Background(), c)
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"write_files[0]: no path", "nobody-here", "rot13", "rwx", "not absolute"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	if got := readFile(t, c, "/etc/ok"); got != "fine" {
		t.Errorf("good entry not written after bad ones: %q", got)
	}
}

func TestDecodePerms(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want fs.FileMode
	}{
		{nil, 0o644}, {"0755", 0o755}, {"644", 0o644}, {"0o600", 0o600}, {420, 0o644}, {"2750", fs.ModeSetgid | 0o750},
	} {
		got, err := DecodePerms(tc.in, 0o644)
		if err != nil || got != tc.want {
			t.Errorf("DecodePerms(%v) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestBootcmdAndRuncmd(t *testing.T) {
	cfg := yamlCfg(t, `
bootcmd:
  - echo boot > /tmp/x
  - [cloud-init-per, once, mymkfs, mkfs, /dev/vdb]
runcmd:
  - [ls, -l, "/a b"]
  - echo "it's"
`)
	c, rr, _ := testContext(t, cfg, baseFiles)
	if err := Bootcmd.Run(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	if len(rr.Calls) != 1 || rr.Calls[0][0] != "/bin/sh" {
		t.Fatalf("calls = %v", rr.Calls)
	}
	wantScript := "#!/bin/sh\necho boot > /tmp/x\n'cloud-init-per' 'once' 'mymkfs' 'mkfs' '/dev/vdb'\n"
	if len(rr.Scripts) != 1 || rr.Scripts[0] != wantScript {
		t.Errorf("bootcmd script = %q, want %q", rr.Scripts, wantScript)
	}
	if !contains(rr.Envs[0], "INSTANCE_ID=iid-test") {
		t.Errorf("env lacks INSTANCE_ID: %v", rr.Envs[0])
	}
	if c.Root.Exists(rr.Calls[0][1]) {
		t.Error("bootcmd script left behind")
	}
	if err := Runcmd.Run(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	got := readFile(t, c, "/var/lib/cloud/instances/iid-test/scripts/runcmd")
	if want := "#!/bin/sh\n'ls' '-l' '/a b'\necho \"it's\"\n"; got != want {
		t.Errorf("runcmd script = %q, want %q", got, want)
	}
	if m := mode(t, c, "/var/lib/cloud/instances/iid-test/scripts/runcmd").Perm(); m != 0o700 {
		t.Errorf("runcmd mode = %o", m)
	}
	if len(rr.Calls) != 1 {
		t.Errorf("runcmd ran something: %v", rr.Calls)
	}
}

func contains(l []string, s string) bool {
	for _, e := range l {
		if e == s {
			return true
		}
	}
	return false
}

func TestScriptsUser(t *testing.T) {
	c, rr, _ := testContext(t, Config{}, baseFiles)
	for _, n := range []string{"part-002", "part-001", "runcmd"} {
		if err := c.Root.WriteFile(c.InstanceDir()+"/scripts/"+n, []byte("#!/bin/sh\n"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	c.Root.WriteFile(c.InstanceDir()+"/scripts/notexec", []byte("x"), 0o644)
	rr.Fail = map[string]error{c.InstanceDir() + "/scripts/part-002": os.ErrPermission}
	err := ScriptsUser.Run(context.Background(), c)
	if err == nil || !strings.Contains(err.Error(), "1 failures (part-002)") {
		t.Errorf("err = %v", err)
	}
	var ran []string
	for _, call := range rr.Calls {
		ran = append(ran, call[0])
	}
	want := []string{c.InstanceDir() + "/scripts/part-001", c.InstanceDir() + "/scripts/part-002", c.InstanceDir() + "/scripts/runcmd"}
	if diff := cmp.Diff(want, ran); diff != "" {
		t.Errorf("ran (-want +got):\n%s", diff)
	}
}

func TestHostname(t *testing.T) {
	for _, tc := range []struct {
		name, cfg        string
		wantFile, wantLn string
	}{
		{"meta-data", "{}", "meta-host\n", "meta-host"},
		{"hostname", "hostname: h1", "h1\n", "h1"},
		{"dotted hostname", "hostname: h2.example.com", "h2\n", "h2"},
		{"fqdn", "fqdn: h3.example.com", "h3\n", "h3"},
		{"prefer fqdn", "fqdn: h4.example.com\nprefer_fqdn_over_hostname: true", "h4.example.com\n", "h4.example.com"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _, _ := testContext(t, yamlCfg(t, tc.cfg), baseFiles)
			var live string
			c.SetLiveHostname = func(n string) error { live = n; return nil }
			if err := SetHostname.Run(context.Background(), c); err != nil {
				t.Fatal(err)
			}
			if got := readFile(t, c, "/etc/hostname"); got != tc.wantFile {
				t.Errorf("/etc/hostname = %q, want %q", got, tc.wantFile)
			}
			if live != tc.wantLn {
				t.Errorf("live hostname = %q, want %q", live, tc.wantLn)
			}
			if !c.Root.Exists(state.SetHostnameFile) {
				t.Error("data/set-hostname not written")
			}
		})
	}
	c, _, _ := testContext(t, yamlCfg(t, "preserve_hostname: true\nhostname: x"), baseFiles)
	if err := SetHostname.Run(context.Background(), c); err != nil || c.Root.Exists("/etc/hostname") {
		t.Errorf("preserve_hostname wrote /etc/hostname (err %v)", err)
	}
}

func TestUpdateHostnameRespectsAdminChange(t *testing.T) {
	c, _, _ := testContext(t, yamlCfg(t, "hostname: one"), baseFiles)
	if err := UpdateHostname.Run(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, c, "/etc/hostname"); got != "one\n" {
		t.Fatalf("first = %q", got)
	}
	c.Root.WriteFile("/etc/hostname", []byte("admin-set\n"), 0o644)
	c.Config = yamlCfg(t, "hostname: two")
	if err := UpdateHostname.Run(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, c, "/etc/hostname"); got != "admin-set\n" {
		t.Errorf("admin's hostname overwritten: %q", got)
	}
}

func TestUpdateEtcHosts(t *testing.T) {
	c, _, _ := testContext(t, yamlCfg(t, "manage_etc_hosts: true\nfqdn: web.example.com\nhostname: web"), baseFiles)
	if err := UpdateEtcHosts.Run(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	got := readFile(t, c, "/etc/hosts")
	if !strings.HasPrefix(got, "# Your system has configured 'manage_etc_hosts' as True.") {
		t.Errorf("template comment not stripped:\n%s", got)
	}
	for _, want := range []string{"\n127.0.1.1 web.example.com web\n127.0.0.1 localhost\n", "ff02::2 ip6-allrouters"} {
		if !strings.Contains(got, want) {
			t.Errorf("hosts lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "{#") || strings.Contains(got, "{{") {
		t.Errorf("unrendered template:\n%s", got)
	}

	files := map[string]string{"etc/hosts": "127.0.0.1 localhost\n127.0.1.1 old.example old\n# keep me\n", "etc/os-release": "ID=debian\n"}
	c, _, _ = testContext(t, yamlCfg(t, "manage_etc_hosts: localhost\nfqdn: new.example.com"), files)
	if err := UpdateEtcHosts.Run(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	want := "127.0.0.1 localhost\n# keep me\n127.0.1.1 new.example.com new\n"
	if got := readFile(t, c, "/etc/hosts"); got != want {
		t.Errorf("localhost mode:\n%q\nwant\n%q", got, want)
	}

	// The address is the distro's (cloud-init's _get_localhost_ip); its
	// old entries make way, "localhost" included, as cloud-init's do.
	for osr, want := range map[string]string{
		"ID=rocky\nID_LIKE=\"rhel centos fedora\"\n":    "127.0.0.1 new.example.com new\n",
		"ID=opensuse-leap\nID_LIKE=\"suse opensuse\"\n": "127.0.0.1 localhost\n127.0.1.1 new.example.com new\n",
		"ID=arch\n": "127.0.0.1 new.example.com new\n",
	} {
		c, _, _ := testContext(t, yamlCfg(t, "manage_etc_hosts: localhost\nfqdn: new.example.com"),
			map[string]string{"etc/hosts": "127.0.0.1 localhost\n", "etc/os-release": osr})
		if err := UpdateEtcHosts.Run(context.Background(), c); err != nil {
			t.Fatal(err)
		}
		if got := readFile(t, c, "/etc/hosts"); got != want {
			t.Errorf("localhost mode on %q:\n%q\nwant\n%q", osr, got, want)
		}
	}

	c, _, _ = testContext(t, Config{}, files)
	UpdateEtcHosts.Run(context.Background(), c)
	if got := readFile(t, c, "/etc/hosts"); got != files["etc/hosts"] {
		t.Errorf("unmanaged hosts changed: %q", got)
	}
}

func TestFinalMessage(t *testing.T) {
	c, _, out := testContext(t, Config{}, baseFiles)
	if err := FinalMessage.Run(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	want := "Cloud-init v. 26.2-cloudroot finished at Sun, 22 Nov 2026 08:36:48 +0000. Datasource DataSourceNoCloud [seed=/dev/sr0].  Up 12.35 seconds\n"
	if out.String() != want {
		t.Errorf("message = %q, want %q", out.String(), want)
	}
	if got := readFile(t, c, c.InstanceDir()+"/boot-finished"); got != "12.35 - Sun, 22 Nov 2026 08:36:48 +0000 - v. 26.2-cloudroot\n" {
		t.Errorf("boot-finished = %q", got)
	}
	c, _, out = testContext(t, yamlCfg(t, "final_message: 'up $UPTIME at ${timestamp}: {{ version }} {{nope}}'"), baseFiles)
	FinalMessage.Run(context.Background(), c)
	if got := out.String(); got != "up 12.35 at Sun, 22 Nov 2026 08:36:48 +0000: 26.2-cloudroot {{nope}}\n" {
		t.Errorf("custom message = %q", got)
	}
}

func TestPowerState(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    []string
		wantErr string
	}{
		{"mode: poweroff", []string{"shutdown", "-P", "now"}, ""},
		{"mode: reboot\ndelay: '+5'\nmessage: bye", []string{"shutdown", "-r", "+5", "bye"}, ""},
		{"mode: halt\ndelay: 3", []string{"shutdown", "-H", "+3"}, ""},
		{"mode: explode", nil, "mode"},
		{"mode: poweroff\ndelay: soon", nil, "delay"},
		{"mode: poweroff\ntimeout: x", nil, "timeout"},
	} {
		m, _ := datasource.DecodeYAMLMap([]byte(tc.in))
		a, err := ParsePowerState(m)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%q: err = %v, want %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if diff := cmp.Diff(tc.want, a.ShutdownArgv()); diff != "" {
			t.Errorf("%q argv (-want +got):\n%s", tc.in, diff)
		}
	}
	m, _ := datasource.DecodeYAMLMap([]byte("mode: poweroff\ncondition: [test, -f, /x]\ntimeout: 10"))
	a, _ := ParsePowerState(m)
	if diff := cmp.Diff([]string{"test", "-f", "/x"}, a.Condition); diff != "" || a.Timeout != 10*time.Second {
		t.Errorf("condition/timeout = %v %v", a.Condition, a.Timeout)
	}
}

func TestRunStageFrequencies(t *testing.T) {
	cfg := yamlCfg(t, `
cloud_config_modules:
  - runcmd
  - [final_message, always]
  - {name: scripts_per_once}
  - byobu
  - unknown_thing
runcmd: [ls]
byobu_by_default: enable
`)
	c, _, _ := testContext(t, cfg, baseFiles)
	var warnings []string
	c.Warn = func(m string) { warnings = append(warnings, m) }
	rep := RunStage(context.Background(), c, StageConfig)
	if diff := cmp.Diff([]string{"runcmd", "final_message", "scripts_per_once", "byobu"}, rep.Ran); diff != "" {
		t.Errorf("first run (-want +got):\n%s", diff)
	}
	// A name cloud-init cannot import is its warning (a recoverable
	// error), and the stage goes on.
	if diff := cmp.Diff([]string{"Could not find module named cc_unknown_thing (searched ['cc_unknown_thing', 'cloudinit.config.cc_unknown_thing'])"}, warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	for _, p := range []string{"/var/lib/cloud/instances/iid-test/sem/config_runcmd", "/var/lib/cloud/sem/config_scripts_per_once.once"} {
		if !c.Root.Exists(p) {
			t.Errorf("semaphore %s missing", p)
		}
	}
	rep = RunStage(context.Background(), c, StageConfig)
	if diff := cmp.Diff([]string{"final_message"}, rep.Ran); diff != "" {
		t.Errorf("second run (-want +got):\n%s", diff)
	}
	c.InstanceID = "iid-new"
	rep = RunStage(context.Background(), c, StageConfig)
	if diff := cmp.Diff([]string{"runcmd", "final_message", "byobu"}, rep.Ran); diff != "" {
		t.Errorf("new instance (-want +got):\n%s", diff)
	}
}

func TestRunStagePanicRecorded(t *testing.T) {
	c, _, _ := testContext(t, yamlCfg(t, "cloud_final_modules: [power_state_change, final_message]\npower_state: {mode: bogus}"), baseFiles)
	rep := RunStage(context.Background(), c, StageFinal)
	if len(rep.Errors) != 1 || !strings.Contains(rep.Errors[0], "power_state_change") {
		t.Errorf("errors = %v", rep.Errors)
	}
	if diff := cmp.Diff([]string{"power_state_change", "final_message"}, rep.Ran); diff != "" {
		t.Errorf("a failed module stopped the stage: %s", diff)
	}
}

func TestShellify(t *testing.T) {
	// util.shellify single-quotes every argument of a list entry.
	got, err := Shellify([]any{"a b", []any{"x", "y z", 3, "it's"}, nil}, "runcmd")
	if err != nil || got != "#!/bin/sh\na b\n'x' 'y z' '3' 'it'\\''s'\n" {
		t.Errorf("Shellify = %q, %v", got, err)
	}
	if _, err := Shellify(map[string]any{}, "runcmd"); err == nil {
		t.Error("Shellify(map) succeeded")
	}
}

func FuzzRenderBasicJinja(f *testing.F) {
	f.Add("## template:jinja\n{# c -#}\n{{a}} {{ b }}\n")
	f.Add("{# unterminated")
	f.Add("{% if x %}")
	f.Fuzz(func(t *testing.T, s string) {
		RenderBasicJinja(s, map[string]string{"a": "1"})
	})
}

func TestScriptsVendorPrefix(t *testing.T) {
	c, rr, _ := testContext(t, yamlCfg(t, "vendor_data: {enabled: true, prefix: [/usr/bin/ltrace, -f]}"), baseFiles)
	if err := c.Root.WriteFile(c.InstanceDir()+"/scripts/vendor/part-001", []byte("#!/bin/sh\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := ScriptsVendor.Run(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"/usr/bin/ltrace", "-f", c.InstanceDir() + "/scripts/vendor/part-001"}}
	if diff := cmp.Diff(want, rr.Calls); diff != "" {
		t.Errorf("vendor script argv (-want +got):\n%s", diff)
	}
}

// TestRunStageSemaphoreOrder checks the crash ordering of semaphores: an
// idempotent module's semaphore is written after its effects and a barrier,
// a user-script module's semaphore is durable before it runs.
func TestRunStageSemaphoreOrder(t *testing.T) {
	cfg := yamlCfg(t, "cloud_config_modules: [runcmd, scripts_per_once]\nruncmd: [ls]\n")
	c, _, _ := testContext(t, cfg, baseFiles)
	const (
		script  = "/var/lib/cloud/instances/iid-test/scripts/runcmd"
		semRun  = "/var/lib/cloud/instances/iid-test/sem/config_runcmd"
		semOnce = "/var/lib/cloud/sem/config_scripts_per_once.once"
	)
	var root *target.Root
	var syncs []string
	hook := func(p string) error {
		if p == "sync" {
			syncs = append(syncs, fmt.Sprintf("script=%v runcmd-sem=%v once-sem=%v", root.Exists(script), root.Exists(semRun), root.Exists(semOnce)))
		}
		return nil
	}
	root, err := target.New(c.Root.Dir(), target.WithDeferredSync(), target.WithFaultHook(hook))
	if err != nil {
		t.Fatal(err)
	}
	c.Root = root
	rep := RunStage(context.Background(), c, StageConfig)
	if len(rep.Errors) > 0 {
		t.Fatal(rep.Errors)
	}
	want := []string{
		// before the semaphores: runcmd's script is there, no semaphore yet
		"script=true runcmd-sem=false once-sem=false",
		// after them, before scripts_per_once runs
		"script=true runcmd-sem=true once-sem=true",
		// after scripts_per_once ran: what it wrote is made durable
		"script=true runcmd-sem=true once-sem=true",
	}
	if diff := cmp.Diff(want, syncs); diff != "" {
		t.Errorf("state at each barrier (-want +got):\n%s", diff)
	}
}
