package netconfig

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// seed adds every corpus input called name (optionally filtered) to f.
func seed(f *testing.F, name string, keep func(string) bool) {
	f.Helper()
	paths, _ := filepath.Glob(filepath.Join("testdata", "*", name))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		if keep == nil || keep(string(b)) {
			f.Add(b)
		}
	}
}

var fuzzMACs = MACs{"52:54:00:12:34:56": "eth0", "fa:16:3e:9c:bf:3d": "ens3"}

// Line shapes of the rendered formats: a value that smuggled in a newline
// leaves a line of another shape (or, in sysconfig, a $ or a backquote a
// shell would expand).
var (
	shapeSysconfig = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=[^$` + "`" + `]*$`)
	shapeResolv    = regexp.MustCompile(`^(nameserver|search|domain|options|sortlist) `)
	shapeUdev      = regexp.MustCompile(`^SUBSYSTEM==`)
	shapeINI       = regexp.MustCompile(`^(\[[^\]]+\]|\s*[A-Za-z0-9_.-]+ *=.*)$`)
	shapeENI       = regexp.MustCompile(`^((auto|iface|allow-hotplug|allow-auto|source|source-directory|mapping|pre-up|up|post-up|pre-down|down|post-down) |    \S)`)
)

// checkLines reports the first line of a rendered file whose shape is not
// one its format has: the mark of a value that gained a line.
func checkLines(path string, data []byte) error {
	var shape *regexp.Regexp
	switch {
	case strings.HasPrefix(path, SysconfigScriptsDir+"route6-"):
		return nil // "<prefix> via <addr> dev <if>" lines of addresses only
	case strings.HasPrefix(path, SysconfigScriptsDir), path == SysconfigNetworkPath:
		shape = shapeSysconfig
	case path == ResolvConfPath:
		shape = shapeResolv
	case path == UdevRulesPath:
		shape = shapeUdev
	case strings.HasPrefix(path, NetworkdDir), strings.HasPrefix(path, "/etc/NetworkManager/"):
		shape = shapeINI
	case path == ENIPath, path == "/etc/network/interfaces":
		shape = shapeENI
	default:
		return nil
	}
	for n, l := range strings.Split(string(data), "\n") {
		if c := strings.TrimSpace(l); c == "" || c[0] == '#' || c[0] == ';' || shape.MatchString(l) {
			continue
		}
		return fmt.Errorf("%s line %d %q: not a line of its format", path, n+1, l)
	}
	return nil
}

// renderAll renders cfg with every renderer: none refuses a parsed config
// as unsafe, no rendered file gains a line from a value, and a v1 config
// rendered to netplan must parse back as v2.
func renderAll(t *testing.T, cfg *Config) {
	if cfg.V2 != nil {
		scrubControl(cfg.V2, "network", func(format string, args ...any) {
			t.Fatalf("v2 document kept a control character: "+format, args...)
		})
	}
	for _, r := range Renderers {
		out, err := Render(r.Name, cfg)
		if errors.Is(err, ErrUnsafeValue) {
			t.Fatalf("%s refused a parsed config: %v", r.Name, err)
		}
		if err != nil {
			continue
		}
		for _, p := range out.Paths() {
			if err := checkLines(p, out.Files[p].Data); err != nil {
				t.Fatalf("%s: %v", r.Name, err)
			}
		}
		if r.Name == RendererNetplan && cfg.Version == 1 && !cfg.Disabled {
			data := out.Files[NetplanPath].Data
			if _, err := Parse(data, nil); err != nil {
				t.Fatalf("netplan output does not parse back: %v\n%s", err, data)
			}
		}
	}
}

func fuzzYAML(f *testing.F, version string) {
	seed(f, "input.yaml", func(s string) bool { return strings.Contains(s, "version: "+version) })
	for _, tc := range hostileCases {
		if strings.HasPrefix(tc.in, "version: "+version) {
			f.Add([]byte(tc.in))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Parse(data, fuzzMACs)
		if err != nil {
			return
		}
		renderAll(t, cfg)
	})
}

func FuzzParseV1(f *testing.F) { fuzzYAML(f, "1") }

func FuzzParseV2(f *testing.F) { fuzzYAML(f, "2") }

// Hostile seeds for the other formats: a value carrying a newline, quotes
// or $(...) (see hostileCases).
var (
	hostileNetworkData = []string{
		`{"links": [{"id": "eth0", "type": "phy", "ethernet_mac_address": "fa:16:3e:9c:bf:3d\nNM_CONTROLLED=pwn"}], "networks": [{"id": "n0", "link": "eth0", "type": "ipv4_dhcp"}]}`,
		`{"links": [{"id": "eth0", "type": "phy", "ethernet_mac_address": "fa:16:3e:9c:bf:3d"}], "networks": [{"id": "n0", "link": "eth0", "type": "ipv4", "ip_address": "10.0.0.5", "netmask": "255.255.255.0"}], "services": [{"type": "dns", "address": "8.8.8.8\nsearch pwn"}, {"type": "dns", "address": "$(touch /pwn)"}]}`,
		`{"links": [{"id": "eth0\"; touch /pwn; \"", "type": "phy", "ethernet_mac_address": "fa:16:3e:9c:bf:3d"}], "networks": [{"id": "n0", "link": "eth0\"; touch /pwn; \"", "type": "ipv4_dhcp"}]}`,
	}
	hostileENI = []string{
		"auto eth0\niface eth0 inet static\n    address 192.0.2.10/24\n    hwaddress ether 52:54:00:12:34:56$(touch/pwn)\n    dns-nameservers 192.0.2.1 `pwn`\n    dns-search good.example a$(touch/pwn) b\"pwn\n",
		"auto eth0\niface eth0 inet dhcp\n    broadcast 192.0.2.255;pwn\n",
	}
	hostileKlibc = []string{
		"DEVICE='eth0'\nPROTO='dhcp'\nIPV4ADDR='10.0.2.15'\nIPV4NETMASK='255.255.255.0'\nIPV4DNS0='10.0.2.3'\nDOMAINSEARCH='good.example a$(touch/pwn) b\"pwn,c'\\''pwn'\n",
		"DEVICE='eth0$(pwn)'\nPROTO='dhcp'\nIPV4ADDR='10.0.2.15'\nIPV4DNS0='10.0.2.3\nsearch pwn'\n",
	}
)

func FuzzParseNetworkData(f *testing.F) {
	seed(f, "network_data.json", nil)
	for _, s := range hostileNetworkData {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := ParseNetworkData(data, fuzzMACs)
		if err != nil {
			return
		}
		renderAll(t, cfg)
	})
}

