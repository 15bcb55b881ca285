package modules

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"

	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
)

// FuzzDecodeModuleKeys feeds any cloud-config to the decoders of
// phone_home, keys_to_console and ssh_authkey_fingerprints: none may
// panic or modify the config (pkg/modules/pkgmgr fuzzes its own).
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
		decodePhoneHome(typedConfig[phoneHomeKeys](c))
		decodeKeysToConsole(typedConfig[keysToConsoleKeys](c))
		decodeAuthkey(typedConfig[authkeyKeys](c))
		if !cmp.Equal(orig, map[string]any(cfg)) {
			t.Fatal("config modified")
		}
	})
}
