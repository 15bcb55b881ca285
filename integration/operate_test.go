package integration

import (
	"regexp"
	"strings"
	"testing"

	"github.com/cloudroot/cloudroot/integration/harness"
)

// TestOperateInGuest: after the final stage the test rootfs runs what an
// operator would (scripts/mkrootfs.sh, cloudroot.test.poweroff):
// `cloud-init status --wait --long`, `cloud-id --long` (the argv0 link),
// `cloud-init analyze blame` and `analyze plot`; each answers inside the
// booted guest, blame lists the boot's modules and the SVG on disk has a
// bar per stage and module.
func TestOperateInGuest(t *testing.T) {
	t.Parallel()
	v := newVM(t)
	ud := "#cloud-config\nruncmd:\n  - echo operate\n"
	seed := v.seed(map[string][]byte{"meta-data": meta("iid-operate", "operate"), "user-data": []byte(ud)}, harness.SeedISO)
	r := v.boot(harness.BootOptions{Seed: seed, SeedKind: harness.SeedCDROMSCSI, Append: []string{"cloudroot.test.poweroff"}})
	wantPoweredOff(t, r)
	wantConsole(t, r, "cloudroot-rootfs| status: done", "cloudroot-rootfs| cloud-init status rc=0",
		"cloudroot-rootfs| nocloud\tNone", "cloudroot-rootfs| cloud-id --long rc=0",
		"cloudroot-rootfs| cloud-init analyze blame rc=0", "cloudroot-rootfs| cloud-init analyze plot rc=0")
	// write_files is not among them: without its key it does not run (26.x's activation).
	for _, m := range []string{"init-network/config-users_groups", "modules-config/config-runcmd", "modules-final/config-scripts_user"} {
		wantConsoleMatch(t, r, `cloudroot-rootfs\|\s+\d+\.\d{5}s \(`+regexp.QuoteMeta(m)+`\)`)
	}
	d := v.image()
	svg := d.read("/var/log/cloudroot-boot.svg")
	for _, bar := range []string{"init-local", "init-network", "modules-config", "modules-final",
		"init-local/search-NoCloud", "init-network/config-users_groups", "modules-config/config-runcmd", "modules-final/config-final_message",
		"initramfs: drivers", "switch_root"} {
		if !strings.Contains(svg, `data-name="`+bar+`"`) {
			t.Errorf("boot.svg has no bar for %s", bar)
		}
	}
}
