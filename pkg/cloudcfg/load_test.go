package cloudcfg

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cloudroot/cloudroot/pkg/target"
)

func TestParseCmdlineCC(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cmdline string
		want    map[string]any
		wantErr string
	}{
		{"none", "root=/dev/vda1 ro quiet", nil, ""},
		{"one segment", `root=/dev/sda cc: ssh_import_id: [smoser, bob]\nruncmd: [ [ ls, -l ], echo hi ] end_cc quiet`,
			map[string]any{"ssh_import_id": []any{"smoser", "bob"}, "runcmd": []any{[]any{"ls", "-l"}, "echo hi"}}, ""},
		{"two segments joined", `cc:ssh_import_id: [smoser] end_cc cc:runcmd: [ [ ls, -l ] ] end_cc`,
			map[string]any{"ssh_import_id": []any{"smoser"}, "runcmd": []any{[]any{"ls", "-l"}}}, ""},
		{"url-encoded", `ro cc:ssh_import_id:%20%5Bsmoser%5D end_cc`, map[string]any{"ssh_import_id": []any{"smoser"}}, ""},
		{"no end_cc runs to end", `ro cc: hostname: box`, map[string]any{"hostname": "box"}, ""},
		{"needs a space before cc:", `abcc: hostname: box end_cc`, nil, ""},
		{"bad escape kept", `cc: final_message: 100%zz done end_cc`, map[string]any{"final_message": "100%zz done"}, ""},
		{"plus stays plus", `cc: a: 1+1 end_cc`, map[string]any{"a": "1+1"}, ""},
		{"encoded newline", `cc: a: 1%0Ab: 2 end_cc`, map[string]any{"a": 1, "b": 2}, ""},
		{"empty segment", `cc: end_cc`, nil, ""},
		{"not a mapping", `cc: [1, 2] end_cc`, nil, "kernel command line cc: expected a mapping"},
		{"bad yaml", `cc: a: [ end_cc`, nil, "kernel command line cc:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseCmdlineCC(tc.cmdline)
			if tc.wantErr == "" && err != nil {
				t.Fatalf("error: %v", err)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("error %v, want %q", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestCmdlineCCText(t *testing.T) {
	got := CmdlineCCText(`cc:a: 1 end_cc x cc:   b: 2\nc: 3 end_cc`)
	if want := "a: 1 \nb: 2\nc: 3 "; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func FuzzCmdlineCC(f *testing.F) {
	for _, s := range []string{"", "cc: a: 1 end_cc", `cc:ssh_import_id: %5Bsmoser%5D end_cc cc:runcmd: [ [ ls, -l ] ] end_cc`,
		"cc:", "cc: end_cc end_cc cc:", "%", "cc: %e2%82 end_cc", `cc: a: 1\nb: [x] end_c`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		text := CmdlineCCText(s)
		if !strings.Contains(" "+s, " cc:") && text != "" {
			t.Fatalf("text %q from a command line without cc:", text)
		}
		m, err := ParseCmdlineCC(s)
		if err != nil && m != nil {
			t.Fatal("map and error")
		}
	})
}

func writeTree(t *testing.T, files map[string]string) *target.Root {
	t.Helper()
	dir := t.TempDir()
	for p, s := range files {
		hp := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(hp), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(hp, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, err := target.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestLoadPrecedence(t *testing.T) {
	root := writeTree(t, map[string]string{
		"etc/cloud/cloud.cfg":              "hostname: cloudcfg\nruncmd: [cloudcfg]\nfinal_message: from cloud.cfg\nntp: {enabled: true}\n",
		"etc/cloud/cloud.cfg.d/10_a.cfg":   "hostname: confd-a\ntimezone: UTC\n",
		"etc/cloud/cloud.cfg.d/90_b.cfg":   "hostname: confd-b\n",
		"etc/cloud/cloud.cfg.d/50_bad.cfg": "a: [\n",
		"run/cloud-init/cloud.cfg":         "datasource_list: [NoCloud, None]\nhostname: runtime\n",
	})
	m, err := Load(LoadOptions{
		Root:        root,
		Cmdline:     `ro cc: hostname: cmdline\nlocale: C.UTF-8 end_cc`,
		Datasource:  map[string]any{"hostname": "ds", "ds_key": 1},
		VendorData:  []Part{{Name: "vd", Config: map[string]any{"hostname": "vendor", "runcmd": []any{"vendor"}, "packages": []any{"v"}}}},
		VendorData2: []Part{{Name: "vd2", Config: map[string]any{"packages": []any{"v2"}, "timezone": "vendor2"}}},
		UserData: []Part{
			{Name: "part-001", Config: map[string]any{"hostname": "user", "runcmd": []any{"user"}}},
			{Name: "part-002", Config: map[string]any{"runcmd": []any{"user2"}, "merge_how": "dict(no_replace,recurse_list)+list(append)"}},
		},
	})
	if err == nil || !strings.Contains(err.Error(), "/etc/cloud/cloud.cfg.d/50_bad.cfg") {
		t.Errorf("error %v does not name the bad file", err)
	}
	if len(m.Problems) != 1 || m.Problems[0].Source != "/etc/cloud/cloud.cfg.d/50_bad.cfg" {
		t.Errorf("problems = %v", m.Problems)
	}
	want := map[string]any{
		"hostname":          "user",
		"runcmd":            []any{"user", "user2"},
		"final_message":     "from cloud.cfg",
		"ntp":               map[string]any{"enabled": true},
		"timezone":          "vendor2",
		"packages":          []any{"v2"},
		"locale":            "C.UTF-8",
		"ds_key":            1,
		"datasource_list":   []any{"NoCloud", "None"},
		"users":             []any{"default"},
		"disable_root":      true,
		"preserve_hostname": false,
		"ssh_pwauth":        false,
		"def_log_file":      "/var/log/cloud-init.log",
		"syslog_fix_perms":  []any{"syslog:adm", "root:adm", "root:wheel", "root:root"},
		"vendor_data":       map[string]any{"enabled": true, "prefix": []any{}},
	}
	if diff := cmp.Diff(want, m.Config); diff != "" {
		t.Errorf("Config (-want +got):\n%s", diff)
	}
	if m.System["hostname"] != "cmdline" || m.System["timezone"] != "UTC" || m.System["ds_key"] != nil {
		t.Errorf("System = %v", m.System)
	}
	wantSources := []string{"builtin", "/etc/cloud/cloud.cfg", "/etc/cloud/cloud.cfg.d/10_a.cfg", "/etc/cloud/cloud.cfg.d/90_b.cfg",
		"/run/cloud-init/cloud.cfg", "kernel command line", "datasource", "vendor-data", "vendor-data2", "user-data"}
	if diff := cmp.Diff(wantSources, m.Sources); diff != "" {
		t.Errorf("Sources (-want +got):\n%s", diff)
	}
	if !m.VendorEnabled || !m.Vendor2Enabled || len(m.VendorPrefix) != 0 {
		t.Errorf("vendor: %v %v %v", m.VendorEnabled, m.Vendor2Enabled, m.VendorPrefix)
	}
}

func TestLoadVendorDisabled(t *testing.T) {
	for _, tc := range []struct {
		name       string
		user       map[string]any
		enabled    bool
		wantPrefix []string
		wantErr    string
	}{
		{"disabled", map[string]any{"vendor_data": map[string]any{"enabled": false}}, false, nil, ""},
		{"disabled string", map[string]any{"vendor_data": map[string]any{"enabled": "no"}}, false, nil, ""},
		{"enabled string", map[string]any{"vendor_data": map[string]any{"enabled": "Yes", "prefix": "/usr/bin/env"}}, true, []string{"/usr/bin/env"}, ""},
		{"prefix list", map[string]any{"vendor_data": map[string]any{"prefix": []any{"strace", "-f"}}}, true, []string{"strace", "-f"}, ""},
		// mergemanydict quirk: the built-in vendor_data mapping replaces
		// the user's string, so vendor-data stays enabled (as in cloud-init).
		{"not a mapping", map[string]any{"vendor_data": "off"}, true, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Load(LoadOptions{
				VendorData: []Part{{Config: map[string]any{"runcmd": []any{"vendor"}, "vendor_only": true}}},
				UserData:   []Part{{Config: tc.user}},
			})
			if tc.wantErr == "" && err != nil {
				t.Fatal(err)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("error %v, want %q", err, tc.wantErr)
			}
			if m.VendorEnabled != tc.enabled {
				t.Errorf("VendorEnabled = %v", m.VendorEnabled)
			}
			if _, ok := m.Config["vendor_only"]; ok != tc.enabled {
				t.Errorf("vendor config present = %v", ok)
			}
			if m.Vendor["vendor_only"] != true {
				t.Errorf("Vendor = %v", m.Vendor)
			}
			if diff := cmp.Diff(tc.wantPrefix, m.VendorPrefix); diff != "" {
				t.Errorf("prefix (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoadZero(t *testing.T) {
	m, err := Load(LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Builtin(), m.Config); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(Builtin(), m.System); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestLoadProblemsNamed(t *testing.T) {
	m, err := Load(LoadOptions{
		Cmdline:  "cc: [1] end_cc",
		UserData: []Part{{Name: "part-002", Config: map[string]any{"merge_how": "bogus"}}},
	})
	if err == nil {
		t.Fatal("no error")
	}
	var srcs []string
	for _, p := range m.Problems {
		srcs = append(srcs, p.Source)
		var pp *Problem
		if !errors.As(err, &pp) {
			t.Errorf("error is not a *Problem")
		}
	}
	if diff := cmp.Diff([]string{"kernel command line", "user-data"}, srcs); diff != "" {
		t.Errorf("(-want +got):\n%s\n%v", diff, err)
	}
}

func TestVendorEnabled(t *testing.T) {
	if on, err := vendorEnabled(map[string]any{"vendor_data": "off"}, "vendor_data"); on || err == nil {
		t.Errorf("string setting: %v %v", on, err)
	}
	if on, err := vendorEnabled(map[string]any{"vendor_data": map[string]any{}}, "vendor_data"); on || err != nil {
		t.Errorf("no enabled key: %v %v", on, err)
	}
	if on, err := vendorEnabled(map[string]any{}, "vendor_data2"); !on || err != nil {
		t.Errorf("absent: %v %v", on, err)
	}
}

func TestIsTrue(t *testing.T) {
	for v, want := range map[any]bool{true: true, false: false, "TRUE ": true, "on": true, "1": true, 1: true, "no": false, 0: false, "y": false} {
		if IsTrue(v) != want {
			t.Errorf("IsTrue(%#v) != %v", v, want)
		}
	}
	if IsTrue(nil) {
		t.Error("IsTrue(nil)")
	}
}

func TestLoadPremergedPayloads(t *testing.T) {
	acc, err := MergePart(nil, Part{Name: "part-001", Config: map[string]any{"runcmd": []any{"a"}}})
	if err != nil {
		t.Fatal(err)
	}
	acc, err = MergePart(acc, Part{Name: "part-002", Config: map[string]any{"runcmd": []any{"b"}}, MergeHow: "dict(recurse_array)+list(append)"})
	if err != nil {
		t.Fatal(err)
	}
	same, err := MergePart(acc, Part{Name: "part-003", Config: map[string]any{"runcmd": []any{"c"}, "merge_how": "nope"}})
	if err == nil || !strings.Contains(err.Error(), "part-003: ignored: merge_how") {
		t.Errorf("error = %v", err)
	}
	if diff := cmp.Diff(acc, same); diff != "" {
		t.Errorf("ignored part changed the config: %s", diff)
	}
	m, err := Load(LoadOptions{UserConfig: acc, UserData: []Part{{Config: map[string]any{"runcmd": []any{"unused"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]any{"a", "b"}, m.Config["runcmd"]); diff != "" {
		t.Errorf("runcmd (-want +got):\n%s", diff)
	}
}

type countingReader struct {
	Reader
	reads int
}

func (c *countingReader) ReadFile(p string) ([]byte, error) {
	c.reads++
	return c.Reader.ReadFile(p)
}

// TestLoadFiles: system files read once merge the same way, any number of
// times, without being read again or changed by the merges.
func TestLoadFiles(t *testing.T) {
	root := &countingReader{Reader: writeTree(t, map[string]string{
		"etc/cloud/cloud.cfg":              "hostname: cloudcfg\nruncmd: [cloudcfg]\n",
		"etc/cloud/cloud.cfg.d/10_a.cfg":   "timezone: UTC\n",
		"etc/cloud/cloud.cfg.d/50_bad.cfg": "a: [\n",
		"run/cloud-init/cloud.cfg":         "datasource_list: [NoCloud, None]\n",
	})}
	direct, derr := Load(LoadOptions{Root: root})
	files := ReadSystemFiles(root, nil)
	reads := root.reads
	user := []Part{{Name: "part-001", Config: map[string]any{"runcmd": []any{"user"}}}}
	for i := 0; i < 2; i++ {
		m, err := Load(LoadOptions{Files: files, UserData: user})
		if (err == nil) != (derr == nil) || len(m.Problems) != len(direct.Problems) {
			t.Fatalf("problems %v, want %v", m.Problems, direct.Problems)
		}
		if diff := cmp.Diff(direct.System, m.System); diff != "" {
			t.Errorf("system config (-read +files):\n%s", diff)
		}
		if diff := cmp.Diff([]any{"user"}, m.Config["runcmd"]); diff != "" {
			t.Errorf("user-data over the files: %s", diff)
		}
	}
	if root.reads != reads {
		t.Errorf("Load read %d more files with Files given", root.reads-reads)
	}
}
