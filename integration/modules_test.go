package integration

import (
	"regexp"
	"strings"
	"testing"

	"github.com/cloudroot/cloudroot/integration/harness"
)

// consoleKeysUserData asks for two host key types, prints only the
// ed25519 fingerprint and key, and sets apt_pipelining (a file write on
// the Debian-like image, which has no apt-get: apt_configure must then
// leave sources alone, as cloud-init does).
const consoleKeysUserData = `#cloud-config
hostname: keys
ssh_genkeytypes: [ed25519, ecdsa]
ssh_authorized_keys:
  - ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOg0ONCcEeoWARgYgTHYrrLRcYmH/DAYfUrP/+Jaeg3X tester@console
ssh_fp_console_blacklist: [ecdsa-sha2-nistp256]
ssh_key_console_blacklist: [ecdsa-sha2-nistp256]
apt_pipelining: 2
power_state:
  mode: poweroff
`

// TestConsoleKeysAndFingerprints: the final stage in the booted root
// prints the host key fingerprints and keys (keys_to_console) and the
// default user's authorized-key table (ssh_authkey_fingerprints) on the
// serial console, as cloud-init does; apt_pipelining writes its snippet.
func TestConsoleKeysAndFingerprints(t *testing.T) {
	t.Parallel()
	v := newVM(t)
	seed := v.seed(map[string][]byte{"meta-data": meta("iid-keys-001", "keys-meta"), "user-data": []byte(consoleKeysUserData)}, harness.SeedISO)
	r := v.boot(harness.BootOptions{Seed: seed, SeedKind: harness.SeedCDROMSCSI})
	wantPoweredOff(t, r)
	d := v.image()
	edPub := strings.TrimSpace(d.read("/etc/ssh/ssh_host_ed25519_key.pub"))
	ecPub := strings.TrimSpace(d.read("/etc/ssh/ssh_host_ecdsa_key.pub"))
	wantConsole(t, r,
		"cloud-init: -----BEGIN SSH HOST KEY FINGERPRINTS-----",
		"cloud-init: -----END SSH HOST KEY FINGERPRINTS-----",
		"-----BEGIN SSH HOST KEY KEYS-----\n"+edPub+"\n-----END SSH HOST KEY KEYS-----",
		"Authorized keys from /home/debian/.ssh/authorized_keys for user debian",
		"| ssh-ed25519 |",
		"tester@console",
	)
	wantConsoleMatch(t, r, `<14>\w{3} [ 0-9]\d \d\d:\d\d:\d\d cloud-init: 256 SHA256:[A-Za-z0-9+/]{43} root@\S+ \(ED25519\)`)
	if regexp.MustCompile(`cloud-init: \d+ SHA256:\S+ .*\(ECDSA\)`).MatchString(r.Console) {
		t.Errorf("the ECDSA fingerprint is printed despite ssh_fp_console_blacklist")
	}
	if ecPub != "" && strings.Contains(r.Console, ecPub) {
		t.Errorf("the ECDSA key is printed despite ssh_key_console_blacklist")
	}
	d.wantContent("/etc/apt/apt.conf.d/90cloud-init-pipelining",
		"//Written by cloud-init per 'apt_pipelining'\nAcquire::http::Pipeline-Depth \"2\";\n")
	d.wantStagesDone(d.status(), true)
}
