package dstest

import (
	"testing"
	"time"

	"github.com/cloudroot/cloudroot/pkg/datasource"
)

// Doc is a source reading a JSON document at its `metadata_url`
// (internal/jsondoc's clouds and those like them), for the tests they all
// share: Env, Golden and Conform.
type Doc struct {
	Source datasource.Source
	// Path is the document's path on the server.
	Path string
}

// Env is the source's Env, the network up, with `metadata_url` the
// document of a service at base.
func (d Doc) Env(base string) datasource.Env {
	return datasource.Env{NetworkUp: true, Budget: 5 * time.Second,
		Config: map[string]any{d.Source.Name(): map[string]any{"metadata_url": base + d.Path}}}
}

// Golden is GoldenTrees with Env, each Get making requests requests.
func (d Doc) Golden(t *testing.T, differs map[string]Differs, requests int) {
	t.Helper()
	GoldenTrees(t, Trees{Source: d.Source, Env: func(_, base string) datasource.Env { return d.Env(base) }, Differs: differs, Requests: requests})
}

// Conform is Conform with Env for the tree root, a service answering
// JSON objects, with the document at doc (Path when "") served cut in
// half, and the source's own broken services.
func (d Doc) Conform(t *testing.T, root, doc string, broken ...Broken) {
	t.Helper()
	if doc == "" {
		doc = d.Path
	}
	Conform(t, Metadata{Source: d.Source, Env: d.Env, Root: root, Doc: doc, JSON: true, Broken: broken})
}
