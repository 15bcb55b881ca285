package cloudcfg

import (
	"io/fs"
	"path"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// mapReader is a Reader over an in-memory tree (absolute paths).
type mapReader fstest.MapFS

func (m mapReader) ReadFile(p string) ([]byte, error) {
	return fs.ReadFile(fstest.MapFS(m), strings.TrimPrefix(p, "/"))
}

func (m mapReader) ReadDir(p string) ([]fs.DirEntry, error) {
	return fs.ReadDir(fstest.MapFS(m), strings.TrimPrefix(p, "/"))
}

// FuzzLoad: cloud.cfg, two cloud.cfg.d drop-ins, the runtime config and a
// kernel command line, all arbitrary. Load never panics and always returns
// a usable config; every problem and warning names the file (or source) it
// came from; loading is deterministic.
func FuzzLoad(f *testing.F) {
	f.Fuzz(func(t *testing.T, cloudCfg, confdA, confdB, runtime, cmdline string) {
		tree := mapReader{
			"etc/cloud/cloud.cfg":                  {Data: []byte(cloudCfg)},
			"etc/cloud/cloud.cfg.d/05_logging.cfg": {Data: []byte(confdA)},
			"etc/cloud/cloud.cfg.d/90_dpkg.cfg":    {Data: []byte(confdB)},
			"etc/cloud/cloud.cfg.d/README":         {Data: []byte("not a .cfg file: ignored\n: [")},
			"run/cloud-init/cloud.cfg":             {Data: []byte(runtime)},
		}
		sources := []string{PathCloudCfg, PathCloudCfgD, path.Join(PathCloudCfgD, "05_logging.cfg"),
			path.Join(PathCloudCfgD, "90_dpkg.cfg"), PathRuntimeCfg, SourceCmdline, SourceBuiltin}
		m, err := Load(LoadOptions{Root: tree, Cmdline: cmdline})
		if m == nil || m.Config == nil || m.System == nil {
			t.Fatalf("no usable config (err %v)", err)
		}
		if (err != nil) != (len(m.Problems) > 0) {
			t.Fatalf("error %v with %d problems", err, len(m.Problems))
		}
		for _, p := range m.Problems {
			if !containsString(sources, p.Source) {
				t.Fatalf("problem %q has source %q", p, p.Source)
			}
			if !strings.HasPrefix(p.Error(), p.Source+": ") {
				t.Fatalf("problem %q does not start with its source", p)
			}
		}
		for _, w := range m.Warnings {
			if !strings.HasPrefix(w, "/etc/cloud/") && !strings.HasPrefix(w, PathRuntimeCfg) {
				t.Fatalf("warning %q does not name its file", w)
			}
		}
		for _, s := range m.Sources {
			if strings.HasSuffix(s, "README") {
				t.Fatal("a file without .cfg was read")
			}
		}
		again, err2 := Load(LoadOptions{Root: tree, Cmdline: cmdline})
		if (err == nil) != (err2 == nil) || (err != nil && err.Error() != err2.Error()) {
			t.Fatalf("errors differ between two loads: %v / %v", err, err2)
		}
		if !cmp.Equal(m.Config, again.Config, cmpopts.EquateNaNs()) {
			t.Fatal("two loads of the same files differ")
		}
	})
}

func containsString(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
