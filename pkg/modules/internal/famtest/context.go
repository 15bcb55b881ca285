package famtest

import (
	"bytes"
	"io"
	"log/slog"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/distro"
	"github.com/cloudroot/cloudroot/pkg/modules"
	"github.com/cloudroot/cloudroot/pkg/modules/internal/modtest"
)

// NewContext is a module context on a fresh temp root holding files
// (paths relative to the root), its commands recorded, resolving module
// names in mods; the buffer is the context's Out. pkg/modules' own tests
// have the same in testContext (they cannot import this package: it
// imports pkg/modules); both build on modtest.TempRoot and
// modtest.Recorder.
func NewContext(t *testing.T, cfg modules.Config, files map[string]string, mods []modules.Module) (*modules.Context, *modtest.Recorder, *bytes.Buffer) {
	t.Helper()
	rr := &modtest.Recorder{}
	root := modtest.TempRoot(t, files, rr)
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
		Now:        modtest.Now,
		Uptime:     func() float64 { return 12.345 },
		Version:    modtest.Version,
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
