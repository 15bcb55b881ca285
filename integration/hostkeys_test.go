package integration

import (
	"regexp"
	"strings"
	"testing"

	"github.com/cloudroot/cloudroot/integration/harness"
)

const hostKeysUserData = `#cloud-config
hostname: keys
`

// wantHostKeys checks the default host-key types are on the disk with
// cloud-init's modes, each public key commented root@keys.
func wantHostKeys(t *testing.T, d *disk) {
	t.Helper()
	for _, kind := range []string{"rsa", "ecdsa", "ed25519"} {
		p := "/etc/ssh/ssh_host_" + kind + "_key"
		d.wantMode(p, 0o600, 0, 0)
		d.wantMode(p+".pub", 0o644, 0, 0)
		if pub, _ := d.readOpt(p + ".pub"); !strings.HasSuffix(pub, " root@keys\n") {
			t.Errorf("%s.pub = %q, want a key commented root@keys", p, pub)
		}
	}
}

// TestHostKeysWithoutRNG boots with QEMU's default CPU (no RDRAND) and no
// virtio-rng, as a plain VM: the initramfs still makes the host keys (the
// blocking getrandom lets the kernel gather jitter entropy).
func TestHostKeysWithoutRNG(t *testing.T) {
	t.Parallel()
	v := newVM(t)
	seed := v.seed(map[string][]byte{"meta-data": []byte("instance-id: iid-keys\n"), "user-data": []byte(hostKeysUserData)}, harness.SeedISO)
	r := v.boot(harness.BootOptions{Seed: seed, SeedKind: harness.SeedCDROMSCSI, CPU: "default", NoRNG: true,
		Append: []string{"cloudroot.test.poweroff"}})
	wantPoweredOff(t, r)
	wantConsole(t, r, "kernel random number generator was ready", "The key fingerprint is:", "The key's randomart image is:")
	if strings.Contains(r.Console, "SSH host key generation deferred") {
		t.Errorf("host keys deferred although the kernel RNG became ready:\n%s", grepLines(r.Console, "deferred"))
	}
	if m := regexp.MustCompile(`kernel random number generator was ready duration=(\S+)`).FindStringSubmatch(r.Console); m != nil {
		t.Logf("entropy wait: %s", m[1])
	}
	d := v.image()
	wantHostKeys(t, d)
	d.wantStagesDone(d.status(), true)
}

// TestHostKeysDeferred: host keys left to the booted root (here forced by
// cloudroot.hostkeys=defer) are made there by `cloudroot hostkeys` before
// the config stage, as cloudroot-hostkeys.service does under systemd.
func TestHostKeysDeferred(t *testing.T) {
	t.Parallel()
	v := newVM(t)
	seed := v.seed(map[string][]byte{"meta-data": []byte("instance-id: iid-keys\n"), "user-data": []byte(hostKeysUserData)}, harness.SeedISO)
	r := v.boot(harness.BootOptions{Seed: seed, SeedKind: harness.SeedCDROMSCSI,
		Append: []string{"cloudroot.test.poweroff", "cloudroot.hostkeys=defer"}})
	wantPoweredOff(t, r)
	wantConsole(t, r, "SSH host key generation deferred to the booted system", "cloudroot-rootfs: hostkeys rc=0", "The key fingerprint is:")
	if i, j := strings.Index(r.Console, "switching root"), strings.Index(r.Console, "The key fingerprint is:"); i < 0 || j < i {
		t.Errorf("keys were reported before switch_root (at %d, switch at %d): not deferred", j, i)
	}
	d := v.image()
	wantHostKeys(t, d)
	d.wantStagesDone(d.status(), true)
}
