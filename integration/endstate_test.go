package integration

// TestDebianEndStateVsCloudInit boots build/debian-12.img (cloudroot) and
// its twin build/debian-12-cloud-init.img (Debian's cloud-init 22.4) once
// each with the same NoCloud seed (TestDebian's user-data and network
// config, one instance-id), kernel command line and QEMU flags, reads the
// end-state manifest of each powered-off disk (harness.EndState: accounts,
// keys, sudoers, hostname, written files, host key types, network files,
// fstab, the /var/lib/cloud tree, status.json and result.json) and diffs
// them. Every difference must be explained by an entry of
// testdata/endstate-allowlist.json (A is cloudroot, B cloud-init); any
// other fails the test. Both manifests and the diff are written to
// build/integration/endstate-*.txt.
//
// It needs the twin (`just endstate` builds it); without it the test skips.
//
// With CLOUDROOT_DEBIAN_SUITE=trixie (`just endstate suite=trixie`) it
// compares build/debian-13.img with its twin (Debian 13's cloud-init) against
// testdata/endstate-allowlist-trixie.json instead.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudroot/cloudroot/integration/harness"
)

// endStateIID is the instance-id both images boot with.
const endStateIID = "iid-debian-endstate"

// endStateAllowlist holds the expected differences, each with a reason.
const endStateAllowlist = "testdata/endstate-allowlist.json"

// debianEndStateSpec names the files TestDebian's user-data writes, or has
// written by bootcmd and runcmd, beyond harness.EndState's fixed set.
var debianEndStateSpec = harness.EndStateSpec{Files: []string{
	"/etc/cloudroot-test/early.txt",
	"/usr/local/sbin/cloudroot-facts",
	"/home/alice/deferred.txt",
	"/var/lib/cloudroot-test/bootcmd.txt",
	"/var/lib/cloudroot-test/runcmd.txt",
	"/var/lib/cloudroot-test/hostname.txt",
	"/var/lib/cloudroot-test/hostname-f.txt",
	"/var/lib/cloudroot-test/id-alice.txt",
	"/var/lib/cloudroot-test/getent-cloudops.txt",
	"/var/lib/cloudroot-test/sudo-alice.txt",
	"/var/lib/cloudroot-test/ssh-active.txt",
	"/var/lib/cloudroot-test/failed.txt",
}}

func TestDebianEndStateVsCloudInit(t *testing.T) {
	t.Parallel()
	a := artifacts(t)
	images := debianTwins(a)
	if miss := images.missing(); miss != "" {
		t.Skip(miss + "; `just endstate` builds both and runs this test")
	}
	list := endStateAllowlist
	if s := debianSuite(); s != "bookworm" {
		list = "testdata/endstate-allowlist-" + s + ".json"
	}
	b, err := os.ReadFile(list)
	if err != nil {
		t.Fatal(err)
	}
	allow, err := harness.ParseAllowlist(b)
	if err != nil {
		t.Fatal(err)
	}
	outDir := filepath.Join(a.Dir, "integration")
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		t.Fatal(err)
	}
	manifests := make([]harness.Manifest, len(images))
	for i, im := range images {
		r, d := bootDebianTwin(t, a, im, endStateIID, "endstate-"+im.name)
		t.Logf("%s: QEMU start to power-off %.1fs", im.name, r.Elapsed.Seconds())
		m, err := harness.EndState(d, debianEndStateSpec)
		if err != nil {
			t.Errorf("%s end state: %v", im.name, err)
		}
		// What only the running guest saw: cloud-init status after the final stage.
		if s, err := d.ReadString("/var/lib/cloudroot-test/status-long.txt"); err == nil {
			m["guest:cloud-init status"] = statusSummary(s)
		} else {
			m["guest:cloud-init status"] = "not recorded"
		}
		manifests[i] = m
		p := filepath.Join(outDir, "endstate-"+im.name+".txt")
		if err := os.WriteFile(p, []byte(m.String()), 0o644); err != nil {
			t.Error(err)
		}
		t.Logf("%s: %d facts in %s", im.name, len(m), p)
	}
	diffs, unused := harness.Allow(harness.DiffManifests(manifests[0], manifests[1]), allow)
	var report strings.Builder
	fmt.Fprintf(&report, "A = %s, B = %s\n", images[0].name, images[1].name)
	bad := 0
	for _, d := range diffs {
		if d.Allowed {
			fmt.Fprintf(&report, "allowed (%s): %s\n", d.AllowReason, d)
			continue
		}
		bad++
		fmt.Fprintf(&report, "UNEXPECTED: %s\n", d)
	}
	for _, u := range unused {
		fmt.Fprintf(&report, "allowlist entry matched nothing: %s (%s)\n", u.Key, u.When)
	}
	p := filepath.Join(outDir, "endstate-diff.txt")
	if err := os.WriteFile(p, []byte(report.String()), 0o644); err != nil {
		t.Error(err)
	}
	t.Logf("%d differences, %d allowed (%s):\n%s", len(diffs), len(diffs)-bad, p, report.String())
	if bad > 0 {
		t.Errorf("%d end-state differences between cloudroot and cloud-init that %s does not explain (see above)", bad, list)
	}
}

// statusSummary keeps the lines of `cloud-init status --long` (and the
// recorded exit code) that both implementations share: status, errors
// and the exit code; versions, times and detail wording are left out.
func statusSummary(s string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "status:") || strings.HasPrefix(l, "rc=") || strings.HasPrefix(l, "errors:") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}
