package vmware

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/cloudcfg"
	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/dstest"
	"github.com/cloudroot/cloudroot/pkg/target"
)

var vmDMI = bootenv.DMI{ProductName: "VMware7,1", SysVendor: "VMware, Inc.", ProductUUID: "4216A1B2-C3D4-E5F6-0718-293A4B5C6D7E"}

// setup builds the Source and Env of a golden case: a copy of its
// guestinfo/ served by the transport it names, its imc/ as the IMC
// directory and root/ as the target root.
func setup(t *testing.T, dir string) (*Source, datasource.Env, string) {
	t.Helper()
	c := readCase(t, dir)
	gi := copyDir(t, filepath.Join(dir, "guestinfo"))
	s := &Source{RPCTool: missing, VMToolsd: missing, NoBackdoor: true, Environ: c.Environ,
		IMCDir: copyDir(t, filepath.Join(dir, "imc"))}
	if s.Environ == nil {
		s.Environ = map[string]string{}
	}
	switch c.Transport {
	case RPCToolName:
		s.RPCTool = fakeTool(t, RPCToolName, gi)
	case VMToolsdName:
		s.VMToolsd = fakeTool(t, VMToolsdName, gi)
	case "backdoor":
		s.NoBackdoor = false
		s.port = (&fakeVMX{Guestinfo: guestinfoDir(t, gi)}).opener(nil)
	}
	env := datasource.Env{DMI: c.DMI, Budget: quick}
	if c.Config != nil {
		env.Config = map[string]any{"VMware": c.Config}
	}
	if root := filepath.Join(dir, "root"); isDir(root) {
		env.Root = os.DirFS(root)
		// The system configuration is the boot's, loaded once from the
		// root (pkg/stages) and handed over in Env.System.
		r, err := target.New(root)
		if err != nil {
			t.Fatal(err)
		}
		m, err := cloudcfg.Load(cloudcfg.LoadOptions{Root: r})
		if err != nil {
			t.Fatal(err)
		}
		env.System = m.System
	}
	return s, env, gi
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// upstreamDiffers are the fields of each case's upstream golden where
// cloudroot deliberately differs (docs/datasources.md). The guest
// customization cases have no upstream golden.
var upstreamDiffers = map[string]dstest.Differs{
	"envvar":                 {"network_config": noNetwork},
	"guestinfo-product-uuid": {"network_config": noNetwork},
}

// noNetwork: metadata without a network key.
const noNetwork = "metadata without network: cloud-init's VMware writes the distro's fallback config itself; cloudroot leaves none and the boot's fallback configuration does the same"

func TestGolden(t *testing.T) {
	for _, name := range dstest.Cases(t, "testdata") {
		if name == "fuzz" { // the fuzzers' regression inputs
			continue
		}
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("testdata", name)
			s, env, _ := setup(t, dir)
			d, err := s.Get(context.Background(), env)
			dstest.Upstream(t, dir, d, err, "", upstreamDiffers[name])
			if err != nil {
				t.Fatal(err)
			}
			dstest.Golden(t, filepath.Join(dir, "want.json"), d, "")
		})
	}
}

// TestNotVMwareTouchesNothing: without VMware DMI (and no envvar data)
// no tool runs and the backdoor is never opened.
func TestNotVMwareTouchesNothing(t *testing.T) {
	gi := copyDir(t, "testdata/guestinfo-json/guestinfo")
	opens := 0
	fake := &fakeVMX{Guestinfo: guestinfoDir(t, gi)}
	s := &Source{RPCTool: fakeTool(t, RPCToolName, gi), VMToolsd: fakeTool(t, VMToolsdName, gi),
		Environ: map[string]string{"VMX_GUESTINFO": "1"}, port: fake.opener(&opens)}
	for _, dmi := range []bootenv.DMI{{}, {ProductName: "KVM", SysVendor: "QEMU"}, {ProductName: "Standard PC (Q35 + ICH9, 2009)"}} {
		_, err := s.Get(context.Background(), datasource.Env{DMI: dmi})
		if !errors.Is(err, datasource.ErrNotFound) {
			t.Fatalf("%+v: err = %v, want ErrNotFound", dmi, err)
		}
		if !strings.Contains(err.Error(), "not VMware") {
			t.Errorf("err = %v, want it to say not VMware", err)
		}
	}
	if c := calls(t, gi); len(c) > 0 {
		t.Errorf("tools ran: %q", c)
	}
	if opens != 0 || fake.Calls != 0 {
		t.Errorf("backdoor opened %d times, %d calls", opens, fake.Calls)
	}
}

