package netconfig

import (
	"encoding/json"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cloudroot/cloudroot/pkg/netup"
)

// readKlibcCase reads a testdata/klibc/<case>/ directory: its net-*.conf
// and net6-*.conf files in cloud-init's order, and macs.txt as name → MAC.
func readKlibcCase(t testing.TB, dir string) ([]KlibcFile, map[string]string) {
	t.Helper()
	var files []KlibcFile
	for _, g := range []string{"net-*.conf", "net6-*.conf"} {
		ps, _ := filepath.Glob(filepath.Join(dir, g))
		sort.Strings(ps)
		for _, p := range ps {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, KlibcFile{Path: filepath.Base(p), Data: b})
		}
	}
	names := map[string]string{}
	for mac, name := range readMACs(t, filepath.Join(dir, "macs.txt")) {
		names[name] = mac
	}
	return files, names
}

// TestKlibcGolden converts every testdata/klibc/<case>/ and compares the v1
// document (want.v1.yaml), its netplan rendering (want.v2.yaml), the
// warnings and the error.
func TestKlibcGolden(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join("testdata", "klibc", "*"))
	if len(dirs) == 0 {
		t.Fatal("no klibc cases")
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			files, macs := readKlibcCase(t, dir)
			got := map[string]string{}
			doc, _, err := KlibcDocument(files, macs)
			if err != nil {
				got["ERROR"] = err.Error() + "\n"
			} else {
				got["want.v1.yaml"] = string(doc)
				cfg, err := ParseKlibc(files, macs)
				if err != nil {
					t.Fatalf("ParseKlibc: %v", err)
				}
				out, err := RenderNetplan(cfg)
				if err != nil {
					t.Fatal(err)
				}
				got["want.v2.yaml"] = string(out.Files[NetplanPath].Data)
				if len(cfg.Warnings) > 0 {
					got["WARNINGS"] = strings.Join(cfg.Warnings, "\n") + "\n"
				}
				renderAll(t, cfg)
			}
			compareFiles(t, dir, got, []string{"want.v1.yaml", "want.v2.yaml", "WARNINGS", "ERROR"})
		})
	}
}

