package userdata

import (
	"context"
	"encoding/json"
	"github.com/cloudroot/cloudroot/pkg/internal/golden"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// caseOptions is testdata/<case>/options.json.
type caseOptions struct {
	Source       string            `json:"source"`
	InstanceData map[string]any    `json:"instance_data"`
	LaunchIndex  *int              `json:"launch_index"`
	Includes     map[string]string `json:"includes"` // URL → body; others are 404
	Cached       map[string]string `json:"cached"`   // include-once cache content
	MaxSize      int64             `json:"max_size"`
}

type scriptView struct {
	Name    string `json:"name"`
	Part    string `json:"part"`
	Content string `json:"content"`
}

type partView struct {
	Type        string            `json:"type"`
	Filename    string            `json:"filename"`
	Content     string            `json:"content"`
	MergeType   string            `json:"merge_type,omitempty"`
	LaunchIndex *int              `json:"launch_index,omitempty"`
	Template    string            `json:"template,omitempty"`
	Headers     map[string]string `json:"headers,omitempty"`
}

type patchView struct {
	Part  string `json:"part"`
	After int    `json:"after"`
	Patch string `json:"patch"`
}

type configView struct {
	Part        string         `json:"part"`
	Config      map[string]any `json:"config"`
	MergeHow    any            `json:"merge_how,omitempty"`
	MergeHeader string         `json:"merge_header,omitempty"`
	Null        bool           `json:"null,omitempty"`
}

// resultView is Result serialised for golden files.
type resultView struct {
	Parts           []partView   `json:"parts"`
	CloudConfigs    []configView `json:"cloud_configs,omitempty"`
	JSONPatches     []patchView  `json:"json_patches,omitempty"`
	InstanceScripts []scriptView `json:"instance_scripts,omitempty"`
	PerBoot         []scriptView `json:"per_boot,omitempty"`
	PerInstance     []scriptView `json:"per_instance,omitempty"`
	PerOnce         []scriptView `json:"per_once,omitempty"`
	Boothooks       []scriptView `json:"boothooks,omitempty"`
	Warnings        []string     `json:"warnings,omitempty"`
	Notices         []string     `json:"notices,omitempty"`
	Errors          []string     `json:"errors,omitempty"`
	Files           []string     `json:"files,omitempty"`
}

func view(r *Result) resultView {
	v := resultView{Parts: []partView{}, Warnings: r.Warnings, Notices: r.Notices}
	for _, p := range r.Parts {
		v.Parts = append(v.Parts, partView{p.Type, p.Filename, string(p.Content), p.MergeType, p.LaunchIndex, p.Template, p.Headers})
	}
	for _, c := range r.CloudConfigs {
		v.CloudConfigs = append(v.CloudConfigs, configView(c))
	}
	for _, p := range r.JSONPatches {
		v.JSONPatches = append(v.JSONPatches, patchView{p.Part, p.After, string(p.Patch)})
	}
	sv := func(l []Script) []scriptView {
		var out []scriptView
		for _, s := range l {
			out = append(out, scriptView{s.Name, s.Part, string(s.Content)})
		}
		return out
	}
	v.InstanceScripts = sv(r.InstanceScripts)
	v.PerBoot, v.PerInstance, v.PerOnce = sv(r.PerBoot), sv(r.PerInstance), sv(r.PerOnce)
	v.Boothooks = sv(r.Boothooks)
	for _, e := range r.Errors {
		v.Errors = append(v.Errors, e.Error())
	}
	for _, f := range r.Files("i-0123", r.Source == "vendor-data") {
		v.Files = append(v.Files, f.Path)
	}
	return v
}

// mapCache is an in-memory Cache.
type mapCache map[string][]byte

func (m mapCache) Get(u string) ([]byte, bool) { b, ok := m[u]; return b, ok }
func (m mapCache) Put(u string, b []byte) error {
	m[u] = b
	return nil
}

// fakeFetch serves a map of URL → body; other URLs are 404.
func fakeFetch(m map[string]string) func(context.Context, string) ([]byte, error) {
	return func(_ context.Context, u string) ([]byte, error) {
		if b, ok := m[u]; ok {
			return []byte(b), nil
		}
		return nil, &HTTPError{URL: u, Status: 404}
	}
}

func loadCase(t testing.TB, dir string) ([]byte, string, Options) {
	t.Helper()
	in, err := os.ReadFile(filepath.Join(dir, "input"))
	if err != nil {
		t.Fatal(err)
	}
	var co caseOptions
	if b, err := os.ReadFile(filepath.Join(dir, "options.json")); err == nil {
		if err := json.Unmarshal(b, &co); err != nil {
			t.Fatalf("%s/options.json: %v", dir, err)
		}
	}
	if co.Source == "" {
		co.Source = "user-data"
	}
	cache := mapCache{}
	for u, b := range co.Cached {
		cache[u] = []byte(b)
	}
	return in, co.Source, Options{
		Fetch:            fakeFetch(co.Includes),
		IncludeOnceCache: cache,
		InstanceData:     co.InstanceData,
		LaunchIndex:      co.LaunchIndex,
		MaxSize:          co.MaxSize,
	}
}

func TestGolden(t *testing.T) {
	dirs, err := filepath.Glob("testdata/*")
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range dirs {
		if _, err := os.Stat(filepath.Join(dir, "input")); err != nil {
			continue
		}
		t.Run(filepath.Base(dir), func(t *testing.T) {
			in, source, opts := loadCase(t, dir)
			res, err := Process(context.Background(), source, in, opts)
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.MarshalIndent(view(res), "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			wantFile := filepath.Join(dir, "want.json")
			if golden.Update() {
				if err := os.WriteFile(wantFile, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(wantFile)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("%s (-want +got):\n%s", wantFile, diff)
			}
		})
	}
}