func TestNotFound(t *testing.T) {
	emptyGI := t.TempDir()
	plugin := fstest.MapFS{"usr/lib/open-vm-tools/plugins/vmsvc/libdeployPkgPlugin.so": {}}
	for _, tc := range []struct {
		name string
		s    *Source
		env  datasource.Env
	}{
		{"every key unset", &Source{RPCTool: fakeTool(t, RPCToolName, emptyGI), VMToolsd: missing, NoBackdoor: true, Environ: map[string]string{}}, datasource.Env{DMI: vmDMI}},
		{"every key unset (backdoor)", &Source{RPCTool: missing, VMToolsd: missing, Environ: map[string]string{}, port: (&fakeVMX{}).opener(nil)}, datasource.Env{DMI: vmDMI}},
		{"redacted keys", &Source{RPCTool: missing, VMToolsd: missing, Environ: map[string]string{}, port: (&fakeVMX{Guestinfo: map[string]string{
			"guestinfo.metadata": "---", "guestinfo.userdata": "---\n", "guestinfo.vendordata": "  \n"}}).opener(nil)}, datasource.Env{DMI: vmDMI}},
		{"envvar gate set, variables empty", &Source{RPCTool: missing, VMToolsd: missing, NoBackdoor: true,
			Environ: map[string]string{"VMX_GUESTINFO": "1", "VMX_GUESTINFO_METADATA": "", "VMX_GUESTINFO_USERDATA": "---"}}, datasource.Env{}},
		{"envvar data without the gate", &Source{RPCTool: missing, VMToolsd: missing, NoBackdoor: true,
			Environ: map[string]string{"VMX_GUESTINFO_METADATA": "instance-id: x"}}, datasource.Env{}},
		{"no plugin, no customization", &Source{RPCTool: missing, VMToolsd: missing, NoBackdoor: true, Environ: map[string]string{}, IMCDir: copyDir(t, "testdata/imc-raw/imc")},
			datasource.Env{DMI: vmDMI, Root: fstest.MapFS{}}},
		{"plugin, no cust.cfg", &Source{RPCTool: missing, VMToolsd: missing, NoBackdoor: true, Environ: map[string]string{}, IMCDir: t.TempDir()},
			datasource.Env{DMI: vmDMI, Root: plugin, Config: map[string]any{"VMware": map[string]any{"vmware_cust_file_max_wait": 0}}}},
		{"raw data disallowed", &Source{RPCTool: missing, VMToolsd: missing, NoBackdoor: true, Environ: map[string]string{}, IMCDir: copyDir(t, "testdata/imc-raw/imc")},
			datasource.Env{DMI: vmDMI, Root: plugin, Config: map[string]any{"VMware": map[string]any{"allow_raw_data": false}}}},
		{"LinuxPrep with customization disabled", &Source{RPCTool: missing, VMToolsd: missing, NoBackdoor: true, Environ: map[string]string{}, IMCDir: copyDir(t, "testdata/imc-linuxprep/imc")},
			datasource.Env{DMI: vmDMI, Root: plugin}},
		// The system configuration is the boot's (Env.System), read once:
		// a cloud.cfg in the root allowing customization is not read again.
		{"LinuxPrep, cloud.cfg not read again", &Source{RPCTool: missing, VMToolsd: missing, NoBackdoor: true, Environ: map[string]string{}, IMCDir: copyDir(t, "testdata/imc-linuxprep/imc")},
			datasource.Env{DMI: vmDMI, Root: fstest.MapFS{
				"usr/lib/open-vm-tools/plugins/vmsvc/libdeployPkgPlugin.so": {},
				"etc/cloud/cloud.cfg": {Data: []byte("disable_vmware_customization: false\n")},
			}}},
		{"raw data without data", &Source{RPCTool: missing, VMToolsd: missing, NoBackdoor: true, Environ: map[string]string{}, IMCDir: imcDir(t, map[string]string{
			"cust.cfg": "[CLOUDINIT]\nMETADATA = md\n", "md": "\n"})}, datasource.Env{DMI: vmDMI, Root: plugin}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.env.Budget = quick
			_, err := tc.s.Get(context.Background(), tc.env)
			if !errors.Is(err, datasource.ErrNotFound) {
				t.Fatalf("err = %v, want ErrNotFound", err)
			}
		})
	}
}

