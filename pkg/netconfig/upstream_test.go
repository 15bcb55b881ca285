package netconfig

// Parity with upstream cloud-init. testdata/<case>/cloud-init-26/<renderer>/
// holds what cloud-init 26.x's `devel net-convert` wrote for the case (files,
// MANIFEST of modes, LOG, or ERROR), produced by
//
//	CLOUDINIT_SRC=/path/to/cloud-init scripts/goldens/netconfig.sh
//
// (testdata/cloud-init-26.txt names the upstream version). TestUpstream
// renders every case with every renderer and compares with those files,
// byte for byte: the goal is identical output. Where the output is not
// identical, the difference is described — per file, semantically (netplan
// as decoded YAML by key path; networkd .network/.netdev/.link and
// NetworkManager keyfiles by section, each a set of lines; ENI by stanza;
// other files as sets of lines), or "layout only" when the content is the
// same and only order, comments or spacing differ — and the description must
// equal the reviewed testdata/<case>/cloud-init-26/<renderer>.txt. A change
// in either direction fails the test; -update rewrites the .txt files, and
// the diff is reviewed like any golden. Every difference that remains is
// intended and explained in docs/network.md ("Where cloudroot differs").
//
//	go test ./pkg/netconfig -run Upstream [-update]

import (
	"errors"
	"fmt"
	"github.com/cloudroot/cloudroot/pkg/internal/golden"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"
)

const upstreamDir = "cloud-init-26"

// upstreamDistro is the distro net-convert is given per renderer (it decides
// paths and headers); scripts/goldens/lib/netconfig.py has the same table.
var upstreamDistro = map[string]string{
	RendererENI: "debian", RendererNetplan: "ubuntu", RendererNetworkd: "debian",
	RendererSysconfig: "rhel", RendererNetworkManager: "rhel",
}

func TestUpstream(t *testing.T) {
	identical, extraOnly, total := map[string]int{}, map[string]int{}, map[string]int{}
	for _, c := range goldenCases(t) {
		t.Run(filepath.Base(c.dir), func(t *testing.T) {
			data, err := os.ReadFile(c.input)
			if err != nil {
				t.Fatal(err)
			}
			cfg, parseErr := c.parse(data, readMACs(t, filepath.Join(c.dir, "macs.txt")))
			for _, r := range Renderers {
				up := filepath.Join(c.dir, upstreamDir, r.Name)
				if _, err := os.Stat(filepath.Join(up, "MANIFEST")); err != nil {
					t.Errorf("%s: no upstream output (run scripts/goldens/netconfig.sh): %v", up, err)
					continue
				}
				report := upstreamReport(t, up, r.Name, cfg, parseErr)
				total[r.Name]++
				if report == "identical\n" {
					identical[r.Name]++
				} else if onlyExtraFiles(report) {
					extraOnly[r.Name]++
				}
				path := up + ".txt"
				if golden.Update() {
					if err := os.WriteFile(path, []byte(report), 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Errorf("%s: %v (run with -update and review)", path, err)
					continue
				}
				if diff := cmp.Diff(string(want), report); diff != "" {
					t.Errorf("%s: difference from cloud-init 26.x changed (-recorded +now):\n%s", path, diff)
				}
			}
		})
	}
	t.Cleanup(func() {
		for _, r := range Renderers {
			t.Logf("%-16s %3d of %3d cases identical to cloud-init 26.x, %d more identical but for files only cloudroot writes",
				r.Name, identical[r.Name], total[r.Name], extraOnly[r.Name])
		}
	})
}

// onlyExtraFiles reports whether every difference is a file only cloudroot
// writes (networkd's .link files).
func onlyExtraFiles(report string) bool {
	for _, l := range strings.Split(strings.TrimSpace(report), "\n") {
		if !strings.HasPrefix(l, "only in cloudroot: ") {
			return false
		}
	}
	return true
}

// upstreamReport describes how cloudroot's rendering differs from the
// upstream output stored in dir: "identical\n" or one line per difference.
func upstreamReport(t *testing.T, dir, renderer string, cfg *Config, parseErr error) string {
	t.Helper()
	theirs := readTree(t, dir)
	manifest := theirs["MANIFEST"]
	delete(theirs, "MANIFEST")
	delete(theirs, "LOG")
	upErr, upFailed := theirs["ERROR"]
	var ours *Output
	var ourErr error
	switch {
	case parseErr != nil:
		ourErr = parseErr
	case cfg.Disabled:
		ourErr = errors.New("config: disabled (nothing rendered)")
	default:
		ours, ourErr = Render(renderer, cfg)
	}
	switch {
	case upFailed && ourErr != nil:
		return fmt.Sprintf("both fail\ncloud-init: %scloudroot: %v\n", upErr, ourErr)
	case upFailed:
		return fmt.Sprintf("cloud-init fails: %scloudroot renders %d files\n", upErr, len(ours.Files))
	case ourErr != nil:
		return fmt.Sprintf("cloudroot fails: %v\n", ourErr)
	}
	modes := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(manifest), "\n") {
		if mode, p, ok := strings.Cut(l, " "); ok {
			modes["/"+p] = mode
		}
	}
	paths := map[string]bool{}
	for p := range theirs {
		paths["/"+p] = true
	}
	for p := range ours.Files {
		paths[p] = true
	}
	sorted := make([]string, 0, len(paths))
	for p := range paths {
		sorted = append(sorted, p)
	}
	sort.Strings(sorted)
	var lines []string
	for _, p := range sorted {
		th, inTheirs := theirs[strings.TrimPrefix(p, "/")]
		f, inOurs := ours.Files[p]
		switch {
		case !inOurs:
			lines = append(lines, "only in cloud-init: "+p)
			continue
		case !inTheirs:
			extra := ""
			if f.IfMissing {
				extra = " (if missing)"
			}
			lines = append(lines, "only in cloudroot: "+p+extra)
			continue
		}
		if m := fmt.Sprintf("%04o", f.Mode.Perm()); modes[p] != m {
			lines = append(lines, fmt.Sprintf("%s: mode cloud-init %s, cloudroot %s", p, modes[p], m))
		}
		if th == string(f.Data) {
			continue
		}
		d := semanticDiff(p, th, string(f.Data))
		if len(d) == 0 {
			lines = append(lines, p+": layout only (same content; order, comments or spacing differ)")
		}
		for _, x := range d {
			lines = append(lines, p+": "+x)
		}
	}
	if len(lines) == 0 {
		return "identical\n"
	}
	return strings.Join(lines, "\n") + "\n"
}

