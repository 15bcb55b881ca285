package modules

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"

	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
	"github.com/cloudroot/cloudroot/pkg/modules/internal/modtest"
)

// FuzzDecodeModuleKeys feeds any cloud-config to phone_home's decoder: it
// may not panic or modify the config (the families fuzz their own).
func FuzzDecodeModuleKeys(f *testing.F) {
	for _, g := range []string{"testdata/docs/*/example*.yaml"} {
		files, _ := filepath.Glob(g)
		for _, p := range files {
			b, _ := os.ReadFile(p)
			f.Add(b)
		}
	}
	f.Add([]byte("packages: [[a, b, c], {apt: x}, 3, {snap: [[a]]}]\nphone_home: {url: 1, post: 7, tries: x}"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var cfg map[string]any
		if yaml.Unmarshal(b, &cfg) != nil || cfg == nil {
			return
		}
		orig := pyval.DeepCopy(cfg)
		c := Config(cfg)
		decodePhoneHome(modtest.Typed[phoneHomeKeys](c))
		if !cmp.Equal(orig, map[string]any(cfg)) {
			t.Fatal("config modified")
		}
	})
}
