package stages

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/state"
	"github.com/cloudroot/cloudroot/pkg/target"
)

// FuzzReadDatasourceCache: whatever the cache file holds (a truncated
// write, another version, garbage), reading it never panics and either
// gives an answer with a datasource name or an error naming the file; an
// answer survives being written back and read again unchanged, and the
// restore decisions can be taken on it.
func FuzzReadDatasourceCache(f *testing.F) {
	r, err := target.New(f.TempDir(), target.WithDeferredSync())
	if err != nil {
		f.Fatal(err)
	}
	run, err := target.New(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	if err := WriteInstanceLayout(r, run, Layout{IID: "iid-1", Description: "DataSourceNoCloud [seed=/dev/sr0]"}); err != nil {
		f.Fatal(err)
	}
	p := state.InstanceDir("iid-1") + "/" + DatasourceCacheName
	reg := datasource.Registry{&checkingSource{fakeSource{name: "NoCloud", check: true, fallback: true}}}
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := r.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		d, err := ReadDatasourceCache(r)
		if err != nil {
			if d != nil {
				t.Fatal("data and error")
			}
			if !strings.Contains(err.Error(), DatasourceCacheName) {
				t.Fatalf("error %q does not name the cache file", err)
			}
			return
		}
		if d == nil || d.Name == "" {
			t.Fatalf("answer without a datasource name: %+v", d)
		}
		_ = d.Description()
		_ = d.InstanceID()
		for _, mode := range []CacheMode{CacheCheck, CacheTrust} {
			RestoreDatasource(d, mode, reg, datasource.Env{})
			FallbackToCache(d, mode, reg)
		}
		out, err := json.Marshal(dsCache{Version: dsCacheVersion, Data: d})
		if err != nil {
			t.Fatalf("re-encoding: %v", err)
		}
		if err := r.WriteFile(p, out, 0o600); err != nil {
			t.Fatal(err)
		}
		again, err := ReadDatasourceCache(r)
		if err != nil {
			t.Fatalf("reading back %s: %v", out, err)
		}
		if diff := cmp.Diff(d, again); diff != "" {
			t.Fatalf("round trip (-first +again):\n%s", diff)
		}
	})
}