// semanticDiff compares two renderings of one file; nil when they say the
// same thing.
func semanticDiff(path, theirs, ours string) []string {
	switch {
	case strings.HasSuffix(path, ".yaml"):
		var a, b any
		errA := yaml.Unmarshal([]byte(theirs), &a)
		errB := yaml.Unmarshal([]byte(ours), &b)
		if errA != nil || errB != nil {
			return []string{fmt.Sprintf("yaml unreadable: %v / %v", errA, errB)}
		}
		return dataDiff("", a, b)
	case strings.Contains(path, "/etc/network/interfaces"):
		return blockDiff(eniBlocks(theirs), eniBlocks(ours))
	case strings.HasSuffix(path, ".network") || strings.HasSuffix(path, ".netdev") ||
		strings.HasSuffix(path, ".link") || strings.HasSuffix(path, ".nmconnection"):
		return blockDiff(iniSections(theirs), iniSections(ours))
	default:
		return blockDiff([]block{{lines: contentLines(theirs)}}, []block{{lines: contentLines(ours)}})
	}
}

// dataDiff lists, by key path, where two decoded YAML documents differ.
func dataDiff(path string, a, b any) []string {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if !aok || !bok {
		if flow(a) != flow(b) {
			return []string{fmt.Sprintf("%s: cloud-init %s, cloudroot %s", path, flow(a), flow(b))}
		}
		return nil
	}
	keys := map[string]bool{}
	for k := range am {
		keys[k] = true
	}
	for k := range bm {
		keys[k] = true
	}
	var out []string
	for _, k := range sortedKeys(keys) {
		av, ina := am[k]
		bv, inb := bm[k]
		p := path + "." + k
		switch {
		case !ina:
			out = append(out, fmt.Sprintf("%s: only in cloudroot: %s", p, flow(bv)))
		case !inb:
			out = append(out, fmt.Sprintf("%s: only in cloud-init: %s", p, flow(av)))
		default:
			out = append(out, dataDiff(p, av, bv)...)
		}
	}
	return out
}

