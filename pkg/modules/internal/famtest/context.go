package famtest

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

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/distro"
	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
	"github.com/cloudroot/cloudroot/pkg/modules"
	"github.com/cloudroot/cloudroot/pkg/target"
)

// Recorder is a target.Runner that records the commands run in a target
// (argv and environment) and, for scripts, their content at the time they
// ran; it is pkg/modules' recRunner for the families.
type Recorder struct {
	Calls   [][]string
	Scripts []string
	Envs    [][]string
	// Fail makes a command fail with the error given for its last
	// argument.
	Fail map[string]error
	// Answers are the stdout of commands, by their space-joined argv.
	Answers map[string]string
}

// Run implements target.Runner.
func (r *Recorder) Run(ctx context.Context, root string, cmd target.Cmd) error {
	r.Calls = append(r.Calls, cmd.Argv)
	r.Envs = append(r.Envs, cmd.Env)
	for _, a := range cmd.Argv {
		if b, err := os.ReadFile(filepath.Join(root, a)); err == nil {
			r.Scripts = append(r.Scripts, string(b))
		}
	}
	if a, ok := r.Answers[strings.Join(cmd.Argv, " ")]; ok && cmd.Stdout != nil {
		io.WriteString(cmd.Stdout, a)
	}
	if r.Fail != nil {
		if err, ok := r.Fail[cmd.Argv[len(cmd.Argv)-1]]; ok {
			return err
		}
	}
	return nil
}

// NewContext is a module context on a fresh temp root holding files
// (paths relative to the root), its commands recorded, resolving module
// names in mods; the buffer is the context's Out.
func NewContext(t *testing.T, cfg modules.Config, files map[string]string, mods []modules.Module) (*modules.Context, *Recorder, *bytes.Buffer) {
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
	rr := &Recorder{}
	root, err := target.New(dir, target.WithRunner(rr))
	if err != nil {
		t.Fatal(err)
	}
	out := &bytes.Buffer{}
	var warnings []string
	c := &modules.Context{
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
		Modules:    mods,
	}
	return c, rr, out
}

// YAML is the cloud-config s, decoded as the datasources decode it.
func YAML(t *testing.T, s string) modules.Config {
	t.Helper()
	m, err := datasource.DecodeYAMLMap([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return modules.Config(m)
}

// Typed is cfg decoded into a module's typed configuration, as
// modules.Typed decodes it (problems dropped).
func Typed[T any](cfg modules.Config) T {
	var out T
	_ = (&pyval.Decoder{}).Decode(cfg, &out)
	return out
}
