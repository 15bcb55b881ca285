package stages

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cloudroot/cloudroot/pkg/cilog"
	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/nocloud"
	"github.com/cloudroot/cloudroot/pkg/modules"
	"github.com/cloudroot/cloudroot/pkg/state"
	"github.com/cloudroot/cloudroot/pkg/target"
	"github.com/cloudroot/cloudroot/pkg/userdata"
	"github.com/google/go-cmp/cmp"
)

type fakeRunner struct{ argv [][]string }

func (f *fakeRunner) Run(ctx context.Context, root string, cmd target.Cmd) error {
	f.argv = append(f.argv, cmd.Argv)
	return nil
}

func newRoot(t *testing.T, r target.Runner, opts ...target.Option) *target.Root {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"etc/passwd":     "root:x:0:0:root:/root:/bin/sh\n",
		"etc/group":      "root:x:0:\nadm:x:4:\nsudo:x:27:\n",
		"etc/shadow":     "root:*:19000:0:99999:7:::\n",
		"etc/os-release": "ID=debian\nVERSION_ID=\"12\"\n",
		"etc/hostname":   "image\n",
	}
	for p, s := range files {
		hp := filepath.Join(dir, p)
		os.MkdirAll(filepath.Dir(hp), 0o755)
		if err := os.WriteFile(hp, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	root, err := target.New(dir, append([]target.Option{target.WithRunner(r)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func seed(t *testing.T, md, ud string) *datasource.Data {
	t.Helper()
	d, err := nocloud.Parse(map[string][]byte{"meta-data": []byte(md), "user-data": []byte(ud)}, "config-disk (/dev/sr0)", nocloud.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func initOpts(tr, run *target.Root, d *datasource.Data) InitOptions {
	return InitOptions{
		Target: tr, Run: run, Data: d, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Out: io.Discard,
		Now: func() time.Time { return time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC) }, Uptime: func() float64 { return 3.5 },
		Version: "test", SysInfo: SysInfo{System: "Linux", KernelRelease: "6.1.0", Machine: "x86_64"},
	}
}

const userData = `#cloud-config
hostname: web1
ssh_genkeytypes: [ed25519]
runcmd: [echo hi]
write_files:
  - path: /etc/motd
    content: hello
`

func TestInitAndAgent(t *testing.T) {
	fr := &fakeRunner{}
	tr := newRoot(t, fr)
	run := newRoot(t, fr)
	d := seed(t, "instance-id: i-1\nlocal-hostname: meta\n", userData)
	var s state.State
	st := state.NewStatus()
	if err := Init(context.Background(), initOpts(tr, run, d), st.Get(state.StageInit), &s); err != nil {
		t.Fatal(err)
	}
	if errs := st.Get(state.StageInit).Errors; len(errs) > 0 {
		t.Fatalf("init errors: %v", errs)
	}
	if !s.NewInstance || s.InstanceID != "i-1" || s.PreviousInstanceID != "" {
		t.Errorf("state instance fields: new=%v iid=%q prev=%q", s.NewInstance, s.InstanceID, s.PreviousInstanceID)
	}
	check := func(r *target.Root, p, want string, perm os.FileMode) {
		t.Helper()
		b, err := r.ReadFile(p)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			return
		}
		if want != "" && string(b) != want {
			t.Errorf("%s = %q, want %q", p, b, want)
		}
		if perm != 0 {
			fi, _ := r.Stat(p)
			if fi.Mode().Perm() != perm {
				t.Errorf("%s mode = %o, want %o", p, fi.Mode().Perm(), perm)
			}
		}
	}
	check(tr, "/etc/hostname", "web1\n", 0)
	check(tr, "/etc/motd", "hello", 0o644)
	check(tr, "/var/lib/cloud/data/instance-id", "i-1\n", 0)
	// NoCloud's dsmode is net: cloud-init's network stage instancifies
	// again and finds the id its init-local stage wrote.
	check(tr, "/var/lib/cloud/data/previous-instance-id", "i-1\n", 0)
	check(tr, "/var/lib/cloud/instance/datasource", "DataSourceNoCloud: DataSourceNoCloud [seed=/dev/sr0]\n", 0)
	check(tr, "/var/lib/cloud/instances/i-1/user-data.txt", userData, 0o600)
	check(tr, "/var/lib/cloud/instances/i-1/cloud-config.txt", "", 0o600)
	check(run, "/run/cloud-init/instance-data-sensitive.json", "", 0o600)
	check(run, "/run/cloud-init/instance-data.json", "", 0o644)
	check(run, "/run/cloud-init/.instance-id", "i-1\n", 0)
	if link, err := os.Readlink(filepath.Join(tr.Dir(), "var/lib/cloud/instance")); err != nil || link != "/var/lib/cloud/instances/i-1" {
		t.Errorf("instance link = %q, %v", link, err)
	}
	var pub map[string]any
	b, _ := run.ReadFile("/run/cloud-init/instance-data.json")
	if err := json.Unmarshal(b, &pub); err != nil {
		t.Fatal(err)
	}
	if pub["merged_cfg"] != Redacted {
		t.Errorf("merged_cfg not redacted: %v", pub["merged_cfg"])
	}
	v1 := pub["v1"].(map[string]any)
	if v1["instance_id"] != "i-1" || v1["local_hostname"] != "meta" || v1["platform"] != "nocloud" || v1["subplatform"] != "config-disk (/dev/sr0)" {
		t.Errorf("v1 = %v", v1)
	}
	if !strings.Contains(string(b), `"ssh_genkeytypes"`) == false {
		// merged config must only be in the sensitive file
	}
	if strings.Contains(string(b), "ssh_genkeytypes") {
		t.Error("merged config leaked into the world-readable instance-data.json")
	}

	// Hand off and run the agent's stages on the same root.
	s.Version = state.Version
	sb, _ := state.Marshal(&s)
	if err := tr.WriteFile(state.StateFile, sb, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteStatus(tr, tr, st); err != nil {
		t.Fatal(err)
	}
	ao := AgentOptions{Root: tr, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Out: io.Discard,
		Now: time.Now, Uptime: func() float64 { return 9 }, Version: "test"}
	errs, power, err := Modules(context.Background(), ao, modules.StageConfig)
	if err != nil || len(errs) > 0 || power != nil {
		t.Fatalf("config: %v %v %v", errs, power, err)
	}
	check(tr, "/var/lib/cloud/instances/i-1/scripts/runcmd", "#!/bin/sh\necho hi\n", 0o700)
	if _, _, err := Modules(context.Background(), ao, modules.StageFinal); err != nil {
		t.Fatal(err)
	}
	ran := false
	for _, a := range fr.argv {
		if a[0] == "/var/lib/cloud/instances/i-1/scripts/runcmd" {
			ran = true
		}
	}
	if !ran {
		t.Errorf("scripts_user did not run runcmd: %v", fr.argv)
	}
	got := ReadStatus(tr)
	for _, n := range state.Stages[2:] {
		ss := got.Get(n)
		if ss.Start == nil || ss.Finished == nil {
			t.Errorf("%s not started/finished: %+v", n, ss)
		}
	}
	if !tr.Exists(state.ResultFile) || !tr.Exists("/var/lib/cloud/instances/i-1/boot-finished") {
		t.Error("result.json or boot-finished missing")
	}
}

func TestInitRecordsBadUserData(t *testing.T) {
	tr := newRoot(t, &fakeRunner{})
	d := seed(t, "instance-id: i-2\nlocal-hostname: still-named\n", "#cloud-config\nusers: [\n  - bad: [yaml\n")
	var s state.State
	st := state.NewStatus()
	if err := Init(context.Background(), initOpts(tr, tr, d), st.Get(state.StageInit), &s); err != nil {
		t.Fatal(err)
	}
	rec := st.Get(state.StageInit).RecoverableErrors["WARNING"]
	if len(rec) == 0 || !strings.Contains(rec[0], "user-data") || !strings.Contains(rec[0], "line") {
		t.Errorf("recoverable errors = %v", rec)
	}
	if b, _ := tr.ReadFile("/etc/hostname"); string(b) != "still-named\n" {
		t.Errorf("hostname from meta-data not applied: %q", b)
	}
}

func TestInitUnsupportedFormatIsAnError(t *testing.T) {
	tr := newRoot(t, &fakeRunner{})
	d := seed(t, "instance-id: i-3\n", "#include\nhttp://127.0.0.1/x\n")
	var s state.State
	st := state.NewStatus()
	Init(context.Background(), initOpts(tr, tr, d), st.Get(state.StageInit), &s)
	if errs := st.Get(state.StageInit).Errors; len(errs) != 1 || !strings.Contains(errs[0], "not supported") {
		t.Errorf("errors = %v", errs)
	}
}

func TestAgentWithoutState(t *testing.T) {
	tr := newRoot(t, &fakeRunner{})
	ao := AgentOptions{Root: tr, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Out: io.Discard, Now: time.Now, Uptime: func() float64 { return 1 }}
	errs, _, err := Modules(context.Background(), ao, modules.StageConfig)
	if err == nil || len(errs) != 1 {
		t.Fatalf("errs=%v err=%v", errs, err)
	}
	got := ReadStatus(tr).Get(state.StageModulesConfig)
	if len(got.Errors) != 1 || !strings.Contains(got.Errors[0], "no usable state") {
		t.Errorf("status errors = %v", got.Errors)
	}
}

func TestRedact(t *testing.T) {
	in := map[string]any{"ds": map[string]any{"vendor_data": "x", "meta_data": map[string]any{"user-data": "s"}}, "userdata": "u", "v1": map[string]any{"a": 1}}
	out := Redact(in)
	ds := out["ds"].(map[string]any)
	if ds["vendor_data"] != Redacted || ds["meta_data"].(map[string]any)["user-data"] != Redacted || out["userdata"] != Redacted {
		t.Errorf("Redact = %v", out)
	}
	if in["userdata"] != "u" {
		t.Error("Redact mutated its input")
	}
}

// TestInitFullPipeline feeds a MIME user-data with an include served from
// 127.0.0.1, a gzip part, jinja, an archive, a boothook, a per-instance
// script and merge_how, and checks where everything lands.
func TestInitFullPipeline(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A part's merge_how governs how that part merges into what came
		// before it (cloud-init's handlers/cloud_config.py).
		io.WriteString(w, "#cloud-config\nruncmd: [from-include]\nmerge_how: 'list(append)+dict(recurse_array)+str()'\n")
	}))
	defer srv.Close()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("#cloud-config\nwrite_files:\n  - path: /etc/from-gzip\n    content: gz\n"))
	zw.Close()
	msg, err := userdata.MakeMIME([]userdata.Attachment{
		{Filename: "base.yaml", Type: "text/cloud-config", Content: []byte("#cloud-config\nruncmd: [base]\n")},
		{Filename: "inc.txt", Type: "text/x-include-url", Content: []byte("#include\n" + srv.URL + "/inc\n")},
		{Filename: "tmpl.yaml", Type: "text/jinja2", Content: []byte("## template: jinja\n#cloud-config\nhostname: h-{{ v1.instance_id }}\n")},
		{Filename: "hook.sh", Type: "text/cloud-boothook", Content: []byte("#cloud-boothook\n#!/bin/sh\necho hook\n")},
		{Filename: "once.sh", Type: "text/x-shellscript-per-instance", Content: []byte("#!/bin/sh\necho per-instance\n")},
		{Filename: "arch.yaml", Type: "text/cloud-config-archive", Content: []byte("#cloud-config-archive\n- type: text/x-shellscript\n  filename: from-archive.sh\n  content: |\n    #!/bin/sh\n    echo archived\n")},
	})
	if err != nil {
		t.Fatal(err)
	}
	// A gzip-compressed cloud-config as a second MIME message would need
	// nesting; the gzip part is exercised as vendor-data instead.
	fr := &fakeRunner{}
	tr := newRoot(t, fr)
	d := seed(t, "instance-id: i-full\n", string(msg))
	d.VendorData = gz.Bytes()
	o := initOpts(tr, tr, d)
	o.Fetch = userdata.HTTPFetcher(srv.Client(), 1<<20, 1)
	var s state.State
	st := state.NewStatus()
	if err := Init(context.Background(), o, st.Get(state.StageInit), &s); err != nil {
		t.Fatal(err)
	}
	if errs := st.Get(state.StageInit).Errors; len(errs) > 0 {
		t.Fatalf("errors: %v", errs)
	}
	if got := s.Config["hostname"]; got != "h-i-full" {
		t.Errorf("jinja hostname = %v", got)
	}
	if diff := cmp.Diff([]any{"base", "from-include"}, s.Config["runcmd"]); diff != "" {
		t.Errorf("runcmd merged with list(append) (-want +got):\n%s", diff)
	}
	if b, _ := tr.ReadFile("/etc/from-gzip"); string(b) != "gz" {
		t.Errorf("gzip vendor-data write_files: %q", b)
	}
	for _, p := range []string{
		"/var/lib/cloud/instances/i-full/boothooks/hook.sh",
		"/var/lib/cloud/scripts/per-instance/once.sh",
		"/var/lib/cloud/instances/i-full/scripts/from-archive.sh",
	} {
		fi, err := tr.Stat(p)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if fi.Mode().Perm() != 0o700 {
			t.Errorf("%s mode %o", p, fi.Mode().Perm())
		}
	}
	ranHook := false
	for _, a := range fr.argv {
		if a[0] == "/var/lib/cloud/instances/i-full/boothooks/hook.sh" {
			ranHook = true
		}
	}
	if !ranHook {
		t.Errorf("boothook not run: %v", fr.argv)
	}
}

// TestInitSchemaWarnings: schema errors are one recoverable warning, as
// cloud-init 26.x words it at boot; the details are in the log.
func TestInitSchemaWarnings(t *testing.T) {
	tr := newRoot(t, &fakeRunner{})
	d := seed(t, "instance-id: i-s\n", "#cloud-config\nruncmd: 5\nnot_a_key: 1\n")
	var s state.State
	st := state.NewStatus()
	var logs strings.Builder
	o := initOpts(tr, tr, d)
	o.Log = slog.New(slog.NewTextHandler(&logs, nil))
	Init(context.Background(), o, st.Get(state.StageInit), &s)
	if diff := cmp.Diff([]string{SchemaWarning}, st.Get(state.StageInit).RecoverableErrors["WARNING"]); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	for _, want := range []string{"line 2: runcmd", "not_a_key"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, logs.String())
		}
	}
}

