package stages

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/state"
	"github.com/cloudroot/cloudroot/pkg/target"
)

type fakeSource struct {
	name     string
	check    bool
	fallback bool
}

func (f *fakeSource) Name() string { return f.name }
func (f *fakeSource) Get(context.Context, datasource.Env) (*datasource.Data, error) {
	return nil, datasource.ErrNotFound
}

type checkingSource struct{ fakeSource }

func (c *checkingSource) CheckInstanceID(env datasource.Env, d *datasource.Data) bool {
	return c.check && env.DMI.ProductUUID == d.InstanceID()
}
func (c *checkingSource) FallbackAllowed(*datasource.Data) bool { return c.fallback }

func cacheRoot(t *testing.T) *target.Root {
	t.Helper()
	r, err := target.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestDatasourceCacheRoundTrip(t *testing.T) {
	r := cacheRoot(t)
	if d, err := ReadDatasourceCache(r); d != nil || err != nil {
		t.Fatalf("empty root: %v, %v", d, err)
	}
	d := &datasource.Data{
		Name: "NoCloud", Subplatform: "seed-dir (/var/lib/cloud/seed/nocloud)", Platform: "nocloud", CloudName: "nocloud", Mode: "net",
		MetaData:      map[string]any{"instance-id": "iid-1", "local-hostname": "h"},
		UserData:      []byte("#cloud-config\npassword: secret\n"),
		NetworkConfig: map[string]any{"version": float64(2)},
		Files:         map[string][]byte{"/etc/x": []byte("x")},
	}
	if err := WriteInstanceLayout(r, cacheRoot(t), Layout{IID: "iid-1", Description: d.Description()}); err != nil {
		t.Fatal(err)
	}
	// As Init does: the raw data first, then the cache that refers to it.
	if err := r.WriteFile(state.InstanceDir("iid-1")+"/user-data.txt", d.UserData, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteFile(state.InstanceDir("iid-1")+"/vendor-data.txt", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteDatasourceCache(r, d); err != nil {
		t.Fatal(err)
	}
	if b, _ := r.ReadFile(state.InstanceDir("iid-1") + "/" + DatasourceCacheName); strings.Contains(string(b), "cGFzc3dvcmQ") || strings.Contains(string(b), "password") {
		t.Errorf("the cache holds another copy of the user-data:\n%s", b)
	}
	fi, err := os.Stat(filepath.Join(r.Dir(), state.InstanceDir("iid-1"), DatasourceCacheName))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("cache mode %v, want 0600 (it holds user-data)", fi.Mode().Perm())
	}
	got, err := ReadDatasourceCache(r)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(d, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}

	// A user-data file a power cut emptied is not taken for the answer.
	if err := r.WriteFile(state.InstanceDir("iid-1")+"/user-data.txt", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadDatasourceCache(r); err == nil || got != nil {
		t.Errorf("cache with an emptied user-data.txt = %v, %v; want an error", got, err)
	}

	// A damaged cache is an error naming the file; the boot searches anew.
	if err := os.WriteFile(filepath.Join(r.Dir(), state.InstanceDir("iid-1"), DatasourceCacheName), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if d, err := ReadDatasourceCache(r); d != nil || err == nil {
		t.Errorf("damaged cache: %v, %v", d, err)
	}
}

func TestCacheModeFor(t *testing.T) {
	r := cacheRoot(t)
	if m, _ := CacheModeFor(r, nil); m != CacheCheck {
		t.Errorf("default mode %s", m)
	}
	for _, v := range []any{true, "yes", "True", 1} {
		if m, why := CacheModeFor(r, map[string]any{"manual_cache_clean": v}); m != CacheTrust || why != "manual cache clean set from config" {
			t.Errorf("manual_cache_clean: %#v → %s (%s)", v, m, why)
		}
	}
	if m, _ := CacheModeFor(r, map[string]any{"manual_cache_clean": false}); m != CacheCheck {
		t.Errorf("manual_cache_clean false → %s", m)
	}
	if err := WriteInstanceLayout(r, cacheRoot(t), Layout{IID: "iid-1", Description: "DataSourceNoCloud"}); err != nil {
		t.Fatal(err)
	}
	// From the current instance's user-data, unless the system says no.
	if err := r.WriteFile(state.InstanceDir("iid-1")+"/cloud-config.txt", []byte("#cloud-config\nmanual_cache_clean: true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if m, _ := CacheModeFor(r, nil); m != CacheTrust {
		t.Errorf("manual_cache_clean in the instance's cloud-config → %s", m)
	}
	if m, _ := CacheModeFor(r, map[string]any{"manual_cache_clean": false}); m != CacheCheck {
		t.Errorf("system false over instance true → %s", m)
	}
	if err := r.Remove(state.InstanceDir("iid-1") + "/cloud-config.txt"); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteFile(state.InstanceDir("iid-1")+"/"+ManualCleanMarker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if m, why := CacheModeFor(r, nil); m != CacheTrust || why == "" {
		t.Errorf("marker → %s (%s)", m, why)
	}
}

func TestRestoreDatasource(t *testing.T) {
	cached := &datasource.Data{Name: "Checked", MetaData: map[string]any{"instance-id": "uuid-1"}}
	reg := func(check, fallback bool) datasource.Registry {
		return datasource.Registry{&fakeSource{name: "Plain"}, &checkingSource{fakeSource{name: "Checked", check: check, fallback: fallback}}}
	}
	same := datasource.Env{DMI: bootenv.DMI{ProductUUID: "uuid-1"}}
	other := datasource.Env{DMI: bootenv.DMI{ProductUUID: "uuid-2"}}
	for _, tc := range []struct {
		name   string
		cached *datasource.Data
		mode   CacheMode
		reg    datasource.Registry
		env    datasource.Env
		reused bool
		prefix string
	}{
		{"no cache", nil, CacheCheck, reg(true, false), same, false, "no cache found"},
		{"trust ignores the machine", cached, CacheTrust, reg(false, false), other, true, "restored from cache: "},
		{"check passes", cached, CacheCheck, reg(true, false), same, true, "restored from checked cache: "},
		{"check fails", cached, CacheCheck, reg(true, false), other, false, "cache invalid in datasource: "},
		{"source without a checker", &datasource.Data{Name: "Plain"}, CacheCheck, reg(true, false), same, false, "cache invalid in datasource: "},
		{"source not in this build", &datasource.Data{Name: "Gone"}, CacheCheck, reg(true, false), same, false, "cache invalid in datasource: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := RestoreDatasource(tc.cached, tc.mode, tc.reg, tc.env)
			if (got.Data != nil) != tc.reused {
				t.Errorf("reused = %v, want %v (%s)", got.Data != nil, tc.reused, got.Description)
			}
			if len(got.Description) < len(tc.prefix) || got.Description[:len(tc.prefix)] != tc.prefix {
				t.Errorf("description %q, want prefix %q", got.Description, tc.prefix)
			}
		})
	}
	if FallbackToCache(cached, CacheCheck, reg(false, true)) != cached {
		t.Error("fallback allowed but not used")
	}
	if FallbackToCache(cached, CacheCheck, reg(false, false)) != nil {
		t.Error("fallback used though not allowed")
	}
	if FallbackToCache(cached, CacheTrust, reg(false, true)) != nil {
		t.Error("fallback in trust mode (trust restores before searching)")
	}
}

// refreshingSource is a checked source whose platform changes metadata
// between boots.
type refreshingSource struct{ checkingSource }

func (*refreshingSource) RefreshesOnBoot() {}

func TestRefreshSource(t *testing.T) {
	reg := datasource.Registry{
		&checkingSource{fakeSource{name: "Checked", check: true}},
		&refreshingSource{checkingSource{fakeSource{name: "OpenStack", check: true}}},
	}
	restored := func(name string) Restored {
		return Restored{Data: &datasource.Data{Name: name, MetaData: map[string]any{"instance-id": "uuid-1"}}}
	}
	for _, tc := range []struct {
		name     string
		restored Restored
		mode     CacheMode
		want     string
	}{
		{"refreshing source, checked cache", restored("OpenStack"), CacheCheck, "OpenStack"},
		{"manual_cache_clean trusts the cache", restored("OpenStack"), CacheTrust, ""},
		{"source without refresh", restored("Checked"), CacheCheck, ""},
		{"nothing restored", Restored{}, CacheCheck, ""},
		{"source not in this build", restored("Gone"), CacheCheck, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, ok := RefreshSource(tc.restored, tc.mode, reg)
			got := ""
			if ok {
				got = src.Name()
			}
			if got != tc.want {
				t.Errorf("RefreshSource = %q (%v), want %q", got, ok, tc.want)
			}
		})
	}
}

// TestWriteStatusRootFull: when the root cannot take status.json, /run
// holds it, and the next stage reads it back from there.
func TestWriteStatusRootFull(t *testing.T) {
	r := cacheRoot(t)
	// /var/lib/cloud is a file: nothing can be created under it.
	if err := r.WriteFile("/var/lib/cloud", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	st := state.NewStatus()
	st.Get(state.StageInit).AddRecoverable("WARNING", "marker")
	err := WriteStatus(r, r, st)
	if err == nil || !strings.Contains(err.Error(), "kept in "+state.RunStatusLink) {
		t.Fatalf("WriteStatus = %v, want the fallback reported", err)
	}
	fi, err := r.Lstat(state.RunStatusLink)
	if err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("%s: %v, %v; want a regular file", state.RunStatusLink, fi, err)
	}
	got := ReadStatus(r)
	if b, _ := json.Marshal(got); !strings.Contains(string(b), "marker") {
		t.Errorf("ReadStatus did not find the status kept in /run: %s", b)
	}
}
