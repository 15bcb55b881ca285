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

// TestSchemaRejects: the schema entries for these modules are not empty.
func TestSchemaRejects(t *testing.T) {
	for _, doc := range []string{
		"phone_home: {post: bogus, url: 'http://x/'}\n",
		"phone_home: {post: all}\n",
		"packages: [[a, b, c]]\n",
		"packages: [{apt: a}]\n",
		"package_update: 3\n",
		"ssh: {emit_keys_to_console: 'no'}\n",
		"ssh_fp_console_blacklist: [a, a]\n",
		"authkey_hash: [md5]\n",
	} {
		errs := 0
		for _, fd := range schema.Validate([]byte(doc), "t").Findings {
			if fd.Severity == schema.Error {
				errs++
			}
		}
		if errs == 0 {
			t.Errorf("%q passed the schema", doc)
		}
	}
}
