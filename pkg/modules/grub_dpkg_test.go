package modules

import (
	"context"
	"slices"
	"testing"
)

// TestGrubDpkgEnabled: enabled absent is False (cloud-init's
// mycfg.get("enabled", False)), while enabled: null is not false for
// util.is_false (str(None) is "None"), so the module runs.
func TestGrubDpkgEnabled(t *testing.T) {
	for _, tt := range []struct {
		cfg  string
		runs bool
	}{
		{"grub_dpkg: {}\n", false},
		{"grub_dpkg: {enabled: null, 'grub-pc/install_devices': /dev/sda}\n", true},
		{"grub_dpkg: {enabled: false, 'grub-pc/install_devices': /dev/sda}\n", false},
		{"grub_dpkg: 7\ngrub-dpkg: {enabled: true}\n", false},
		{"grub-dpkg: {enabled: true, 'grub-pc/install_devices': /dev/sda}\n", true},
	} {
		t.Run(tt.cfg, func(t *testing.T) {
			c, rec, _ := testContext(t, yamlCfg(t, tt.cfg), nil)
			if err := GrubDpkg.Run(context.Background(), c); err != nil {
				t.Fatal(err)
			}
			ran := slices.ContainsFunc(rec.Calls, func(argv []string) bool { return argv[0] == "debconf-set-selections" })
			if ran != tt.runs {
				t.Errorf("debconf-set-selections run: %v, want %v (calls %v)", ran, tt.runs, rec.Calls)
			}
		})
	}
}