// TestInitPlatformPublicKeys: datasources that carry keys outside
// meta-data's public-keys (OpenStack public_keys, GCE ssh-keys) still get
// them to the default user.
func TestInitPlatformPublicKeys(t *testing.T) {
	tr := newRoot(t, &fakeRunner{})
	d := seed(t, "instance-id: i-k\n", "#cloud-config\nssh_genkeytypes: []\n")
	d.PublicKeys = []string{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPlatformKey platform@example"}
	d.Hostname = "from-platform"
	var s state.State
	st := state.NewStatus()
	if err := Init(context.Background(), initOpts(tr, tr, d), st.Get(state.StageInit), &s); err != nil {
		t.Fatal(err)
	}
	b, err := tr.ReadFile("/home/debian/.ssh/authorized_keys")
	if err != nil || !strings.Contains(string(b), "PlatformKey") {
		t.Errorf("default user's authorized_keys = %q, %v", b, err)
	}
	if h, _ := tr.ReadFile("/etc/hostname"); string(h) != "from-platform\n" {
		t.Errorf("hostname = %q", h)
	}
}

func TestInitVendorData2(t *testing.T) {
	tr := newRoot(t, &fakeRunner{})
	d := seed(t, "instance-id: i-v2\n", "#cloud-config\nssh_genkeytypes: []\n")
	d.VendorData = []byte("#cloud-config\nbootcmd: [from-vendor]\nfinal_message: vendor\n")
	d.VendorData2 = []byte("#cloud-config\nfinal_message: vendor2\n")
	var s state.State
	st := state.NewStatus()
	if err := Init(context.Background(), initOpts(tr, tr, d), st.Get(state.StageInit), &s); err != nil {
		t.Fatal(err)
	}
	if got := s.Config["final_message"]; got != "vendor2" {
		t.Errorf("final_message = %v, want vendor2 (vendor-data2 over vendor-data)", got)
	}
	if diff := cmp.Diff([]any{"from-vendor"}, s.Config["bootcmd"]); diff != "" {
		t.Errorf("bootcmd from vendor-data: %s", diff)
	}
	for _, p := range []string{"/var/lib/cloud/instances/i-v2/vendor-data2.txt", "/var/lib/cloud/instances/i-v2/vendor2-cloud-config.txt"} {
		if !tr.Exists(p) {
			t.Errorf("%s missing", p)
		}
	}
}

func TestInitInjectedFiles(t *testing.T) {
	tr := newRoot(t, &fakeRunner{})
	d := seed(t, "instance-id: i-files\n", "#cloud-config\nssh_genkeytypes: []\n")
	d.Files = map[string][]byte{"/etc/injected.conf": []byte("a=1\n"), "srv/rel.txt": []byte("rel\n")}
	var s state.State
	st := state.NewStatus()
	if err := Init(context.Background(), initOpts(tr, tr, d), st.Get(state.StageInit), &s); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{"/etc/injected.conf": "a=1\n", "/srv/rel.txt": "rel\n"} {
		b, err := tr.ReadFile(p)
		if err != nil || string(b) != want {
			t.Errorf("%s = %q, %v; want %q", p, b, err, want)
		}
		if fi, err := tr.Stat(p); err == nil && fi.Mode().Perm() != 0o660 {
			t.Errorf("%s mode %v, want 0660", p, fi.Mode().Perm())
		}
	}
	// Not a new instance: not written again.
	if err := tr.Remove("/etc/injected.conf"); err != nil {
		t.Fatal(err)
	}
	s = state.State{}
	if err := Init(context.Background(), initOpts(tr, tr, d), st.Get(state.StageInit), &s); err != nil {
		t.Fatal(err)
	}
	if tr.Exists("/etc/injected.conf") {
		t.Error("injected file written again on the same instance")
	}
}

// TestInitFilesEveryBoot: SmartOS's scripts are rewritten on every boot,
// with their own modes.
func TestInitFilesEveryBoot(t *testing.T) {
	tr := newRoot(t, &fakeRunner{})
	d := seed(t, "instance-id: i-smart\n", "#cloud-config\nssh_genkeytypes: []\n")
	const script = "/var/lib/cloud/instances/i-smart/data/user-script"
	d.Files = map[string][]byte{script: []byte("#!/bin/sh\ntrue\n")}
	d.FileModes = map[string]fs.FileMode{script: 0o700}
	d.FilesEveryBoot = true
	for boot := 1; boot <= 2; boot++ {
		var s state.State
		if err := Init(context.Background(), initOpts(tr, tr, d), state.NewStatus().Get(state.StageInit), &s); err != nil {
			t.Fatal(err)
		}
		fi, err := tr.Stat(script)
		if err != nil {
			t.Fatalf("boot %d: %v", boot, err)
		}
		if fi.Mode().Perm() != 0o700 {
			t.Errorf("boot %d: mode %v, want 0700", boot, fi.Mode().Perm())
		}
		if err := tr.Remove(script); err != nil {
			t.Fatal(err)
		}
	}
}

// TestInitDatasourceConfig: the datasource's own configuration (Azure's
// default user from ovf-env.xml) is merged below user-data.
func TestInitDatasourceConfig(t *testing.T) {
	tr := newRoot(t, &fakeRunner{})
	d := seed(t, "instance-id: i-dscfg\n", "#cloud-config\nssh_genkeytypes: []\nfinal_message: from-user\n")
	d.Config = map[string]any{
		"system_info":   map[string]any{"default_user": map[string]any{"name": "azureuser", "lock_passwd": false}},
		"final_message": "from-datasource",
	}
	var s state.State
	if err := Init(context.Background(), initOpts(tr, tr, d), state.NewStatus().Get(state.StageInit), &s); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.LookupUser("azureuser"); err != nil {
		t.Errorf("the datasource's default user was not created: %v", err)
	}
	if got := s.Config["final_message"]; got != "from-user" {
		t.Errorf("final_message = %v, want user-data over the datasource", got)
	}
}

// TestInitFileOps: a datasource's file operations run after its files
// (SmartOS: stale scripts removed, the legacy link, the provisioning
// marker renamed); a failing one is a warning.
func TestInitFileOps(t *testing.T) {
	tr := newRoot(t, &fakeRunner{})
	for p, c := range map[string]string{"/var/svc/provisioning": "", "/var/lib/cloud/instances/i-ops/data/operator-script": "old"} {
		if err := tr.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d := seed(t, "instance-id: i-ops\n", "#cloud-config\nssh_genkeytypes: []\n")
	const script = "/var/lib/cloud/instances/i-ops/data/user-script"
	d.Files = map[string][]byte{script: []byte("#!/bin/sh\n")}
	d.FilesEveryBoot = true
	d.FileOps = []datasource.FileOp{
		{Op: datasource.FileRemove, Path: "/var/lib/cloud/instances/i-ops/data/operator-script"},
		{Op: datasource.FileSymlink, Path: "/var/db/user-script", Target: script},
		{Op: datasource.FileRename, Path: "/var/svc/provisioning", Target: "/var/svc/provision_success"},
		{Op: datasource.FileRename, Path: "/var/svc/absent", Target: "/var/svc/never"},
		{Op: "chmod", Path: "/x"},
	}
	st := state.NewStatus()
	var s state.State
	if err := Init(context.Background(), initOpts(tr, tr, d), st.Get(state.StageInit), &s); err != nil {
		t.Fatal(err)
	}
	if tr.Exists("/var/lib/cloud/instances/i-ops/data/operator-script") {
		t.Error("stale operator-script not removed")
	}
	if l, err := tr.Readlink("/var/db/user-script"); err != nil || l != script {
		t.Errorf("/var/db/user-script → %q, %v", l, err)
	}
	if tr.Exists("/var/svc/provisioning") || !tr.Exists("/var/svc/provision_success") {
		t.Error("provisioning marker not renamed")
	}
	if tr.Exists("/var/svc/never") {
		t.Error("a rename of a missing file created something")
	}
	found := false
	for _, w := range st.Get(state.StageInit).RecoverableErrors["WARNING"] {
		found = found || strings.Contains(w, `unknown file operation "chmod"`)
	}
	if !found {
		t.Errorf("unknown operation not warned about: %v", st.Get(state.StageInit).RecoverableErrors)
	}
}

// A user-data part read as cloud-init's PyYAML reads it: the repeated key
// keeps its last value (the part is not dropped), `yes` is a boolean, 0640
// an octal mode; the repeat is logged with its line, and is no recoverable
// error (cloud-init is silent about it). The integer mode is a schema
// warning, as in cloud-init 26.x (its schema wants a string).
func TestInitUserDataYAML11(t *testing.T) {
	fr := &fakeRunner{}
	tr := newRoot(t, fr)
	run := newRoot(t, fr)
	if err := tr.WriteFile("/etc/appended", []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ud := "#cloud-config\nhostname: first\nwrite_files:\n  - path: /etc/secret\n    permissions: 0640\n    content: s\n  - path: /etc/appended\n    append: yes\n    content: \"b\\n\"\nhostname: last\n"
	d := seed(t, "instance-id: i-1\n", ud)
	var s state.State
	st := state.NewStatus()
	var logBuf bytes.Buffer
	o := initOpts(tr, run, d)
	o.Log = slog.New(slog.NewTextHandler(&logBuf, nil))
	if err := Init(context.Background(), o, st.Get(state.StageInit), &s); err != nil {
		t.Fatal(err)
	}
	stage := st.Get(state.StageInit)
	wantWarn := []string{SchemaWarning}
	if len(stage.Errors) > 0 || len(stage.RecoverableErrors) != 1 || !slices.Equal(stage.RecoverableErrors["WARNING"], wantWarn) {
		t.Fatalf("init errors %v, recoverable %v", stage.Errors, stage.RecoverableErrors)
	}
	for p, want := range map[string]string{"/etc/hostname": "last\n", "/etc/secret": "s", "/etc/appended": "a\nb\n"} {
		if b, err := tr.ReadFile(p); err != nil || string(b) != want {
			t.Errorf("%s = %q, %v; want %q", p, b, err, want)
		}
	}
	if fi, err := tr.Stat("/etc/secret"); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("/etc/secret mode: %v %v", fi, err)
	}
	if !strings.Contains(logBuf.String(), `Invalid cloud-config provided: user-data: line 5: write_files.0.permissions: 416 is not of type 'string'`) {
		t.Errorf("schema detail not logged:\n%s", logBuf.String())
	}
	if !strings.Contains(logBuf.String(), `user-data: part-001: line 10 column 1: duplicate key \"hostname\" (first at line 2)`) {
		t.Errorf("duplicate key not logged:\n%s", logBuf.String())
	}
}

// TestInapplicableModulesLeaveNoTrace: a module whose activation keys are
// all absent (bootcmd, write_files, update_etc_hosts... here) is left out as
// cloud-init 26.x's run_section does: one modules.py INFO line names them
// all, none takes a semaphore or has an event, and status.json records
// nothing for them (no error, no recoverable error).
func TestInapplicableModulesLeaveNoTrace(t *testing.T) {
	fr := &fakeRunner{}
	tr := newRoot(t, fr)
	run := newRoot(t, fr)
	d := seed(t, "instance-id: i-1\n", "#cloud-config\nhostname: quiet\nssh_genkeytypes: [ed25519]\n")
	var s state.State
	st := state.NewStatus()
	var logBuf bytes.Buffer
	o := initOpts(tr, run, d)
	o.Log = slog.New(cilog.NewHandler(&logBuf, cilog.Options{Logger: "stages.py", Now: o.Now}))
	if err := Init(context.Background(), o, st.Get(state.StageInit), &s); err != nil {
		t.Fatal(err)
	}
	const line = " - modules.py[INFO]: Skipping modules 'bootcmd,write_files,disk_setup,update_etc_hosts,ca_certs,rsyslog' because no applicable config is provided. stage=init\n"
	if !strings.Contains(logBuf.String(), line) {
		t.Errorf("log lacks %q:\n%s", line, logBuf.String())
	}
	for _, m := range []string{"write_files", "disk_setup", "ca_certs", "rsyslog"} {
		if sem := "/var/lib/cloud/instances/i-1/sem/config_" + m; tr.Exists(sem) {
			t.Errorf("%s exists", sem)
		}
		if strings.Contains(logBuf.String(), "config-"+m) {
			t.Errorf("%s has an event", m)
		}
	}
	if !tr.Exists("/var/lib/cloud/instances/i-1/sem/config_set_hostname") {
		t.Error("set_hostname (no activation keys) took no semaphore")
	}
	if stage := st.Get(state.StageInit); len(stage.Errors) > 0 || len(stage.RecoverableErrors) > 0 {
		t.Errorf("init errors %v, recoverable %v", stage.Errors, stage.RecoverableErrors)
	}
}
