package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"github.com/cloudroot/cloudroot/pkg/internal/golden"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The fixed clock of every status test: booted 300s before testNow, so an
// uptime of 12.87 reads as 08:35:12.
var (
	testNow    = time.Date(2026, 11, 22, 8, 40, 0, 0, time.UTC)
	testUptime = 300.0
)

func newTestEnv(root string) (*Env, *bytes.Buffer, *bytes.Buffer) {
	var out, errb bytes.Buffer
	return &Env{
		Root:   root,
		Stdout: &out,
		Stderr: &errb,
		Now:    func() time.Time { return testNow },
		Uptime: func() float64 { return testUptime },
		Sleep: func(context.Context, time.Duration) error {
			return errors.New("unexpected sleep")
		},
	}, &out, &errb
}

// copyCase copies a case directory (minus README, want.* and mtime) into a
// temp root, stamping every file with testNow plus the offset in seconds
// read from the case's mtime file (default -60, i.e. during this boot).
func copyCase(t *testing.T, dir string) string {
	t.Helper()
	root := t.TempDir()
	offset := -60
	if b, err := os.ReadFile(filepath.Join(dir, "mtime")); err == nil {
		o, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			t.Fatalf("mtime: %v", err)
		}
		offset = o
	}
	stamp := testNow.Add(time.Duration(offset) * time.Second)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(root, rel), 0o755)
		}
		if filepath.Dir(rel) == "." && (rel == "README" || rel == "mtime" || strings.HasPrefix(rel, "want.")) {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		dst := filepath.Join(root, rel)
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			return err
		}
		return os.Chtimes(dst, stamp, stamp)
	})
	if err != nil {
		t.Fatalf("copying %s: %v", dir, err)
	}
	return root
}

func TestStatusGolden(t *testing.T) {
	dirs, err := filepath.Glob("testdata/status/*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	outputs := []struct {
		file string
		args []string
	}{
		{"want.tabular", nil},
		{"want.long", []string{"--long"}},
		{"want.json", []string{"--format", "json"}},
		{"want.yaml", []string{"--format=yaml"}},
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			root := copyCase(t, dir)
			rc := -1
			for _, o := range outputs {
				env, out, errb := newTestEnv(root)
				got := Run(context.Background(), env, append([]string{"status"}, o.args...))
				if errb.Len() > 0 {
					t.Errorf("%v: stderr: %s", o.args, errb)
				}
				if rc >= 0 && got != rc {
					t.Errorf("%v: exit %d, other formats exited %d", o.args, got, rc)
				}
				rc = got
				b := out.Bytes()
				if _, err := os.Stat(filepath.Join(dir, "upstream")); err == nil {
					b = maskLastUpdate(b)
				}
				golden.Check(t, filepath.Join(dir, o.file), b)
			}
			golden.Check(t, filepath.Join(dir, "want.rc"), []byte(strconv.Itoa(rc)+"\n"))
		})
	}
}