// flow renders a decoded value on one line, with its type visible.
func flow(v any) string {
	switch x := v.(type) {
	case map[string]any:
		parts := []string{}
		for _, k := range sortedKeys(x) {
			parts = append(parts, k+": "+flow(x[k]))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = flow(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case string:
		return fmt.Sprintf("%q", x)
	}
	return fmt.Sprintf("%v (%T)", v, v)
}

// block is a stanza or section: a key (its header) and its other lines.
type block struct {
	key   string
	lines []string
}

func (b block) String() string {
	ls := append([]string(nil), b.lines...)
	sort.Strings(ls)
	return strings.TrimSpace(b.key + " " + strings.Join(ls, " | "))
}

func isComment(l string) bool {
	return strings.HasPrefix(l, "#") || strings.HasPrefix(l, ";")
}

func contentLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" && !isComment(l) {
			out = append(out, l)
		}
	}
	return out
}

// eniBlocks splits ENI text into stanzas keyed by their iface line.
func eniBlocks(s string) []block {
	var out []block
	for _, para := range strings.Split(s, "\n\n") {
		ls := contentLines(para)
		if len(ls) == 0 {
			continue
		}
		b := block{key: ls[0], lines: ls[1:]}
		for i, l := range ls {
			if strings.HasPrefix(l, "iface ") {
				b = block{key: l, lines: append(append([]string(nil), ls[:i]...), ls[i+1:]...)}
				break
			}
		}
		out = append(out, b)
	}
	return out
}

// iniSections splits an ini-like file into sections keyed by their header.
func iniSections(s string) []block {
	var out []block
	for _, l := range contentLines(s) {
		if strings.HasPrefix(l, "[") || len(out) == 0 {
			out = append(out, block{key: l})
			if strings.HasPrefix(l, "[") {
				continue
			}
		}
		out[len(out)-1].lines = append(out[len(out)-1].lines, l)
	}
	return out
}

// blockDiff compares two block lists. Blocks whose key occurs once on each
// side are compared line by line ("<key>: - line" only in cloud-init, "+"
// only in cloudroot); the others as multisets of whole blocks.
func blockDiff(theirs, ours []block) []string {
	byKey := func(bs []block) map[string][]block {
		m := map[string][]block{}
		for _, b := range bs {
			m[b.key] = append(m[b.key], b)
		}
		return m
	}
	tk, ok := byKey(theirs), byKey(ours)
	keys := map[string]bool{}
	for k := range tk {
		keys[k] = true
	}
	for k := range ok {
		keys[k] = true
	}
	var out []string
	for _, k := range sortedKeys(keys) {
		a, b := tk[k], ok[k]
		if len(a) == 1 && len(b) == 1 {
			for _, d := range multisetDiff(a[0].lines, b[0].lines) {
				out = append(out, strings.TrimSpace(k+" "+d))
			}
			continue
		}
		var as, bs []string
		for _, x := range a {
			as = append(as, x.String())
		}
		for _, x := range b {
			bs = append(bs, x.String())
		}
		out = append(out, multisetDiff(as, bs)...)
	}
	return out
}

// multisetDiff lists "- x" for what only theirs has and "+ x" for what only
// ours has, sorted.
func multisetDiff(theirs, ours []string) []string {
	count := map[string]int{}
	for _, x := range theirs {
		count[x]++
	}
	for _, x := range ours {
		count[x]--
	}
	var diffs []string
	for _, k := range sortedKeys(count) {
		for n := count[k]; n > 0; n-- {
			diffs = append(diffs, "- "+k)
		}
		for n := count[k]; n < 0; n++ {
			diffs = append(diffs, "+ "+k)
		}
	}
	return diffs
}

// TestUpstreamComplete checks that every case has upstream outputs and no
// upstream output is left from a case that is gone.
func TestUpstreamComplete(t *testing.T) {
	have := map[string]bool{}
	for _, c := range goldenCases(t) {
		have[c.dir] = true
	}
	dirs, err := filepath.Glob(filepath.Join("testdata", "*", upstreamDir))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if !have[filepath.Dir(d)] {
			t.Errorf("%s: upstream output for a directory that is no golden case", d)
		}
	}
	if _, err := os.Stat(filepath.Join("testdata", upstreamDir+".txt")); errors.Is(err, fs.ErrNotExist) {
		t.Errorf("testdata/%s.txt (the upstream version the goldens come from) is missing", upstreamDir)
	}
}
