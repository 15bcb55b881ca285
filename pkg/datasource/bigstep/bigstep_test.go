package bigstep

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/dstest"
)

const path = "/metadata/document"

// env has a target root whose seed file names url.
func env(url string) datasource.Env {
	return datasource.Env{NetworkUp: true, Budget: 5 * time.Second,
		Root: fstest.MapFS{SeedPath: {Data: []byte(url + "\n")}}}
}

// upstreamDiffers are the fields of each case's upstream golden where
// cloudroot deliberately differs (docs/datasources.md).
var upstreamDiffers = map[string]dstest.Differs{
	"full":    {"subplatform": bigstepURL},
	"minimal": {"subplatform": bigstepURL},
}

// bigstepURL: cloud-init reads the seed's url file without trimming it.
const bigstepURL = "cloud-init's subplatform keeps the url file's line end; cloudroot trims it"

func TestGolden(t *testing.T) {
	dstest.GoldenTrees(t, dstest.Trees{
		Source:   &Source{},
		Env:      func(_, base string) datasource.Env { return env(base + path) },
		Differs:  upstreamDiffers,
		Requests: 1,
	})
}

func TestSeed(t *testing.T) {
	for _, tc := range []struct {
		name string
		root fstest.MapFS
		want error
		msg  string
	}{
		{"no root", nil, datasource.ErrNotFound, ""},
		{"no seed", fstest.MapFS{"var/lib/cloud/data/seed/other": {Data: []byte("x")}}, datasource.ErrNotFound, ""},
		{"empty seed", fstest.MapFS{SeedPath: {Data: []byte("\n")}}, nil, "not an http(s) URL"},
		{"not http", fstest.MapFS{SeedPath: {Data: []byte("file:///etc/passwd")}}, nil, "not an http(s) URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := datasource.Env{NetworkUp: false}
			if tc.root != nil {
				e.Root = tc.root
			}
			_, err := (&Source{}).Get(context.Background(), e)
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if tc.msg != "" && (err == nil || !strings.Contains(err.Error(), tc.msg) || errors.Is(err, datasource.ErrNotFound)) {
				t.Fatalf("err = %v, want containing %q", err, tc.msg)
			}
		})
	}
}

// TestConform: absent, slow, 404, 500, truncated, and this document's
// own broken forms.
func TestConform(t *testing.T) {
	dstest.Conform(t, dstest.Metadata{
		Source: &Source{},
		Env:    func(base string) datasource.Env { return env(base + path) },
		Root:   "testdata/full/tree",
		Doc:    path,
		JSON:   true,
		Broken: []dstest.Broken{
			{Name: "metadata not an object", Code: 200, Body: `{"metadata": "x"}`, Want: "not an object"},
			{Name: "no instance-id", Code: 200, Body: `{"metadata": {"local-hostname": "h"}}`, Want: "no instance-id"},
		},
	})
}

func FuzzBuild(f *testing.F) {
	for _, c := range []string{"full", "minimal"} {
		b, _ := os.ReadFile(filepath.Join("testdata", c, "tree", path))
		f.Add(b)
	}
	f.Add([]byte(`{"metadata": {"instance-id": 1e30, "public-keys": "k"}, "userdata_raw": {"a": 1}, "vendordata_raw": [1]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := Build("http://x", b)
		if err != nil {
			return
		}
		if d.InstanceID() == "" {
			t.Fatal("no instance-id")
		}
		if _, err := json.Marshal(dstest.ViewOf(d)); err != nil {
			t.Fatal(err)
		}
	})
}
