package netconfig

// The differential check against cloud-init itself. With cloud-init
// installed and -cloudinit-diff given, every golden case is converted by
// `cloud-init devel net-convert` for every renderer and compared with ours
// semantically: netplan YAML as data; ini-like files (networkd, keyfiles)
// as multisets of sections, each a set of key=value lines; ENI as a
// multiset of stanzas; sysconfig files as sets of lines. Comments and
// boolean spelling (True/true) are ignored.
//
// The differences found are recorded per case in
// testdata/<case>/cloud-init/<renderer>.txt (rewritten by -update), so
// every divergence from cloud-init is visible and reviewed; docs/network.md
// explains them.
//
//	go test ./pkg/netconfig -run CloudInitDiff -cloudinit-diff [-update]

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var cloudinitDiff = flag.Bool("cloudinit-diff", false, "compare the golden corpus with `cloud-init devel net-convert` (slow)")

// distro passed to net-convert per renderer (it decides paths and headers).
var diffDistro = map[string]string{
	RendererENI: "debian", RendererNetplan: "ubuntu", RendererNetworkd: "debian",
	RendererSysconfig: "rhel", RendererNetworkManager: "rhel",
}

func TestCloudInitDiff(t *testing.T) {
	if !*cloudinitDiff {
		t.Skip("differential check not requested (-cloudinit-diff)")
	}
	ci, err := exec.LookPath("cloud-init")
	if err != nil {
		t.Skip("cloud-init not installed")
	}
	sem := make(chan struct{}, 2)
	var mu sync.Mutex
	identical, total := 0, 0
	for _, c := range goldenCases(t) {
		if _, err := os.Stat(filepath.Join(c.dir, "want", "ERROR")); err == nil {
			continue
		}
		c := c
		t.Run(filepath.Base(c.dir), func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(c.input)
			if err != nil {
				t.Fatal(err)
			}
			macs := readMACs(t, filepath.Join(c.dir, "macs.txt"))
			cfg, err := c.parse(data, macs)
			if err != nil {
				t.Fatal(err)
			}
			kind := map[string]string{"input.yaml": "yaml", "network_data.json": "network_data.json", "interfaces.eni": "eni"}[filepath.Base(c.input)]
			for _, r := range Renderers {
				sem <- struct{}{}
				report := diffOne(t, ci, c, kind, r.Name, cfg, macs)
				<-sem
				mu.Lock()
				total++
				if report == "identical\n" {
					identical++
				}
				mu.Unlock()
				path := filepath.Join(c.dir, "cloud-init", r.Name+".txt")
				if *update {
					if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(path, []byte(report), 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				want, _ := os.ReadFile(path)
				if diff := cmp.Diff(string(want), report); diff != "" {
					t.Errorf("%s: difference from cloud-init changed (-recorded +now):\n%s", path, diff)
				}
			}
		})
	}
	t.Cleanup(func() { t.Logf("%d of %d case/renderer pairs identical to cloud-init", identical, total) })
}

func diffOne(t *testing.T, ci string, c goldenCase, kind, renderer string, cfg *Config, macs MACs) string {
	t.Helper()
	dir := t.TempDir()
	abs, _ := filepath.Abs(c.input)
	args := []string{"devel", "net-convert", "-p", abs, "-k", kind, "-d", dir, "-D", diffDistro[renderer], "-O", renderer}
	var macArgs []string
	for mac, name := range macs {
		macArgs = append(macArgs, name+","+mac)
	}
	sort.Strings(macArgs)
	for _, m := range macArgs {
		args = append(args, "-m", m)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, ci, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
		return fmt.Sprintf("cloud-init failed: %s\n", lines[len(lines)-1])
	}
	theirs := map[string]string{}
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err == nil {
			rel, _ := filepath.Rel(dir, p)
			theirs["/"+filepath.ToSlash(rel)] = string(b)
		}
		return nil
	})
	out, err := Render(renderer, cfg)
	if err != nil {
		return fmt.Sprintf("cloudroot failed: %v\n", err)
	}
	var lines []string
	paths := map[string]bool{}
	for p := range theirs {
		paths[p] = true
	}
	for p := range out.Files {
		paths[p] = true
	}
	sorted := make([]string, 0, len(paths))
	for p := range paths {
		sorted = append(sorted, p)
	}
	sort.Strings(sorted)
	for _, p := range sorted {
		th, inTheirs := theirs[p]
		f, inOurs := out.Files[p]
		switch {
		case !inOurs:
			lines = append(lines, "only in cloud-init: "+p)
		case !inTheirs:
			lines = append(lines, "only in cloudroot: "+p)
		default:
			for _, d := range semanticDiff(p, th, string(f.Data)) {
				lines = append(lines, p+": "+d)
			}
		}
	}
	if len(lines) == 0 {
		return "identical\n"
	}
	return strings.Join(lines, "\n") + "\n"
}