// imcDir writes an IMC directory.
func imcDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for n, c := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestBroken: data that is there but does not decode or parse is an
// error naming the key or file, never ErrNotFound.
func TestBroken(t *testing.T) {
	plugin := fstest.MapFS{"usr/lib64/vmware-tools/plugins/vmsvc/libdeployPkgPlugin.so": {}}
	// The boot's merged system configuration allows customization.
	allowCust := map[string]any{"disable_vmware_customization": false}
	guest := func(kv ...string) *Source {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m["guestinfo."+kv[i]] = kv[i+1]
		}
		return &Source{RPCTool: missing, VMToolsd: missing, Environ: map[string]string{}, port: (&fakeVMX{Guestinfo: m}).opener(nil)}
	}
	custOnly := func(files map[string]string) *Source {
		return &Source{RPCTool: missing, VMToolsd: missing, NoBackdoor: true, Environ: map[string]string{}, IMCDir: imcDir(t, files)}
	}
	for _, tc := range []struct {
		name string
		s    *Source
		env  datasource.Env
		want string
	}{
		{"bad base64", guest("userdata", "#cloud-config", "userdata.encoding", "base64"), datasource.Env{DMI: vmDMI},
			"guestinfo.userdata (base64): invalid base64"},
		{"bad padding", guest("metadata", "YWJj ZA", "metadata.encoding", "b64"), datasource.Env{DMI: vmDMI},
			"guestinfo.metadata (b64): invalid base64"},
		{"truncated gzip", guest("vendordata", b64(gz(t, "#cloud-config\n")[:20]), "vendordata.encoding", "gzip+base64"), datasource.Env{DMI: vmDMI},
			"guestinfo.vendordata (gzip+base64): invalid gzip data"},
		{"bad JSON", guest("metadata", `{"instance-id": "x"`), datasource.Env{DMI: vmDMI},
			"guestinfo.metadata: neither JSON nor a YAML mapping"},
		{"bad YAML", guest("metadata", "instance-id: [x\n"), datasource.Env{DMI: vmDMI},
			"guestinfo.metadata: neither JSON nor a YAML mapping"},
		{"JSON list", guest("metadata", `["instance-id"]`), datasource.Env{DMI: vmDMI},
			"guestinfo.metadata: expected a mapping, got JSON array"},
		{"network not base64", guest("metadata", "instance-id: x\nnetwork: 'YWJ'\nnetwork.encoding: base64\n"), datasource.Env{DMI: vmDMI},
			"guestinfo.metadata network (base64): invalid base64"},
		{"network a list", guest("metadata", "instance-id: x\nnetwork: [1]\n"), datasource.Env{DMI: vmDMI},
			"guestinfo.metadata: network must be a mapping or an encoded string"},
		{"network not YAML", guest("metadata", "instance-id: x\nnetwork: 'a: [b'\n"), datasource.Env{DMI: vmDMI},
			"guestinfo.metadata network: neither JSON nor a YAML mapping"},
		{"no instance-id, no product_uuid", guest("metadata", "local-hostname: h\n"), datasource.Env{DMI: bootenv.DMI{ProductName: "VMware Virtual Platform"}},
			"guestinfo.metadata: no instance-id in meta-data and no DMI product_uuid"},
		{"envvar bad base64", &Source{NoBackdoor: true, RPCTool: missing, VMToolsd: missing, Environ: map[string]string{
			"VMX_GUESTINFO": "1", "VMX_GUESTINFO_METADATA": "YWJ", "VMX_GUESTINFO_METADATA_ENCODING": "gz+b64"}}, datasource.Env{},
			"VMX_GUESTINFO_METADATA (gz+b64): invalid base64"},
		{"envvar bad YAML", &Source{NoBackdoor: true, RPCTool: missing, VMToolsd: missing, Environ: map[string]string{
			"VMX_GUESTINFO": "1", "VMX_GUESTINFO_METADATA": "a: b: c"}}, datasource.Env{},
			"VMX_GUESTINFO_METADATA: neither JSON nor a YAML mapping"},
		{"cust.cfg not INI", custOnly(map[string]string{"cust.cfg": "HOSTNAME=x\n"}), datasource.Env{DMI: vmDMI, Root: plugin, System: allowCust},
			"cust.cfg: vmware: line 1: file contains no section headers"},
		{"cust.cfg bad yes/no", custOnly(map[string]string{"cust.cfg": "[NIC-CONFIG]\nNICS = NIC1\n[NIC1]\nMACADDR = 00:50:56:00:00:01\n[MISC]\nPOST-GC-STATUS = maybe\n"}),
			datasource.Env{DMI: vmDMI, Root: plugin, System: allowCust}, "cust.cfg: [MISC] POST-GC-STATUS must be yes or no"},
		{"cust.cfg two primaries", custOnly(map[string]string{"cust.cfg": "[NIC-CONFIG]\nNICS = NIC1,NIC2\n[NIC1]\nMACADDR = 00:50:56:00:00:01\nPRIMARY = yes\n[NIC2]\nMACADDR = 00:50:56:00:00:02\nPRIMARY = yes\n"}),
			datasource.Env{DMI: vmDMI, Root: plugin, System: allowCust}, "cust.cfg: network: vmware: there can only be one primary nic"},
		{"cust.cfg without NICs", custOnly(map[string]string{"cust.cfg": "[NETWORK]\nHOSTNAME = h\n"}),
			datasource.Env{DMI: vmDMI, Root: plugin, System: allowCust}, "cust.cfg: network: vmware: cust.cfg has no [NIC-CONFIG] NICS"},
		{"raw meta-data missing", custOnly(map[string]string{"cust.cfg": "[CLOUDINIT]\nMETADATA = md.yaml\n"}),
			datasource.Env{DMI: vmDMI, Root: plugin, System: allowCust}, "cust.cfg: meta-data: reading "},
		{"raw meta-data outside", custOnly(map[string]string{"cust.cfg": "[CLOUDINIT]\nMETADATA = ../../etc/shadow\n"}),
			datasource.Env{DMI: vmDMI, Root: plugin, System: allowCust}, "../../etc/shadow: not a file inside"},
		{"raw user-data missing", custOnly(map[string]string{"cust.cfg": "[CLOUDINIT]\nMETADATA = md\nUSERDATA = ud\n", "md": "instance-id: i\n"}),
			datasource.Env{DMI: vmDMI, Root: plugin, System: allowCust}, "cust.cfg: user-data: reading "},
		{"raw meta-data broken", custOnly(map[string]string{"cust.cfg": "[CLOUDINIT]\nMETADATA = md\n", "md": "instance-id: [\n"}),
			datasource.Env{DMI: vmDMI, Root: plugin, System: allowCust}, "/md: neither JSON nor a YAML mapping"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.env.Budget = quick
			_, err := tc.s.Get(context.Background(), tc.env)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want containing %q", err, tc.want)
			}
			if errors.Is(err, datasource.ErrNotFound) {
				t.Errorf("broken data is not ErrNotFound: %v", err)
			}
		})
	}
}

