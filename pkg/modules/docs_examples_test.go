package modules

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/cloudcfg/schema"
)

// TestDocsExamplesValidate: the examples of cloud-init's module docs
// (doc/module-docs/cc_<name>/example*.yaml, copied into
// testdata/docs/<name>/) pass cloudroot's schema without errors.
func TestDocsExamplesValidate(t *testing.T) {
	files, _ := filepath.Glob("testdata/docs/*/example*.yaml")
	if len(files) == 0 {
		t.Fatal("no examples")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, fd := range schema.Validate(b, f).Findings {
			if fd.Severity == schema.Error {
				t.Errorf("%s: %s: %s", f, fd.Path, fd.Message)
			}
		}
	}
}
