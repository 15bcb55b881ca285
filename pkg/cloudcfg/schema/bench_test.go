package schema

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/yaml11"
)

// benchDoc is the document the schema benchmarks check: cloud-init's
// largest example (doc/examples/cloud-config.txt of CLOUDINIT_SRC, as
// `just bench-startup` uses), else this package's largest test document.
func benchDoc(b *testing.B) []byte {
	b.Helper()
	p := filepath.Join("..", "..", "cli", "testdata", "schema", "annotate-valid", "cfg.yaml")
	if src := os.Getenv("CLOUDINIT_SRC"); src != "" {
		p = filepath.Join(src, "doc", "examples", "cloud-config.txt")
	}
	doc, err := os.ReadFile(p)
	if err != nil {
		b.Skipf("no benchmark document: %v", err)
	}
	return doc
}

// BenchmarkCompile is what every `schema` process pays once before it
// validates anything.
func BenchmarkCompile(b *testing.B) {
	for b.Loop() {
		if _, err := compileSchema(true); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkValidate is one check of a document with the schema compiled.
func BenchmarkValidate(b *testing.B) {
	doc := benchDoc(b)
	if _, err := compiled(); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		Validate(doc, "cloud-config.txt")
	}
}

// BenchmarkCompilePartial compiles the partial schema of the benchmark
// document's keys, pruned to its keys: what Validate compiles in a new
// process.
func BenchmarkCompilePartial(b *testing.B) {
	doc := benchDoc(b)
	parts, err := splitSchema()
	if err != nil {
		b.Fatal(err)
	}
	v, _, err := yaml11.Load("", doc)
	if err != nil {
		b.Fatal(err)
	}
	var keys []string
	for k := range v.(map[string]any) {
		if _, ok := parts.props[k]; ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	inst := instanceKeys(v)
	for b.Loop() {
		if _, err := compilePartial(parts, keys, inst, true); err != nil {
			b.Fatal(err)
		}
	}
}
