package vmware

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cloudroot/cloudroot/pkg/netconfig"
)

func readSpec(t *testing.T, p string) *CustCfg {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	c, err := ParseCustCfg(b)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestParseCustCfg(t *testing.T) {
	c := readSpec(t, "testdata/imc-linuxprep/imc/cust.cfg")
	c.Raw = nil
	want := &CustCfg{HostName: "myhost1", DomainName: "eng.vmware.com", TimeZone: "Africa/Abidjan",
		InstanceID: "guest-os-customization-uuid", MarkerID: "12345345", HasPassword: true}
	if diff := cmp.Diff(want, c); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	raw := readSpec(t, "testdata/imc-raw/imc/cust.cfg")
	if !raw.RawData() || raw.MetaDataName != "test-meta" || raw.UserDataName != "test-user" {
		t.Errorf("raw spec %+v", raw)
	}
	yes, err := ParseCustCfg([]byte("[PASSWORD]\nRESET = YES\n[MISC]\nPOST-GC-STATUS = Yes\nDEFAULT-RUN-POST-CUST-SCRIPT = yes\n[CUSTOM-SCRIPT]\nSCRIPT-NAME = customize.sh\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !yes.ResetPassword || !yes.PostGCStatus || !yes.DefaultRunPostScript || yes.CustomScript != "customize.sh" || yes.HasPassword {
		t.Errorf("yes spec %+v", yes)
	}
	for in, want := range map[string]string{
		"[PASSWORD]\nRESET = true\n":                       "[PASSWORD] RESET must be yes or no",
		"[MISC]\nDEFAULT-RUN-POST-CUST-SCRIPT = 1\n":       "[MISC] DEFAULT-RUN-POST-CUST-SCRIPT must be yes or no",
		"NETWORK\nHOSTNAME = h\n":                          "no section headers",
		"[NETWORK]\nHOSTNAME = a\n[NETWORK]\n":             "already exists",
		"[NETWORK]\nHOSTNAME = 100%\n":                     "must be followed",
		"[MISC]\nPOST-GC-STATUS = \"no\"\n":                "[MISC] POST-GC-STATUS must be yes or no",
		"[CLOUDINIT]\nMETADATA = m\nMETADATA = other\n":    "already exists",
		"[NIC-CONFIG]\nNICS = NIC1\n[NIC1]\njust a line\n": "parsing errors",
	} {
		if _, err := ParseCustCfg([]byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseCustCfg(%q) = %v, want %q", in, err, want)
		}
	}
}

func TestCustMetaData(t *testing.T) {
	for _, tc := range []struct {
		in      string
		md, cfg map[string]any
	}{
		{"[NETWORK]\nHOSTNAME = h\nDOMAINNAME = example.org\n[MISC]\nINSTANCE-ID = iid\n",
			map[string]any{"local-hostname": "h.example.org", "instance-id": "iid"}, map[string]any{}},
		{"[NETWORK]\nHOSTNAME = h\n[DATETIME]\nTIMEZONE = UTC\n", map[string]any{"local-hostname": "h"}, map[string]any{"timezone": "UTC"}},
		{"[NETWORK]\nDOMAINNAME = example.org\n[CLOUDINIT]\nINSTANCE-ID = not-misc\n", map[string]any{}, map[string]any{}},
	} {
		c, err := ParseCustCfg([]byte(tc.in))
		if err != nil {
			t.Fatal(err)
		}
		md, cfg := c.MetaData()
		if diff := cmp.Diff(tc.md, md); diff != "" {
			t.Errorf("%q meta-data (-want +got):\n%s", tc.in, diff)
		}
		if diff := cmp.Diff(tc.cfg, cfg); diff != "" {
			t.Errorf("%q config (-want +got):\n%s", tc.in, diff)
		}
	}
}

// TestCustNetwork: the handed-on network part holds the NIC and DNS
// sections and nothing else (no password), and converts with the machine's
// device names as cloud-init's NicConfigurator does.
func TestCustNetwork(t *testing.T) {
	c := readSpec(t, "testdata/imc-linuxprep/imc/cust.cfg")
	nw := c.Network()[NetworkKey].(map[string]any)
	for k := range nw {
		sect, _, _ := strings.Cut(k, "|")
		switch sect {
		case "NIC-CONFIG", "NIC1", "NIC2", "DNS":
		default:
			t.Errorf("%s handed on", k)
		}
	}
	if _, ok := nw["NIC1|IPADDR"]; !ok {
		t.Errorf("NIC1 missing: %v", nw)
	}
	links := netconfig.MACs{"00:50:56:a6:8c:08": "ens192", "00:50:56:a6:ef:7d": "ens224"}
	cfg, err := netconfig.ConvertVMwareMap(nw, links)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, i := range cfg.Interfaces {
		names = append(names, i.Name)
	}
	if diff := cmp.Diff([]string{"ens192", "ens224"}, names); diff != "" {
		t.Errorf("interfaces (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"10.20.145.1", "10.20.145.2"}, cfg.DNS.Nameservers); diff != "" {
		t.Errorf("nameservers (-want +got):\n%s", diff)
	}
	if _, err := netconfig.ConvertVMwareMap(nw, netconfig.MACs{"00:50:56:a6:8c:08": "ens192"}); err == nil || !strings.Contains(err.Error(), "00:50:56:a6:ef:7d") {
		t.Errorf("a NIC not on the machine: err = %v", err)
	}
	if _, err := netconfig.ConvertVMwareMap(map[string]any{"NIC-CONFIG|NICS": 5}, nil); err == nil {
		t.Error("a non-string value converted")
	}
	if err := c.CheckNetwork(); err != nil {
		t.Errorf("CheckNetwork: %v", err)
	}
}

func TestCustMaxWait(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want int
	}{
		{nil, 15}, {0, 0}, {30, 30}, {-1, 15}, {"7", 7}, {" 8 ", 8}, {"x", 15}, {2.9, 2}, {true, 1}, {[]any{1}, 15},
	} {
		cfg := map[string]any{}
		if tc.v != nil {
			cfg["vmware_cust_file_max_wait"] = tc.v
		}
		if got := custMaxWait(cfg); got != tc.want {
			t.Errorf("custMaxWait(%v) = %d, want %d", tc.v, got, tc.want)
		}
	}
}

// TestWaitForCustCfg: the polling schedule of wait_for_cust_cfg_file, in
// fake time.
func TestWaitForCustCfg(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		// Never there: 15 s in 5 s naps, no check at the end.
		start := time.Now()
		p, err := waitForCustCfg(context.Background(), dir, 15)
		if p != "" || err != nil || time.Since(start) != 15*time.Second {
			t.Errorf("absent: %q, %v after %s", p, err, time.Since(start))
		}
		// Max wait 0: not even looked for.
		os.WriteFile(filepath.Join(dir, CustCfgName), nil, 0o644)
		if p, _ := waitForCustCfg(context.Background(), dir, 0); p != "" {
			t.Errorf("max wait 0 found %q", p)
		}
		// There at once.
		start = time.Now()
		if p, err := waitForCustCfg(context.Background(), dir, 15); p != filepath.Join(dir, CustCfgName) || err != nil || time.Since(start) != 0 {
			t.Errorf("present: %q, %v after %s", p, err, time.Since(start))
		}
		// A directory named cust.cfg is not a file.
		dir2 := t.TempDir()
		os.Mkdir(filepath.Join(dir2, CustCfgName), 0o755)
		start = time.Now()
		if p, _ := waitForCustCfg(context.Background(), dir2, 3); p != "" || time.Since(start) != 3*time.Second {
			t.Errorf("directory: %q after %s (1 s naps for short waits)", p, time.Since(start))
		}
		// The context ends the wait.
		ctx, cancel := context.WithTimeout(context.Background(), 7*time.Second)
		defer cancel()
		start = time.Now()
		if _, err := waitForCustCfg(ctx, t.TempDir(), 15); !errors.Is(err, context.DeadlineExceeded) || time.Since(start) != 7*time.Second {
			t.Errorf("deadline: %v after %s", err, time.Since(start))
		}
	})
}

