package modules

// The golden harness (pkg/modules/internal/modtest) for the modules left
// in this package; the families have their own adapter.

import (
	"io"
	"log/slog"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/distro"
	"github.com/cloudroot/cloudroot/pkg/modules/internal/modtest"
)

// accountsNow is the harness's clock.
var accountsNow = modtest.Now()

// goldenRun is a case's target and recorders with the Context built on
// them.
type goldenRun struct {
	*modtest.Env
	c *Context
}

// goldenSetup builds the case's target and context.
func goldenSetup(t *testing.T, dir string) *goldenRun {
	t.Helper()
	e := modtest.Setup(t, dir)
	c := &Context{
		Root: e.Target, Config: Config(e.Config), Meta: map[string]any{"instance-id": "iid-test"}, InstanceID: "iid-test",
		Distro: distro.Detect(e.Target.ReadFile), Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Out: e.Out, Console: e.Console, Now: modtest.Now, Uptime: func() float64 { return 1 },
		Version: modtest.Version, Warn: e.Warn, Deprecated: e.Deprecated, Booted: e.Booted,
	}
	return &goldenRun{Env: e, c: c}
}

// run runs m and reports what it did.
func (g *goldenRun) run(t *testing.T, m Module) string {
	t.Helper()
	return g.Report(t, m.Name, m.Run(t.Context(), g.c))
}

// goldenCase runs module m on the case in dir and returns the report.
func goldenCase(t *testing.T, m Module, dir string) string {
	t.Helper()
	return goldenSetup(t, dir).run(t, m)
}

// runGolden runs every case of module m.
func runGolden(t *testing.T, m Module) {
	modtest.Golden(t, m.Name, func(t *testing.T, dir string) string { return goldenCase(t, m, dir) })
}

var (
	snapshot   = modtest.Snapshot
	appendFile = modtest.AppendFile
	exists     = modtest.Exists
	tmpPath    = modtest.TmpPath
)

func TestModuleGolden(t *testing.T) {
	for _, m := range []Module{Locale, CACerts, Keyboard, SeedRandom, ResolvConf, Rsyslog} {
		t.Run(m.Name, func(t *testing.T) { runGolden(t, m) })
	}
}
