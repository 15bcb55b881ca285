package cli

import (
	"context"
	"fmt"
	"github.com/cloudroot/cloudroot/pkg/internal/golden"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestAnalyzeGoldens compares `analyze show|blame|dump` with upstream
// cloud-init's answers for the same logs (scripts/goldens/analyze.sh).
func TestAnalyzeGoldens(t *testing.T) {
	dirs, _ := filepath.Glob("testdata/analyze/*")
	if len(dirs) == 0 {
		t.Fatal("no analyze cases")
	}
	for _, dir := range dirs {
		for _, sub := range []string{"show", "blame", "dump", "boot"} {
			want, err := os.ReadFile(filepath.Join(dir, "want-"+sub+".txt"))
			if err != nil {
				continue
			}
			t.Run(filepath.Base(dir)+"/"+sub, func(t *testing.T) {
				env, out, errb := newTestEnv("/")
				code := Run(context.Background(), env, []string{"analyze", sub, "-i", filepath.Join(dir, "cloud-init.log")})
				got := fmt.Sprintf("%sexit: %d\n%s", out, code, errb)
				if diff := cmp.Diff(string(want), got); diff != "" {
					t.Errorf("analyze %s (-upstream +cloudroot):\n%s", sub, diff)
				}
			})
		}
	}
}

func TestAnalyzeErrors(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty.log")
	os.WriteFile(empty, []byte("\n  \n"), 0o644)
	outFile := filepath.Join(t.TempDir(), "out.txt")
	for _, tc := range []struct {
		name       string
		args       []string
		code       int
		out, err   string
		fileSuffix string
	}{
		{name: "missing", args: []string{"analyze", "show", "-i", "/nonexistent/x.log"}, code: 1, err: "Cannot open file /nonexistent/x.log\n"},
		{name: "empty", args: []string{"analyze", "blame", "-i", empty}, code: 1, err: "Empty file " + empty + "\n"},
		{name: "no subcommand", args: []string{"analyze"}, code: 2, err: "error: the following arguments are required: subcommand\n\n" + analyzeUsage + analyzeHelp},
		{name: "bad subcommand", args: []string{"analyze", "nope"}, code: 2, err: "error: argument subcommand: invalid choice: 'nope' (choose from 'blame', 'show', 'dump', 'boot', 'plot')\n\n" + analyzeUsage + analyzeHelp},
		{name: "boot without kernel timestamps", args: []string{"analyze", "boot", "-i", "testdata/analyze/two-boots/cloud-init.log"}, code: 1, out: analyzeFailureMsg, err: "Skipping invalid entry\n"},
		{name: "outfile", args: []string{"analyze", "blame", "-i", "testdata/analyze/two-boots/cloud-init.log", "-o", outFile}, code: 0, err: "Skipping invalid entry\n", fileSuffix: "2 boot records analyzed\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env, out, errb := newTestEnv("/")
			code := Run(context.Background(), env, tc.args)
			if code != tc.code || out.String() != tc.out || errb.String() != tc.err {
				t.Errorf("got exit %d stdout %q stderr %q; want %d %q %q", code, out, errb, tc.code, tc.out, tc.err)
			}
			if tc.fileSuffix != "" {
				b, _ := os.ReadFile(outFile)
				if !strings.HasSuffix(string(b), tc.fileSuffix) {
					t.Errorf("outfile = %q", b)
				}
			}
		})
	}
}

// TestAnalyzePlot draws a boot (the cloudroot-boot log, with the hand-off
// state's initramfs timings and status.json) and checks the picture has a
// bar per initramfs step, stage, datasource attempt and module, against
// testdata/analyze-plot/want.svg (-update rewrites it).
func TestAnalyzePlot(t *testing.T) {
	root := "testdata/analyze-plot/root"
	for _, format := range []string{"svg", "html"} {
		env, out, errb := newTestEnv(root)
		if code := Run(context.Background(), env, []string{"analyze", "plot", "--format", format}); code != 0 {
			t.Fatalf("plot --format %s: exit %d: %s", format, code, errb)
		}
		got := out.String()
		var names []string
		for _, l := range strings.Split(got, "\n") {
			if i := strings.Index(l, `data-name="`); i >= 0 {
				n := l[i+len(`data-name="`):]
				names = append(names, n[:strings.IndexByte(n, '"')])
			}
		}
		logb, _ := os.ReadFile(filepath.Join(root, "var/log/cloud-init.log"))
		var want []string
		for _, s := range []string{"early", "drivers", "entropy", "mount-root", "detect", "local", "init", "handoff"} {
			want = append(want, "initramfs: "+s)
		}
		want = append(want, "switch_root")
		for _, l := range strings.Split(string(logb), "\n") {
			if i := strings.Index(l, "]: start: "); i >= 0 {
				n := strings.SplitN(l[i+len("]: start: "):], ":", 2)[0]
				want = append(want, n)
			}
		}
		for _, w := range want {
			if !slices.Contains(names, w) {
				t.Errorf("%s: no bar for %s", format, w)
			}
		}
		if !strings.Contains(got, `class="slow">#1 `) {
			t.Errorf("%s: the slowest step is not labelled", format)
		}
		if format == "html" {
			if !strings.HasPrefix(got, "<!DOCTYPE html>") || !strings.Contains(got, "<svg") {
				t.Errorf("html: not a page with the picture inline")
			}
			continue
		}
		golden.CheckString(t, "testdata/analyze-plot/want.svg", got)
	}
}

// TestAnalyzePlotInstanceMirror draws the initramfs's phases from the
// instance directory's mirror of the hand-off state when /run no longer
// holds it, so the picture still starts at the kernel, not at init-local.
func TestAnalyzePlotInstanceMirror(t *testing.T) {
	root := t.TempDir()
	src := "testdata/analyze-plot/root"
	for _, f := range []struct{ from, to string }{
		{"var/log/cloud-init.log", "var/log/cloud-init.log"},
		{"var/lib/cloud/data/status.json", "var/lib/cloud/data/status.json"},
		{"run/cloud-init/cloudroot/state.json", "var/lib/cloud/instance/cloudroot-state.json"},
	} {
		b, err := os.ReadFile(filepath.Join(src, f.from))
		if err != nil {
			t.Fatal(err)
		}
		to := filepath.Join(root, f.to)
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env, out, errb := newTestEnv(root)
	if code := Run(context.Background(), env, []string{"analyze", "plot"}); code != 0 {
		t.Fatalf("plot: exit %d: %s", code, errb)
	}
	for _, w := range []string{`data-name="kernel"`, `data-name="initramfs: drivers"`, `data-name="initramfs: mount-root"`, `data-name="switch_root"`} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("no %s in the picture from the instance mirror", w)
		}
	}
}
