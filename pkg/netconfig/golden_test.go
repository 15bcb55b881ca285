package netconfig

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cloudroot/cloudroot/pkg/internal/golden"
	"github.com/cloudroot/cloudroot/pkg/internal/testtree"
)

// Input file names a case directory may hold, with their parser.
var caseInputs = []struct {
	file  string
	parse func(data []byte, links Links) (*Config, error)
}{
	{"input.yaml", Parse},
	{"network_data.json", ParseNetworkData},
	{"interfaces.eni", func(b []byte, _ Links) (*Config, error) { return ParseENI(b) }},
}

// readMACs reads macs.txt: "name,mac" per line, as net-convert's -m.
func readMACs(t testing.TB, path string) MACs {
	t.Helper()
	m := MACs{}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return m
	}
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, mac, ok := strings.Cut(line, ",")
		if !ok {
			t.Fatalf("%s: bad line %q", path, line)
		}
		m[mac] = name
	}
	return m
}

type goldenCase struct {
	dir   string
	input string
	parse func([]byte, Links) (*Config, error)
}

func goldenCases(t testing.TB) []goldenCase {
	t.Helper()
	dirs, err := filepath.Glob("testdata/*")
	if err != nil {
		t.Fatal(err)
	}
	var out []goldenCase
	for _, d := range dirs {
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			continue
		}
		for _, in := range caseInputs {
			p := filepath.Join(d, in.file)
			if _, err := os.Stat(p); err == nil {
				out = append(out, goldenCase{dir: d, input: p, parse: in.parse})
				break
			}
		}
	}
	return out
}

// renderedTree is the golden form of one renderer's output: relative path →
// content, plus MANIFEST (mode, flags) and WARNINGS.
func renderedTree(out *Output) map[string]string {
	tree := map[string]string{}
	var manifest strings.Builder
	for _, p := range out.Paths() {
		f := out.Files[p]
		rel := strings.TrimPrefix(p, "/")
		tree[rel] = string(f.Data)
		fmt.Fprintf(&manifest, "%04o %s", f.Mode, rel)
		if f.IfMissing {
			manifest.WriteString(" if-missing")
		}
		if f.Owner != "" {
			manifest.WriteString(" owner=" + f.Owner)
		}
		manifest.WriteString("\n")
	}
	tree["MANIFEST"] = manifest.String()
	if len(out.Warnings) > 0 {
		tree["WARNINGS"] = strings.Join(out.Warnings, "\n") + "\n"
	}
	return tree
}

func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	tree := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		tree[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

// TestGolden renders every testdata case with every renderer and compares
// with want/<renderer>/. Run with -update to rewrite.
func TestGolden(t *testing.T) {
	cases := goldenCases(t)
	if len(cases) < 60 {
		t.Errorf("only %d golden cases; want at least 60", len(cases))
	}
	for _, c := range cases {
		t.Run(filepath.Base(c.dir), func(t *testing.T) {
			data, err := os.ReadFile(c.input)
			if err != nil {
				t.Fatal(err)
			}
			macs := readMACs(t, filepath.Join(c.dir, "macs.txt"))
			want := filepath.Join(c.dir, "want")
			got := map[string]map[string]string{}
			cfg, err := c.parse(data, macs)
			if err != nil {
				got["."] = map[string]string{"ERROR": err.Error() + "\n"}
			} else {
				top := map[string]string{}
				if len(cfg.Warnings) > 0 {
					top["WARNINGS"] = strings.Join(cfg.Warnings, "\n") + "\n"
				}
				got["."] = top
				for _, r := range Renderers {
					out, err := Render(r.Name, cfg)
					if err != nil {
						got[r.Name] = map[string]string{"ERROR": err.Error() + "\n"}
						continue
					}
					got[r.Name] = renderedTree(out)
				}
			}
			if golden.Update() {
				if err := os.RemoveAll(want); err != nil {
					t.Fatal(err)
				}
				for sub, tree := range got {
					testtree.Write(t, filepath.Join(want, sub), tree)
				}
				if len(got["."]) == 0 {
					// Keep the directory: an empty case still needs want/.
					if err := os.MkdirAll(want, 0o755); err != nil {
						t.Fatal(err)
					}
				}
				return
			}
			all := readTree(t, want)
			flat := map[string]string{}
			for sub, tree := range got {
				for rel, data := range tree {
					flat[filepath.ToSlash(filepath.Join(sub, rel))] = data
				}
			}
			if diff := cmp.Diff(all, flat); diff != "" {
				t.Errorf("%s (-want +got):\n%s", want, diff)
			}
		})
	}
}

// TestGoldenCoverage checks the corpus covers what the issue asks for.
func TestGoldenCoverage(t *testing.T) {
	cases := goldenCases(t)
	var inputs []string
	for _, c := range cases {
		b, err := os.ReadFile(c.input)
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, string(b))
	}
	all := strings.Join(inputs, "\n")
	for _, mode := range []string{"balance-rr", "active-backup", "balance-xor", "broadcast", "802.3ad", "balance-tlb", "balance-alb"} {
		if !strings.Contains(all, mode) {
			t.Errorf("no case with bond mode %s", mode)
		}
	}
	for _, s := range []string{"ipv6_slaac", "ipv6_dhcpv6-stateful", "ipv6_dhcpv6-stateless", "routing-policy", "wakeonlan", "set-name", "mtu", "metric", "bridge", "vlan"} {
		if !strings.Contains(all, s) {
			t.Errorf("no case mentions %s", s)
		}
	}
	kinds := map[string]int{}
	for _, c := range cases {
		kinds[filepath.Base(c.input)]++
	}
	keys := make([]string, 0, len(kinds))
	for k := range kinds {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, in := range caseInputs {
		if kinds[in.file] == 0 {
			t.Errorf("no case with %s (have %v)", in.file, keys)
		}
	}
}
