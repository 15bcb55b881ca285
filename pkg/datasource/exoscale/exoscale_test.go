package exoscale

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/dstest"
)

func env(base string, pwPort int) datasource.Env {
	return datasource.Env{NetworkUp: true, Budget: 5 * time.Second,
		Config: map[string]any{"Exoscale": map[string]any{"metadata_url": base, "password_server_port": pwPort}}}
}

// upstreamDiffers are the fields of each case's upstream golden where
// cloudroot deliberately differs (docs/datasources.md).
var upstreamDiffers = map[string]dstest.Differs{
	"new-password": {"config_obj": "cloudroot trims the line end the password server sends; cloud-init keeps it in `password` (chpasswd reads lines, so the password set is the same)"},
}

func TestGolden(t *testing.T) {
	for _, name := range dstest.Cases(t, "testdata") {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("testdata", name)
			var spec struct {
				PasswordReply string `json:"password_reply"`
				Acknowledged  bool   `json:"acknowledged"`
			}
			dstest.ReadJSON(t, filepath.Join(dir, "case.json"), &spec)
			var acks atomic.Int32
			srv := dstest.Serve(t, filepath.Join(dir, "tree"), dstest.PasswordServer(t, "/"+APIVersion+"/", spec.PasswordReply, &acks))
			d, err := (&Source{}).Get(context.Background(), env(srv.URL, dstest.Port(t, srv)))
			dstest.Upstream(t, dir, d, err, srv.URL, upstreamDiffers[name])
			if err != nil {
				t.Fatal(err)
			}
			dstest.Golden(t, filepath.Join(dir, "want.json"), d, srv.URL)
			if got := acks.Load() == 1; got != spec.Acknowledged || acks.Load() > 1 {
				t.Errorf("%d saved_password acknowledgements, want acknowledged=%v", acks.Load(), spec.Acknowledged)
			}
		})
	}
}

// TestPasswords: the password server cases Exoscale shares with the
// other source that asks it.
func TestPasswords(t *testing.T) {
	dstest.ConformPasswords(t, dstest.Passwords{
		Source: func(url string, pwPort int) datasource.Source { return &Source{URL: url, PasswordPort: pwPort} },
		Env:    env, Tree: "testdata/new-password/tree", Path: "/" + APIVersion + "/",
	})
}

func TestPasswordURL(t *testing.T) {
	for base, want := range map[string]string{
		DefaultMetadataURL:             DefaultMetadataURL + ":8080/1.0/",
		"http://127.0.0.1:1234/":       "http://127.0.0.1:8080/1.0/",
		"http://[fd00::1]:80/x?y=z":    "http://[fd00::1]:8080/1.0/",
		"http://metadata.example/1.0/": "http://metadata.example:8080/1.0/",
	} {
		if got, err := PasswordURL(base, DefaultPasswordPort); err != nil || got != want {
			t.Errorf("PasswordURL(%q) = %q, %v; want %q", base, got, err, want)
		}
	}
	if _, err := PasswordURL("no-scheme", 1); err == nil {
		t.Error("PasswordURL accepted a URL without host")
	}
}

// TestConform: the cases every metadata-URL source shares, and those of
// an EC2-style tree.
func TestConform(t *testing.T) {
	dstest.Conform(t, dstest.Metadata{
		Source: &Source{},
		Env:    func(base string) datasource.Env { return env(base, 1) },
		Root:   "testdata/saved-password/tree",
		Broken: dstest.TreeBroken,
	})
}

func FuzzPassword(f *testing.F) {
	dstest.FuzzPassword(f, ParsePassword, func(id, pw string) (*datasource.Data, error) {
		return Build(Input{MetaData: map[string]any{"instance-id": id}, Password: pw})
	})
}