func TestStatusArgs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want statusOptions
		err  string
	}{
		{args: nil, want: statusOptions{format: "tabular"}},
		{args: []string{"-lw"}, want: statusOptions{format: "tabular", long: true, wait: true}},
		{args: []string{"-w", "--long"}, want: statusOptions{format: "tabular", long: true, wait: true}},
		{args: []string{"--format", "json"}, want: statusOptions{format: "json"}},
		{args: []string{"--format=yaml", "-l"}, want: statusOptions{format: "yaml", long: true}},
		{args: []string{"--form", "json", "--lo", "--wa"}, want: statusOptions{format: "json", long: true, wait: true}},
		{args: []string{"--format"}, err: "argument --format: expected one argument"},
		{args: []string{"--format", "-l"}, err: "argument --format: expected one argument"},
		{args: []string{"--format", "xml"}, err: "argument --format: invalid choice: 'xml' (choose from 'json', 'tabular', 'yaml')"},
		{args: []string{"--long=1"}, err: "argument -l/--long: ignored explicit argument '1'"},
		{args: []string{"-lx"}, err: "argument -l/--long: ignored explicit argument 'x'"},
		{args: []string{"-x", "extra"}, err: "unrecognized arguments: -x extra"},
		{args: []string{"--bogus"}, err: "unrecognized arguments: --bogus"},
		{args: []string{"-l", "--", "-w"}, err: "unrecognized arguments: -w"},
		{args: []string{"-lh"}, err: errStatusHelp.Error()},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			got, err := parseStatusArgs(tc.args)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(statusOptions{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestStatusBadArgs(t *testing.T) {
	env, out, errb := newTestEnv(t.TempDir())
	if rc := Run(context.Background(), env, []string{"status", "--format", "xml"}); rc != 2 {
		t.Errorf("exit %d, want 2", rc)
	}
	// The whole layout is held to upstream's in testdata/args/status-bad-format.
	want := "error: argument --format: invalid choice: 'xml' (choose from 'json', 'tabular', 'yaml')\n\nusage: cloud-init status [-h]"
	if !strings.HasPrefix(errb.String(), want) {
		t.Errorf("stderr %q, want it to start with %q", errb.String(), want)
	}
	if out.Len() != 0 {
		t.Errorf("stdout: %q", out)
	}

	env, out, _ = newTestEnv(t.TempDir())
	if rc := Run(context.Background(), env, []string{"status", "-h"}); rc != 0 || !strings.HasPrefix(out.String(), "usage: cloud-init status") {
		t.Errorf("-h: exit %d, stdout %q", rc, out)
	}
}

func TestStatusMalformed(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "run/cloud-init/status.json")
	os.MkdirAll(filepath.Dir(p), 0o755)
	os.WriteFile(p, []byte(`{"v1": {`), 0o644)
	env, _, errb := newTestEnv(root)
	if rc := Run(context.Background(), env, []string{"status"}); rc != 1 || !strings.Contains(errb.String(), "status.json") {
		t.Errorf("exit %d, stderr %q", rc, errb)
	}
}

// TestStatusWait starts from the "running" case and swaps in the "done"
// case's files on the flipAt-th sleep.
func TestStatusWait(t *testing.T) {
	const flipAt = 3
	for _, tc := range []struct {
		name  string
		from  string
		args  []string
		want  string
		polls int
		rc    int
	}{
		// cloud-init prints a dot, re-reads, sleeps: the read after the
		// flip sees done, so there is one dot more than sleeps before it.
		{"tabular", "running", []string{"--wait"}, "....status: done\n", flipAt + 1, 0},
		{"long", "running", []string{"-wl"}, "....status: done\nextended_status: done\n", flipAt + 1, 0},
		{"json", "running", []string{"-w", "--format", "json"}, `"status": "done"`, flipAt + 1, 0},
		{"not-started", "not-started", []string{"-w"}, "....status: done\n", flipAt + 1, 0},
		{"already-done", "done", []string{"--wait"}, "status: done\n", 0, 0},
		{"disabled", "disabled-generator", []string{"--wait"}, "status: disabled\n", 0, 0},
		{"error", "error-done", []string{"--wait"}, "status: error\n", 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := copyCase(t, filepath.Join("testdata/status", tc.from))
			env, out, errb := newTestEnv(root)
			polls := 0
			env.Sleep = func(ctx context.Context, d time.Duration) error {
				if d != 250*time.Millisecond {
					t.Errorf("slept %v, want 250ms", d)
				}
				polls++
				if polls == flipAt {
					for _, f := range []string{"run/cloud-init/status.json", "run/cloud-init/result.json"} {
						b, err := os.ReadFile(filepath.Join("testdata/status/done", f))
						if err != nil {
							t.Fatal(err)
						}
						os.MkdirAll(filepath.Join(root, "run/cloud-init"), 0o755)
						if err := os.WriteFile(filepath.Join(root, f), b, 0o644); err != nil {
							t.Fatal(err)
						}
					}
				}
				if polls > 100 {
					return context.Canceled
				}
				return nil
			}
			rc := Run(context.Background(), env, append([]string{"status"}, tc.args...))
			if rc != tc.rc {
				t.Errorf("exit %d, want %d (stderr %q)", rc, tc.rc, errb)
			}
			if polls != tc.polls {
				t.Errorf("%d polls, want %d", polls, tc.polls)
			}
			if strings.HasPrefix(tc.want, `"`) {
				if !strings.Contains(out.String(), tc.want) || strings.Contains(out.String(), ".\n") {
					t.Errorf("stdout %q, want json containing %s and no dots", out, tc.want)
				}
				return
			}
			if !strings.HasPrefix(out.String(), tc.want) {
				t.Errorf("stdout %q, want prefix %q", out, tc.want)
			}
		})
	}
}

func TestStatusWaitCancelled(t *testing.T) {
	root := copyCase(t, "testdata/status/running")
	env, out, _ := newTestEnv(root)
	env.Sleep = func(ctx context.Context, d time.Duration) error { return context.Canceled }
	if rc := Run(context.Background(), env, []string{"status", "--wait"}); rc != 130 {
		t.Errorf("exit %d, want 130", rc)
	}
	if out.String() != ".\n" {
		t.Errorf("stdout %q", out)
	}
}

// FuzzStatusJSON feeds arbitrary status.json content through every output
// format: nothing may panic, and the json output must parse.
func FuzzStatusJSON(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/status/*/run/cloud-init/status.json")
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		root := t.TempDir()
		p := filepath.Join(root, "run/cloud-init/status.json")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"--long"}, {"--format", "json"}, {"--format", "yaml"}} {
			env, out, _ := newTestEnv(root)
			rc := Run(context.Background(), env, append([]string{"status"}, args...))
			if rc == 1 && out.Len() == 0 {
				continue // unreadable status.json
			}
			if args[0] == "--format" && args[1] == "json" {
				var v map[string]any
				if err := json.Unmarshal(out.Bytes(), &v); err != nil {
					t.Fatalf("json output does not parse: %v\n%s", err, out)
				}
			}
		}
	})
}

// TestStatusWaitUpstream: `status --wait` while the stages are still
// running, against upstream's answers for the same flip
// (testdata/status-wait/<case>: run/ at the start, flip/ copied over it
// while waiting; scripts/goldens/cli-args.sh). The dots --wait prints per
// poll depend on timing and are masked to "...".
func TestStatusWaitUpstream(t *testing.T) {
	dirs, _ := filepath.Glob("testdata/status-wait/*")
	if len(dirs) == 0 {
		t.Fatal("no status-wait cases")
	}
	dots := regexp.MustCompile(`^\.+`)
	for _, dir := range dirs {
		for _, f := range []struct {
			want string
			args []string
		}{{"want.long", []string{"--wait", "--long"}}, {"want.json", []string{"--wait", "--format", "json"}}} {
			t.Run(filepath.Base(dir)+"/"+f.want, func(t *testing.T) {
				root := t.TempDir()
				copyInto(t, filepath.Join(dir, "run"), filepath.Join(root, "run"))
				env, out, _ := newTestEnv(root)
				polls := 0
				env.Sleep = func(ctx context.Context, d time.Duration) error {
					polls++
					if polls == 3 {
						copyInto(t, filepath.Join(dir, "flip"), filepath.Join(root, "run"))
					}
					if polls > 100 {
						return context.Canceled
					}
					return nil
				}
				rc := Run(context.Background(), env, append([]string{"status"}, f.args...))
				got := string(maskLastUpdate([]byte(dots.ReplaceAllString(out.String(), "..."))))
				want, err := os.ReadFile(filepath.Join(dir, f.want))
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(string(want), got); diff != "" {
					t.Errorf("(-upstream +cloudroot):\n%s", diff)
				}
				wrc, _ := os.ReadFile(filepath.Join(dir, "want.rc"))
				if strings.TrimSpace(string(wrc)) != strconv.Itoa(rc) {
					t.Errorf("exit %d, upstream %s", rc, wrc)
				}
			})
		}
	}
}

// lastUpdateRE finds last_update's value, which cloudroot computes from
// real times where cloud-init formats uptimes as epoch times (1970 dates;
// docs/compatibility.md): upstream's goldens have it masked.
var lastUpdateRE = regexp.MustCompile(`(last_update"?: "?)[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} \+0000`)

func maskLastUpdate(b []byte) []byte { return lastUpdateRE.ReplaceAll(b, []byte("${1}$$LAST_UPDATE")) }

// TestLooksNumeric compares looksNumeric with argparse's expression.
func TestLooksNumeric(t *testing.T) {
	re := regexp.MustCompile(`^-\d+$|^-\d*\.\d+$`)
	for _, a := range []string{"", "-", "--", "-1", "-12", "1", "+1", "-1.", "-.5", "-1.5", "-.", "-1.2.3",
		"-a", "-1a", "-l", "--long", "-0", "-.0", "-1..2", "-١", "-1\n", " -1", "-1.5e3", "-.-"} {
		if want, got := re.MatchString(a), looksNumeric(a); want != got {
			t.Errorf("looksNumeric(%q) = %v, want %v", a, got, want)
		}
	}
}