// TestToolFallback: vmware-rpctool failing hands over to vmtoolsd, and
// both failing is an error naming both (the platform is there).
func TestToolFallback(t *testing.T) {
	gi := copyDir(t, "testdata/guestinfo-json/guestinfo")
	broken := writeScript(t, t.TempDir(), RPCToolName, "#!/bin/sh\necho 'RPCI: channel open failed' >&2\nexit 1\n")
	s := &Source{RPCTool: broken, VMToolsd: fakeTool(t, VMToolsdName, gi), NoBackdoor: true, Environ: map[string]string{}}
	d, err := s.Get(context.Background(), datasource.Env{DMI: vmDMI, Budget: quick})
	if err != nil {
		t.Fatal(err)
	}
	if d.InstanceID() != "iid-vmware-json" {
		t.Errorf("instance-id %q", d.InstanceID())
	}
	if c := calls(t, gi); len(c) == 0 || !strings.HasPrefix(c[0], "--cmd info-get guestinfo.metadata") {
		t.Errorf("vmtoolsd calls %q", c)
	}

	s.VMToolsd = writeScript(t, t.TempDir(), VMToolsdName, "#!/bin/sh\necho boom >&2\nexit 2\n")
	_, err = s.Get(context.Background(), datasource.Env{DMI: vmDMI, Budget: quick})
	if err == nil || errors.Is(err, datasource.ErrNotFound) {
		t.Fatalf("err = %v, want a failure", err)
	}
	for _, want := range []string{broken + ": exit status 1: RPCI: channel open failed", s.VMToolsd + ": exit status 2: boom"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v, want containing %q", err, want)
		}
	}
}

