package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/cloudroot/cloudroot/pkg/internal/golden"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cloudroot/cloudroot/pkg/identify"
)

// identifyTestEnv clears the environment identify reads and returns an Env
// on root with a fixed uptime.
func identifyTestEnv(t *testing.T, root string) (*Env, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	for _, k := range identifyEnvVars() {
		t.Setenv(k, "")
	}
	var out, errb bytes.Buffer
	return &Env{Root: root, Stdout: &out, Stderr: &errb, Uptime: func() float64 { return 12.34 }}, &out, &errb
}

// copyTree copies testdata dir src into a fresh temp dir.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

var (
	identifyUptimeRE = regexp.MustCompile(`\[up [0-9.]+s\]`)
	identifyPidRE    = regexp.MustCompile(`(?m)^pid=\d+ ppid=\d+$`)
	identifyMachRE   = regexp.MustCompile(`(?m)^UNAME_MACHINE=.*$`)
)

// maskIdentifyLog hides what differs between runs and hosts.
func maskIdentifyLog(s string) string {
	s = identifyUptimeRE.ReplaceAllString(s, "[up N.NNs]")
	s = identifyPidRE.ReplaceAllString(s, "pid=PID ppid=PPID")
	return identifyMachRE.ReplaceAllString(s, "UNAME_MACHINE=MACHINE")
}

func readOr(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		return "<absent>"
	}
	return string(b)
}

// TestIdentifyGolden runs `identify --root` on each testdata/identify/<case>
// and compares what it printed and wrote with the case's want.* files.
func TestIdentifyGolden(t *testing.T) {
	dirs, _ := filepath.Glob("testdata/identify/*")
	if len(dirs) == 0 {
		t.Fatal("no cases")
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			root := copyTree(t, filepath.Join(dir, "root"))
			env, out, _ := identifyTestEnv(t, "/nonexistent")
			code := identifyCommand().Run(context.Background(), env, []string{"--root", root})
			run := filepath.Join(root, "run", "cloud-init")
			got := map[string]string{
				"want.exit":            strconv.Itoa(code) + "\n",
				"want.stdout":          out.String(),
				"want.cloud.cfg":       readOr(t, filepath.Join(run, "cloud.cfg")),
				"want.ds-identify.log": maskIdentifyLog(readOr(t, filepath.Join(run, "ds-identify.log"))),
				"want.result":          readOr(t, filepath.Join(run, ".ds-identify.result")),
			}
			for _, m := range []string{"enabled", "disabled"} {
				if _, err := os.Stat(filepath.Join(run, m)); err == nil {
					got["want.marker"] = m + "\n"
				}
			}
			for name, content := range got {
				path := filepath.Join(dir, name)
				if golden.Update() {
					if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (run with -update)", err)
				}
				if diff := cmp.Diff(string(want), content); diff != "" {
					t.Errorf("%s (-want +got):\n%s", name, diff)
				}
			}
		})
	}
}

func TestIdentifyCacheAndForce(t *testing.T) {
	root := copyTree(t, "testdata/identify/nocloud-seed/root")
	env, out, _ := identifyTestEnv(t, root)
	ctx := context.Background()
	if code := identifyCommand().Run(ctx, env, nil); code != 0 {
		t.Fatalf("first run: exit %d", code)
	}
	logPath := filepath.Join(root, identify.PathRunLog)
	first := readOr(t, logPath)

	// The seed goes away, but the cached answer stands.
	if err := os.RemoveAll(filepath.Join(root, "var/lib/cloud/seed")); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if code := identifyCommand().Run(ctx, env, nil); code != 0 {
		t.Fatalf("cached run: exit %d", code)
	}
	if got := out.String(); got != "cached result 0 (pass --force to re-run)\n" {
		t.Errorf("cached stdout = %q", got)
	}
	if readOr(t, logPath) != first {
		t.Error("a cached run wrote to the log")
	}

	out.Reset()
	if code := identifyCommand().Run(ctx, env, []string{"--force", "--json"}); code != 1 {
		t.Fatalf("forced run: exit %d, want 1", code)
	}
	var r identify.Result
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out)
	}
	if r.Decision != identify.Disabled || r.ExitCode != 1 || r.List != nil {
		t.Errorf("forced result = %+v", r)
	}
	log := readOr(t, logPath)
	if !strings.HasPrefix(log, first) || !strings.Contains(log[len(first):], "] ds-identify --force\n") {
		t.Errorf("forced run did not append to the log:\n%s", log)
	}
	if _, err := os.Stat(filepath.Join(root, identify.PathRunEnabled)); err == nil {
		t.Error("enabled marker left behind after a disabled run")
	}
	if _, err := os.Stat(filepath.Join(root, identify.PathRunDisabled)); err != nil {
		t.Error("no disabled marker")
	}
}

func TestIdentifyArgs(t *testing.T) {
	env, out, errb := identifyTestEnv(t, t.TempDir())
	if code := identifyCommand().Run(context.Background(), env, []string{"--bogus"}); code != identifyFailed {
		t.Errorf("--bogus: exit %d", code)
	}
	if code := identifyCommand().Run(context.Background(), env, []string{"extra"}); code != identifyFailed {
		t.Errorf("extra arg: exit %d", code)
	}
	if code := identifyCommand().Run(context.Background(), env, []string{"-h"}); code != 0 || !strings.Contains(out.String(), "usage: cloudroot identify") {
		t.Errorf("-h: exit %d, stdout %q, stderr %q", code, out, errb)
	}
}
