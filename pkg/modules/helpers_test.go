package modules

import (
	"bytes"
	"io"
	"log/slog"
	"os"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/distro"
	"github.com/cloudroot/cloudroot/pkg/modules/internal/modtest"
)

// testContext returns a module context on a fresh temp root holding
// files: famtest.NewContext for this package's own tests (which cannot
// import famtest), resolving names in Core().
func testContext(t *testing.T, cfg Config, files map[string]string) (*Context, *modtest.Recorder, *bytes.Buffer) {
	t.Helper()
	rr := &modtest.Recorder{}
	root := modtest.TempRoot(t, files, rr)
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
		Now:        modtest.Now,
		Uptime:     func() float64 { return 12.345 },
		Version:    modtest.Version,
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