func TestReadIMCFile(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "md"), []byte("x"), 0o644)
	os.Symlink("/etc/passwd", filepath.Join(dir, "escape"))
	if b, err := readIMCFile(dir, "md"); err != nil || string(b) != "x" {
		t.Errorf("md: %q, %v", b, err)
	}
	for _, name := range []string{"../md", "/etc/passwd", "escape", "nothing", ""} {
		if _, err := readIMCFile(dir, name); err == nil {
			t.Errorf("%q read", name)
		}
	}
}

func TestMarkerExists(t *testing.T) {
	root := fstest.MapFS{"var/lib/cloud/data/.markerfile-42.txt": {}}
	if !markerExists(root, "42") || markerExists(root, "43") || markerExists(root, "") || markerExists(nil, "42") {
		t.Error("markerExists")
	}
}

// FuzzParseCustCfg: any cust.cfg parses or fails without panicking; what
// parses yields meta-data, a network part without the password, and
// network checks that do not panic.
func FuzzParseCustCfg(f *testing.F) {
	for _, c := range []string{"imc-linuxprep", "imc-raw"} {
		b, err := os.ReadFile(filepath.Join("testdata", c, "imc", "cust.cfg"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("[NIC-CONFIG]\nNICS = NIC1\n[NIC1]\nMACADDR = 00:50:56:00:00:01\nBOOTPROTO = static\nIPADDR = 10.0.0.2\nNETMASK = 255.255.255.0\nGATEWAY = 10.0.0.1\n[DNS]\nNAMESERVER|1 = 10.0.0.53\n"))
	f.Add([]byte("[DEFAULT]\nx = %(y)s\ny = 1\n[PASSWORD]\n-PASS = c2VjcmV0\n[NIC-CONFIG]\nNICS = PASSWORD\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseCustCfg(b)
		if err != nil {
			return
		}
		md, _ := c.MetaData()
		if _, err := Build(Input{Method: MethodIMC, MetaDataKey: "cust.cfg", MetaData: md, ProductUUID: "u", NetworkConfig: c.Network()}); err != nil {
			t.Fatalf("Build: %v", err)
		}
		for k := range c.Network()[NetworkKey].(map[string]any) {
			if strings.HasPrefix(k, "PASSWORD|") {
				t.Fatalf("%s handed on", k)
			}
		}
		if c.CheckNetwork() == nil {
			if _, err := netconfig.ConvertVMwareMap(c.Network()[NetworkKey].(map[string]any), nil); err != nil {
				t.Fatalf("the checked spec does not convert from its network part: %v", err)
			}
		}
	})
}