// TestKlibcRoundTrip reads back what pkg/netup writes for every lease of its
// golden cases, plus leases built here.
func TestKlibcRoundTrip(t *testing.T) {
	var leases []*netup.Lease
	paths, _ := filepath.Glob(filepath.Join("..", "netup", "testdata", "klibc", "*", "lease.json"))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var l netup.Lease
		if err := json.Unmarshal(b, &l); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		leases = append(leases, &l)
	}
	leases = append(leases,
		&netup.Lease{Iface: "ens4", Proto: netup.ProtoStatic, Addr: netip.MustParsePrefix("172.16.5.9/16"),
			Router: netip.MustParseAddr("172.16.0.1"), DNS: []netip.Addr{netip.MustParseAddr("1.1.1.1"), netip.MustParseAddr("9.9.9.9")},
			Search: []string{"x.example"}, Hostname: "a'b!c"},
		&netup.Lease{Iface: "ens5", Proto: netup.ProtoStatic, Addr: netip.MustParsePrefix("10.7.0.2/24"),
			Routes: []netup.Route{{Dst: netip.MustParsePrefix("0.0.0.0/0"), Gateway: netip.MustParseAddr("10.7.0.254")}}},
	)
	if len(leases) < 4 {
		t.Fatalf("only %d leases", len(leases))
	}
	for _, l := range leases {
		t.Run(l.Iface+"-"+l.Proto, func(t *testing.T) {
			data := netup.FormatKlibc(l)
			vars, warnings, err := ParseKlibcVars(data)
			if err != nil || len(warnings) > 0 {
				t.Fatalf("ParseKlibcVars: %v %v\n%s", err, warnings, data)
			}
			for k, want := range map[string]string{"DEVICE": l.Iface, "HOSTNAME": l.Hostname, "DNSDOMAIN": l.Domain,
				"filename": l.BootFile, "ROOTPATH": l.RootPath, "DOMAINSEARCH": strings.Join(l.Search, " ")} {
				if vars[k] != want {
					t.Errorf("%s = %q, want %q", k, vars[k], want)
				}
			}
			cfg, err := ParseKlibc([]KlibcFile{{Path: "net-" + l.Iface + ".conf", Data: data}}, map[string]string{l.Iface: "52:54:00:aa:bb:cc"})
			if err != nil {
				t.Fatalf("ParseKlibc: %v\n%s", err, data)
			}
			if len(cfg.Interfaces) != 1 || len(cfg.Interfaces[0].Subnets) != 1 {
				t.Fatalf("got %+v", cfg.Interfaces)
			}
			iface := cfg.Interfaces[0]
			if iface.Name != l.Iface || iface.MAC != "52:54:00:aa:bb:cc" {
				t.Errorf("interface %s %s", iface.Name, iface.MAC)
			}
			s := iface.Subnets[0]
			var gw netip.Addr
			if l.Router.IsValid() {
				gw = l.Router
			}
			switch l.Proto {
			case netup.ProtoDHCP:
				if s.Type != SubnetDHCP {
					t.Errorf("type %s, want dhcp", s.Type)
				}
			default:
				if s.Type != SubnetStatic || s.Address != l.Addr {
					t.Errorf("subnet %s %s, want static %s", s.Type, s.Address, l.Addr)
				}
				for _, r := range l.Routes {
					if r.Dst.Bits() == 0 {
						gw = r.Gateway
					}
				}
				if s.Gateway != gw {
					t.Errorf("gateway %s, want %s", s.Gateway, gw)
				}
			}
			var wantDNS []string
			for _, a := range l.DNS[:min(2, len(l.DNS))] {
				wantDNS = append(wantDNS, a.String())
			}
			if diff := cmp.Diff(wantDNS, s.DNS.Nameservers); diff != "" {
				t.Errorf("nameservers (-want +got):\n%s", diff)
			}
			if len(wantDNS) > 0 {
				if diff := cmp.Diff(l.Search, s.DNS.Search); diff != "" {
					t.Errorf("search (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestKlibcApplicable(t *testing.T) {
	for _, tc := range []struct {
		cmdline string
		iscsi   bool
		want    bool
	}{
		{"root=/dev/sda1 ip=dhcp", false, true},
		{"root=/dev/sda1 ip6=dhcp", false, true},
		{"root=/dev/sda1 quiet 'ip=::::h:eth0:dhcp'", false, true},
		{"root=/dev/sda1 noip=1", false, false},
		{"root=/dev/sda1", true, true},
		{"", false, false},
	} {
		if got := KlibcApplicable(tc.cmdline, tc.iscsi); got != tc.want {
			t.Errorf("KlibcApplicable(%q, %v) = %v", tc.cmdline, tc.iscsi, got)
		}
	}
}

func TestShellWords(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		err  bool
	}{
		{`A='x y' B="q\"r\\s\t" C=a\ b # c`, []string{"A=x y", `B=q"r\s\t`, "C=a b"}, false},
		{"A=1#c\nB=2", []string{"A=1", "B=2"}, false},
		{`A='x'\''y'`, []string{"A=x'y"}, false},
		{`A='x`, nil, true},
		{`A="x`, nil, true},
		{`A=\`, nil, true},
	} {
		got, err := shellWords(tc.in)
		if (err != nil) != tc.err {
			t.Errorf("shellWords(%q) error %v", tc.in, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("shellWords(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

func FuzzParseKlibc(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join("testdata", "klibc", "*", "net*.conf"))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range hostileKlibc {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		files := []KlibcFile{{Path: "net-a.conf", Data: data}, {Path: "net6-a.conf", Data: data}}
		doc, _, err := KlibcDocument(files, map[string]string{"eth0": "52:54:00:12:34:56"})
		if err != nil {
			return
		}
		if _, err := Parse(doc, nil); err != nil {
			t.Fatalf("klibc document does not parse: %v\n%s", err, doc)
		}
		cfg, err := ParseKlibc(files, nil)
		if err != nil {
			t.Fatalf("ParseKlibc fails where KlibcDocument did not: %v", err)
		}
		renderAll(t, cfg)
	})
}
