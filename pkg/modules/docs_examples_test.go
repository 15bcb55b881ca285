package modules

import (
	"context"
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

// TestDocsExamplesApply: the examples of modules that need no network
// run on a Debian target without error (pkg/modules/pkgmgr runs its
// own).
func TestDocsExamplesApply(t *testing.T) {
	mods := map[string]Module{
		"keys_to_console":          KeysToConsole,
		"ssh_authkey_fingerprints": SSHAuthkeyFingerprints,
	}
	for name, m := range mods {
		files, _ := filepath.Glob("testdata/docs/" + name + "/example*.yaml")
		if len(files) == 0 {
			t.Errorf("%s: no examples", name)
		}
		for _, f := range files {
			b, _ := os.ReadFile(f)
			c, _, _ := testContext(t, yamlCfg(t, string(b)), hostKeyRoot())
			c.Root.WriteFile("/usr/bin/apt-get", nil, 0o755)
			if err := m.Run(context.Background(), c); err != nil {
				t.Errorf("%s: %v", f, err)
			}
		}
	}
}