// TestToolOnPath: with no configured paths the tools are found on PATH.
func TestToolOnPath(t *testing.T) {
	gi := copyDir(t, "testdata/guestinfo-json/guestinfo")
	bin := filepath.Dir(fakeTool(t, RPCToolName, gi))
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	d, err := (&Source{VMToolsd: missing, NoBackdoor: true, Environ: map[string]string{}}).Get(context.Background(), datasource.Env{DMI: vmDMI, Budget: quick})
	if err != nil {
		t.Fatal(err)
	}
	if d.Subplatform != "guestinfo (guestinfo.metadata)" {
		t.Errorf("subplatform %q", d.Subplatform)
	}
}

// TestHangingTool: a tool that never answers costs CommandTimeout, then
// the next transport answers.
func TestHangingTool(t *testing.T) {
	hang := writeScript(t, t.TempDir(), RPCToolName, "#!/bin/sh\nexec sleep 60\n")
	fake := &fakeVMX{Guestinfo: guestinfoDir(t, "testdata/backdoor/guestinfo")}
	s := &Source{RPCTool: hang, VMToolsd: missing, CommandTimeout: 200 * time.Millisecond, Environ: map[string]string{}, port: fake.opener(nil)}
	d, err := s.Get(context.Background(), datasource.Env{DMI: vmDMI, Budget: quick})
	if err != nil {
		t.Fatal(err)
	}
	if d.InstanceID() != "iid-backdoor" {
		t.Errorf("instance-id %q", d.InstanceID())
	}
	s.NoBackdoor = true
	_, err = s.Get(context.Background(), datasource.Env{DMI: vmDMI, Budget: quick})
	if err == nil || !strings.Contains(err.Error(), "context deadline exceeded") || !strings.Contains(err.Error(), hang) {
		t.Fatalf("err = %v, want the tool's timeout", err)
	}
}

// TestBudget: the budget bounds a hanging tool even with a long command
// timeout.
func TestBudget(t *testing.T) {
	hang := writeScript(t, t.TempDir(), RPCToolName, "#!/bin/sh\nexec sleep 60\n")
	s := &Source{RPCTool: hang, VMToolsd: missing, NoBackdoor: true, CommandTimeout: time.Hour, Environ: map[string]string{}}
	_, err := s.Get(context.Background(), datasource.Env{DMI: vmDMI, Budget: 300 * time.Millisecond})
	if err == nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the budget's deadline", err)
	}
}

