package modules

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cloudroot/cloudroot/pkg/distro"
	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
	"github.com/cloudroot/cloudroot/pkg/target"
)

// recRunner records the commands run in a target and, for scripts, their
// content at the time they ran.
type recRunner struct {
	calls   [][]string
	scripts []string
	envs    [][]string
	fail    map[string]error
	// answers are the stdout of commands, by their space-joined argv.
	answers map[string]string
}

func (r *recRunner) Run(ctx context.Context, root string, cmd target.Cmd) error {
	r.calls = append(r.calls, cmd.Argv)
	r.envs = append(r.envs, cmd.Env)
	for _, a := range cmd.Argv {
		if b, err := os.ReadFile(filepath.Join(root, a)); err == nil {
			r.scripts = append(r.scripts, string(b))
		}
	}
	if a, ok := r.answers[strings.Join(cmd.Argv, " ")]; ok && cmd.Stdout != nil {
		io.WriteString(cmd.Stdout, a)
	}
	if r.fail != nil {
		if err, ok := r.fail[cmd.Argv[len(cmd.Argv)-1]]; ok {
			return err
		}
	}
	return nil
}

// testContext returns a module context on a fresh temp root holding files.
func testContext(t *testing.T, cfg Config, files map[string]string) (*Context, *recRunner, *bytes.Buffer) {
	t.Helper()
	dir := t.TempDir()
	for p, s := range files {
		hp := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(hp), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(hp, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rr := &recRunner{}
	root, err := target.New(dir, target.WithRunner(rr))
	if err != nil {
		t.Fatal(err)
	}
	out := &bytes.Buffer{}
	var warnings []string
	c := &Context{
		Root:       root,
		Config:     cfg,
		Meta:       map[string]any{"instance-id": "iid-test", "local-hostname": "meta-host"},
		InstanceID: "iid-test",
		Distro:     distro.Detect(root.ReadFile),
		Datasource: "DataSourceNoCloud [seed=/dev/sr0]",
		Log:        slog.New(slog.NewTextHandler(io.Discard, nil)),
		Out:        out,
		Now:        func() time.Time { return time.Date(2026, 11, 22, 8, 36, 48, 0, time.UTC) },
		Uptime:     func() float64 { return 12.345 },
		Version:    "26.2-cloudroot",
		Warn:       func(m string) { warnings = append(warnings, m) },
		Modules:    Core(),
	}
	return c, rr, out
}

func readFile(t *testing.T, c *Context, p string) string {
	t.Helper()
	b, err := c.Root.ReadFile(p)
	if err != nil {
		t.Fatalf("read %s: %v", p, err)
	}
	return string(b)
}

func mode(t *testing.T, c *Context, p string) os.FileMode {
	t.Helper()
	fi, err := c.Root.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode()
}

// typedConfig is cfg decoded into a module's typed configuration, as
// Typed decodes it (problems dropped).
func typedConfig[T any](cfg Config) T {
	var out T
	_ = (&pyval.Decoder{}).Decode(cfg, &out)
	return out
}