func FuzzParseENI(f *testing.F) {
	seed(f, "interfaces.eni", nil)
	for _, s := range hostileENI {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := ParseENI(data)
		if err != nil {
			return
		}
		renderAll(t, cfg)
	})
}

// BenchmarkParseRender parses a bond+VLAN v1 config and renders it with
// every renderer (numbers for docs/performance.md).
func BenchmarkParseRender(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("testdata", "v1-vlan-on-bond", "input.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		cfg, err := Parse(data, nil)
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range Renderers {
			if _, err := r.Render(cfg); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkParseRenderEach reports each renderer alone on a v2 config.
func BenchmarkParseRenderEach(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("testdata", "v2-vlan-on-bond", "input.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	for _, r := range Renderers {
		b.Run(r.Name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				cfg, err := Parse(data, nil)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := r.Render(cfg); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestGoldenLineShapes: the line-shape check of the fuzz targets accepts
// every golden rendering (so a fuzz failure is a gained line, not a shape
// the check forgot).
func TestGoldenLineShapes(t *testing.T) {
	wants, _ := filepath.Glob(filepath.Join("testdata", "*", "want", "*"))
	if len(wants) == 0 {
		t.Fatal("no goldens")
	}
	files := 0
	for _, dir := range wants {
		err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || d.Name() == "MANIFEST" {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			files++
			return checkLines(strings.TrimPrefix(p, dir), data)
		})
		if err != nil {
			t.Error(err)
		}
	}
	t.Logf("%d golden files checked", files)
}