// semanticDiff compares two renderings of the same file.
func semanticDiff(path, theirs, ours string) []string {
	switch {
	case strings.HasSuffix(path, ".yaml"):
		a, errA := decodeYAML([]byte(theirs))
		b, errB := decodeYAML([]byte(ours))
		if errA != nil || errB != nil {
			return []string{fmt.Sprintf("yaml unreadable: %v / %v", errA, errB)}
		}
		return dataDiff("", plain(a), plain(b))
	case strings.Contains(path, "/etc/network/interfaces"):
		return multisetDiff(eniBlocks(theirs), eniBlocks(ours))
	case strings.HasSuffix(path, ".network") || strings.HasSuffix(path, ".nmconnection") || strings.HasSuffix(path, ".conf") && strings.Contains(path, "NetworkManager"):
		return multisetDiff(iniSections(theirs), iniSections(ours))
	default:
		return multisetDiff([]string{lineSet(theirs)}, []string{lineSet(ours)})
	}
}

// dataDiff lists, by key path, where two decoded YAML documents differ
// (stable text: cmp.Diff's output is deliberately not).
func dataDiff(path string, a, b any) []string {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		var out []string
		for _, k := range sorted {
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
	if flow(a) != flow(b) {
		return []string{fmt.Sprintf("%s: cloud-init %s, cloudroot %s", path, flow(a), flow(b))}
	}
	return nil
}

// flow renders a value on one line, with its type visible.
func flow(v any) string {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + ": " + flow(x[k])
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

// plain turns decoded YAML into comparable maps.
func plain(v any) any {
	switch x := v.(type) {
	case *omap:
		m := map[string]any{}
		for _, k := range x.keys {
			m[k] = plain(x.m[k])
		}
		return m
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = plain(e)
		}
		return out
	}
	return v
}

func normLine(l string) string {
	l = strings.TrimSpace(l)
	for _, b := range []string{"True", "False"} {
		if strings.HasSuffix(l, "="+b) {
			l = strings.TrimSuffix(l, b) + strings.ToLower(b)
		}
	}
	return l
}

func isComment(l string) bool {
	return (strings.HasPrefix(l, "#") && !strings.HasPrefix(l, "# control-")) || strings.HasPrefix(l, ";")
}

func lineSet(s string) string {
	var ls []string
	for _, l := range strings.Split(s, "\n") {
		l = normLine(l)
		if l == "" || isComment(l) {
			continue
		}
		ls = append(ls, l)
	}
	sort.Strings(ls)
	return strings.Join(ls, " | ")
}

func iniSections(s string) []string {
	var out []string
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			head := cur[0]
			body := append([]string(nil), cur[1:]...)
			sort.Strings(body)
			out = append(out, head+" "+strings.Join(body, " | "))
		}
		cur = nil
	}
	for _, l := range strings.Split(s, "\n") {
		l = normLine(l)
		if l == "" || isComment(l) {
			continue
		}
		if strings.HasPrefix(l, "[") {
			flush()
		}
		cur = append(cur, l)
	}
	flush()
	return out
}

func eniBlocks(s string) []string {
	var out []string
	for _, b := range strings.Split(s, "\n\n") {
		if v := lineSet(b); v != "" {
			out = append(out, v)
		}
	}
	return out
}

func multisetDiff(theirs, ours []string) []string {
	count := map[string]int{}
	for _, x := range theirs {
		count[x]++
	}
	for _, x := range ours {
		count[x]--
	}
	var diffs []string
	keys := make([]string, 0, len(count))
	for k := range count {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		switch n := count[k]; {
		case n > 0:
			diffs = append(diffs, "- "+k)
		case n < 0:
			diffs = append(diffs, "+ "+k)
		}
	}
	return diffs
}
