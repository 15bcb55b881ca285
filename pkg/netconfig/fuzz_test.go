package netconfig

import (
	"os"
	"path/filepath"
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

// renderAll renders cfg with every renderer; a v1 config rendered to
// netplan must parse back as v2.
func renderAll(t *testing.T, cfg *Config) {
	for _, r := range Renderers {
		out, err := Render(r.Name, cfg)
		if err != nil {
			continue
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

func FuzzParseNetworkData(f *testing.F) {
	seed(f, "network_data.json", nil)
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