func TestRedact(t *testing.T) {
	md := "instance-id: r\nredact:\n  - userdata\n  - bad key\n"
	t.Run("rpctool", func(t *testing.T) {
		gi := imcDir(t, map[string]string{"metadata": md, "userdata": "secret", "userdata.encoding": "none"})
		s := &Source{RPCTool: fakeTool(t, RPCToolName, gi), VMToolsd: missing, NoBackdoor: true, Environ: map[string]string{}}
		d, err := s.Get(context.Background(), datasource.Env{DMI: vmDMI, Budget: quick})
		if err != nil {
			t.Fatal(err)
		}
		if string(d.UserData) != "secret" {
			t.Errorf("user-data %q: the data read is kept", d.UserData)
		}
		got := guestinfoDir(t, gi)
		if got["guestinfo.userdata"] != "---" || got["guestinfo.userdata.encoding"] != " " {
			t.Errorf("after redaction: %q", got)
		}
		if c := calls(t, gi); !slices.Contains(c, "info-set guestinfo.userdata ---") || slices.ContainsFunc(c, func(s string) bool { return strings.Contains(s, "bad") }) {
			t.Errorf("calls %q", c)
		}
		// Read again: the redacted user-data is gone, meta-data remains.
		d, err = s.Get(context.Background(), datasource.Env{DMI: vmDMI, Budget: quick})
		if err != nil {
			t.Fatal(err)
		}
		if d.UserData != nil {
			t.Errorf("user-data %q after redaction", d.UserData)
		}
	})
	t.Run("cleanup-guestinfo through the backdoor", func(t *testing.T) {
		fake := &fakeVMX{Guestinfo: map[string]string{"guestinfo.metadata": "instance-id: c\ncleanup-guestinfo: vendordata\n", "guestinfo.vendordata": "v"}}
		s := &Source{RPCTool: missing, VMToolsd: missing, Environ: map[string]string{}, port: fake.opener(nil)}
		if _, err := s.Get(context.Background(), datasource.Env{DMI: vmDMI, Budget: quick}); err != nil {
			t.Fatal(err)
		}
		if fake.Guestinfo["guestinfo.vendordata"] != "---" || fake.Guestinfo["guestinfo.vendordata.encoding"] != " " {
			t.Errorf("after cleanup: %q", fake.Guestinfo)
		}
		if fake.Open != 0 {
			t.Errorf("%d channels left open", fake.Open)
		}
	})
	t.Run("read-only", func(t *testing.T) {
		fake := &fakeVMX{Guestinfo: map[string]string{"guestinfo.metadata": md, "guestinfo.userdata": "secret"}}
		s := &Source{RPCTool: missing, VMToolsd: missing, Environ: map[string]string{}, port: fake.opener(nil), ReadOnly: true}
		if _, err := s.Get(context.Background(), datasource.Env{DMI: vmDMI, Budget: quick}); err != nil {
			t.Fatal(err)
		}
		if fake.Guestinfo["guestinfo.userdata"] != "secret" {
			t.Errorf("read-only Source wrote guestinfo: %q", fake.Guestinfo)
		}
	})
	t.Run("not on broken data", func(t *testing.T) {
		fake := &fakeVMX{Guestinfo: map[string]string{"guestinfo.metadata": md, "guestinfo.userdata": "YQ", "guestinfo.userdata.encoding": "base64"}}
		s := &Source{RPCTool: missing, VMToolsd: missing, Environ: map[string]string{}, port: fake.opener(nil)}
		if _, err := s.Get(context.Background(), datasource.Env{DMI: vmDMI, Budget: quick}); err == nil {
			t.Fatal("no error for broken user-data")
		}
		if fake.Guestinfo["guestinfo.userdata"] != "YQ" {
			t.Errorf("broken data was redacted: %q", fake.Guestinfo)
		}
	})
	t.Run("not for envvar", func(t *testing.T) {
		s := &Source{RPCTool: missing, VMToolsd: missing, NoBackdoor: true, Environ: map[string]string{
			"VMX_GUESTINFO": "1", "VMX_GUESTINFO_METADATA": md, "VMX_GUESTINFO_USERDATA": "secret"}}
		d, err := s.Get(context.Background(), datasource.Env{Budget: quick})
		if err != nil {
			t.Fatal(err)
		}
		if s.Environ["VMX_GUESTINFO_USERDATA"] != "secret" || string(d.UserData) != "secret" {
			t.Errorf("envvar data changed")
		}
	})
}

