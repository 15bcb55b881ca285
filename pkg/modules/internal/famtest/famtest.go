// Package famtest is pkg/modules/internal/modtest for the family
// sub-packages: it builds the modules.Context on a golden case's target
// (pkg/modules' own tests cannot import it, it imports pkg/modules, and
// have their own adapter).
package famtest

import (
	"io"
	"io/fs"
	"log/slog"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/distro"
	"github.com/cloudroot/cloudroot/pkg/modules"
	"github.com/cloudroot/cloudroot/pkg/modules/internal/modtest"
	"github.com/cloudroot/cloudroot/pkg/target"
)

// Case is a golden case's target and recorders with the Context built on
// them.
type Case struct {
	*modtest.Env
	C *modules.Context
}

// Setup builds the case in dir (see modtest).
func Setup(t *testing.T, dir string) *Case {
	t.Helper()
	e := modtest.Setup(t, dir)
	c := &modules.Context{
		Root: e.Target, Config: modules.Config(e.Config), Meta: map[string]any{"instance-id": "iid-test"}, InstanceID: "iid-test",
		Distro: distro.Detect(e.Target.ReadFile), Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Out: e.Out, Console: e.Console, Now: modtest.Now, Uptime: func() float64 { return 1 },
		Version: modtest.Version, Warn: e.Warn, Deprecated: e.Deprecated, Booted: e.Booted,
	}
	return &Case{Env: e, C: c}
}

// Run runs m on the case and reports what it did.
func (g *Case) Run(t *testing.T, m modules.Module) string {
	t.Helper()
	return g.Report(t, m.Name, m.Run(t.Context(), g.C))
}

// Golden runs every case of m under testdata/modgolden/<name> against its
// want.txt.
func Golden(t *testing.T, m modules.Module) {
	modtest.Golden(t, m.Name, func(t *testing.T, dir string) string { return Setup(t, dir).Run(t, m) })
}

// ReadFile is the file at p in c's target.
func ReadFile(t *testing.T, c *modules.Context, p string) string {
	t.Helper()
	b, err := c.Root.ReadFile(p)
	if err != nil {
		t.Fatalf("read %s: %v", p, err)
	}
	return string(b)
}

// Accounts is a Context on r (modtest.AccountsRoot) with cfg and meta, its
// warnings recorded.
func Accounts(t *testing.T, r *target.Root, cfg modules.Config, meta map[string]any) (*modules.Context, *[]string) {
	t.Helper()
	warnings := &[]string{}
	if meta == nil {
		meta = map[string]any{}
	}
	c := &modules.Context{
		Root: r, Config: cfg, Meta: meta, InstanceID: "iid-test",
		Distro: distro.Detect(r.ReadFile), Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Out: io.Discard, Modules: modules.Core(), Now: modtest.Now, Uptime: func() float64 { return 1 },
		Version: modtest.Version, Warn: func(m string) { *warnings = append(*warnings, m) },
	}
	return c, warnings
}

// Mode is the mode of the file at p in c's target.
func Mode(t *testing.T, c *modules.Context, p string) fs.FileMode {
	t.Helper()
	fi, err := c.Root.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode()
}