// TestIMCWait: cust.cfg arriving while Get waits is read; the budget ends
// the wait.
func TestIMCWait(t *testing.T) {
	plugin := fstest.MapFS{"usr/lib/vmware-tools/plugins/vmsvc/libdeployPkgPlugin.so": {}}
	dir := custLater(t)
	s := &Source{RPCTool: missing, VMToolsd: missing, NoBackdoor: true, Environ: map[string]string{}, IMCDir: dir}
	env := datasource.Env{DMI: vmDMI, Root: plugin, Budget: 20 * time.Second,
		Config: map[string]any{"VMware": map[string]any{"vmware_cust_file_max_wait": "3"}}}
	d, err := s.Get(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	if d.InstanceID() != "raw-iid" || d.Subplatform != "imc (vmware-tools)" {
		t.Errorf("got %s %s", d.InstanceID(), d.Subplatform)
	}

	s.IMCDir = t.TempDir()
	env.Budget = 200 * time.Millisecond
	if _, err := s.Get(context.Background(), env); !errors.Is(err, datasource.ErrNotFound) {
		t.Errorf("err = %v, want ErrNotFound when the budget ends the wait", err)
	}
}

func TestFallbackAllowed(t *testing.T) {
	s := &Source{}
	for _, tc := range []struct {
		d    *datasource.Data
		want bool
	}{
		{nil, false},
		{&datasource.Data{Name: "VMware", Subplatform: Subplatform(MethodIMC)}, true},
		{&datasource.Data{Name: "VMware", Subplatform: Subplatform(MethodGuestinfo)}, false},
		{&datasource.Data{Name: "OVF", Subplatform: "imc (x)"}, false},
	} {
		if got := s.FallbackAllowed(tc.d); got != tc.want {
			t.Errorf("FallbackAllowed(%+v) = %v", tc.d, got)
		}
	}
}

// TestConform: the cases every serial/backdoor transport shares, over the
// backdoor answering guestinfo.metadata.
func TestConform(t *testing.T) {
	dstest.ConformTransport(t, dstest.Transport{
		Absent: func(t *testing.T) (datasource.Source, datasource.Env) {
			return &Source{RPCTool: missing, VMToolsd: missing, NoBackdoor: true, Environ: map[string]string{}},
				datasource.Env{DMI: vmDMI, Budget: quick}
		},
		Answering: func(t *testing.T, reply []byte) (datasource.Source, datasource.Env, string) {
			vmx := &fakeVMX{Guestinfo: map[string]string{"guestinfo.metadata": string(reply)}}
			return &Source{RPCTool: missing, VMToolsd: missing, Environ: map[string]string{}, port: vmx.opener(nil)},
				datasource.Env{DMI: vmDMI, Budget: quick}, "guestinfo.metadata"
		},
		WhyEmptyNotFound: "an empty guestinfo key is an unset one (cloud-init's guestinfo() treats '' and '---' as no value)",
	})
}

func TestDoc(t *testing.T) {
	d := (&Source{}).Doc()
	if d.Network || d.Reads == "" || d.NetworkConfig == "" || d.Tests == "" {
		t.Errorf("Doc() = %+v", d)
	}
}

func TestProcessEnviron(t *testing.T) {
	t.Setenv("VMX_GUESTINFO", "1")
	t.Setenv("VMX_GUESTINFO_METADATA", `{"instance-id": "from-process"}`)
	t.Setenv("OTHER", "x")
	got := (&Source{}).environ()
	want := map[string]string{"VMX_GUESTINFO": "1", "VMX_GUESTINFO_METADATA": `{"instance-id": "from-process"}`}
	for k := range got {
		if _, ok := want[k]; !ok && strings.HasPrefix(k, "VMX_GUESTINFO") {
			want[k] = got[k] // set outside the test
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("environ (-want +got):\n%s", diff)
	}
}

// TestIMCPluginSearch: the plugin is found anywhere below the search
// directories, and only there.
func TestIMCPluginSearch(t *testing.T) {
	for p, want := range map[string]bool{
		"usr/lib/i386-linux-gnu/open-vm-tools/plugins/vmsvc/libdeployPkgPlugin.so": true,
		"usr/lib64/open-vm-tools/libdeployPkgPlugin.so":                            true,
		"usr/local/lib/open-vm-tools/plugins/vmsvc/libdeployPkgPlugin.so":          false,
		"usr/lib/open-vm-tools/plugins/vmsvc/libdeployPkgPlugin.so.1":              false,
	} {
		got := findPlugin(fstest.MapFS{p: {}}) != ""
		if got != want {
			t.Errorf("%s: found %v", p, got)
		}
	}
	if findPlugin(nil) != "" {
		t.Error("found a plugin without a root")
	}
}

// custLater returns an IMC directory in which the metadata and cust.cfg
// appear 300 ms from now, as the VMware tools drop a late customization.
func custLater(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	src, err := os.ReadFile("testdata/imc-raw/imc/test-meta")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(300 * time.Millisecond)
		os.WriteFile(filepath.Join(dir, "md"), src, 0o644)
		os.WriteFile(filepath.Join(dir, "cust.cfg"), []byte("[CLOUDINIT]\nMETADATA = md\n"), 0o644)
	}()
	return dir
}
