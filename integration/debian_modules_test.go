package integration

// TestDebianModules boots the Debian 12 image (`just debian-image`) with a
// user-data using the modules a stock cloud image runs (issue 13's QEMU
// acceptance), every network service on the host's 127.0.0.1 behind a
// guestfwd (restrict=on: the guest has no other route anywhere):
//
//   - apt_configure: preserve_sources_list false (Debian's cloud.cfg
//     says true) and primary and security mirrors on a local repository
//     (harness.BuildAptRepo) whose Release is signed by a throwaway key,
//     and a `sources` entry with that key (`key:`) for the suite holding
//     the packages; the image's deb.debian.org sources are replaced;
//   - package_update_upgrade_install: hello, tree and rsyslog from there;
//   - set_passwords: chpasswd for alice (text) and bob (hash), expired,
//     and ssh_pwauth; carol's password (users_groups) is the unexpired
//     control;
//   - ntp (chrony), timezone, locale, ca_certs (a test CA trusted, a leaf
//     it signed verified by openssl in the guest);
//   - rsyslog: a TCP remote (@@) reaching a listener on the host, fed by
//     `logger` in the guest once the package is installed;
//   - phone_home: a server that answers 500 first, then 200 (tries: 5);
//   - keys_to_console with ssh_key_console_blacklist.
//
// Effects are read from the powered-off disk, from what a runcmd script
// recorded in the guest (/var/lib/cloudroot-test), from the console and
// from the host-side servers.

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cloudroot/cloudroot/integration/harness"
	"github.com/cloudroot/cloudroot/pkg/target"
)

// Guest addresses of the host services (inside the 169.254.0.0/16 user
// network any GuestFwd switches to; the repository is harness.AptRepoGuestIP).
const (
	phoneHomeGuestIP = "169.254.0.81"
	rsyslogGuestIP   = "169.254.0.82"
	rsyslogGuestPort = 10514
	// debModulesSuite holds the packages; the Debian suites the mirrors
	// serve are empty.
	debModulesSuite = "cloudroot-test"
	debModulesIID   = "iid-debian-modules"
	alicePassword   = "Alice-passw0rd"
	bobPassword     = "Bob-passw0rd"
	carolPassword   = "Carol-passw0rd"
)

// debModulesPackages are installed from the local repository (none is in
// the image: rsyslog is what the rsyslog remote needs).
var debModulesPackages = []string{"hello", "tree", "rsyslog"}

// debModulesFacts runs from runcmd, after the packages are installed;
// `late` is power_state's condition, after phone_home.
const debModulesFacts = `#!/bin/sh
out=/var/lib/cloudroot-test
mkdir -p "$out"
if [ "$1" = late ]; then
	cloud-init status --long >"$out/status-long.txt" 2>&1
	echo "rc=$?" >>"$out/status-long.txt"
	sync
	exit 0
fi
hello >"$out/hello.txt" 2>&1
tree --version >"$out/tree.txt" 2>&1
dpkg-query -W -f '${Package} ${Status}\n' hello tree rsyslog >"$out/dpkg.txt" 2>&1
apt-cache policy hello >"$out/policy-hello.txt" 2>&1
apt-get update >"$out/apt-update.txt" 2>&1; echo "rc=$?" >>"$out/apt-update.txt"
sshd -T 2>&1 | grep -i '^passwordauthentication' >"$out/sshd-pwauth.txt"
for u in alice bob carol; do chage -l $u >"$out/chage-$u.txt" 2>&1; done
systemctl is-active chrony >"$out/chrony-active.txt" 2>&1
chronyc -n sources >"$out/chrony-sources.txt" 2>&1
date +%Z >"$out/date-zone.txt" 2>&1
cat /etc/timezone >"$out/timezone.txt" 2>&1
locale -a >"$out/locale-a.txt" 2>&1
openssl verify -CAfile /etc/ssl/certs/ca-certificates.crt /etc/cloudroot-test/leaf.pem >"$out/openssl-verify.txt" 2>&1
echo "rc=$?" >>"$out/openssl-verify.txt"
systemctl is-active rsyslog >"$out/rsyslog-active.txt" 2>&1
logger -t cloudroot-test "rsyslog-marker $(cat /var/lib/cloud/data/instance-id)"
sleep 3
systemctl list-units --failed --plain --no-legend >"$out/failed.txt" 2>&1
echo runcmd done >"$out/runcmd.txt"
sync
`

func debModulesUserData(repo *harness.AptRepo, caPEM, leafPEM string, bobHash, carolHash string) string {
	return `#cloud-config
hostname: debmods
fqdn: debmods.example.internal
` + aptLocalRepoConfig(repo, debModulesSuite) + `package_update: true
package_upgrade: true
packages: [` + strings.Join(debModulesPackages, ", ") + `]
users:
  - default
  - name: alice
    shell: /bin/bash
  - name: bob
  - name: carol
    hashed_passwd: "` + carolHash + `"
    lock_passwd: false
chpasswd:
  expire: true
  users:
    - {name: alice, password: "` + alicePassword + `", type: text}
    - {name: bob, password: "` + bobHash + `"}
ssh_pwauth: true
ntp:
  enabled: true
  ntp_client: chrony
  servers: [169.254.0.2]
  pools: [0.cloudroot-test.pool.invalid]
timezone: Europe/Paris
locale: de_DE.UTF-8
ca_certs:
  trusted:
    - |
` + indent(caPEM, "      ") + `
rsyslog:
  remotes:
    hostsink: "@@` + rsyslogGuestIP + `:` + strconv.Itoa(rsyslogGuestPort) + `"
phone_home:
  url: http://` + phoneHomeGuestIP + `/phone_home/$INSTANCE_ID
  post: all
  tries: 5
ssh_genkeytypes: [rsa, ecdsa, ed25519]
ssh_key_console_blacklist: [ssh-rsa]
write_files:
  - path: /usr/local/sbin/cloudroot-facts
    permissions: "0755"
    content: |
` + indent(debModulesFacts, "      ") + `
  - path: /etc/cloudroot-test/leaf.pem
    content: |
` + indent(leafPEM, "      ") + `
runcmd:
  - [/usr/local/sbin/cloudroot-facts]
power_state:
  mode: poweroff
  delay: now
  message: cloudroot TestDebianModules powering off
  timeout: 120
  condition: "/usr/local/sbin/cloudroot-facts late"
`
}

// testCA makes a CA certificate and a leaf it signed, both PEM.
func testCA(t *testing.T) (caPEM, leafPEM string) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	ca := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "cloudroot test CA"},
		NotBefore: now.Add(-24 * time.Hour), NotAfter: now.Add(30 * 24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	leaf := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "leaf.cloudroot.invalid"},
		DNSNames:  []string{"leaf.cloudroot.invalid"},
		NotBefore: now.Add(-24 * time.Hour), NotAfter: now.Add(30 * 24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &leafKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})),
		string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leafDER}))
}

// shadowEntry is one /etc/shadow line's fields.
type shadowEntry struct {
	Hash    string
	LastChg string
}

func parseShadow(s string) map[string]shadowEntry {
	m := map[string]shadowEntry{}
	for _, l := range harness.Lines([]byte(s)) {
		f := strings.Split(l, ":")
		if len(f) >= 3 {
			m[f[0]] = shadowEntry{Hash: f[1], LastChg: f[2]}
		}
	}
	return m
}

// verifiesPassword reports whether a shadow hash is pw's (SHA-512 crypt).
func verifiesPassword(hash, pw string) bool {
	if !strings.HasPrefix(hash, "$6$") {
		return false
	}
	got, err := target.SHA512Crypt(pw, hash)
	return err == nil && got == hash
}

// needDebianImage returns the Debian image or skips (fails under
// CLOUDROOT_INTEGRATION=1) when it was not built.
func needDebianImage(t *testing.T, a harness.Artifacts) {
	t.Helper()
	if fi, err := os.Stat(a.Debian); err != nil || !fi.Mode().IsRegular() {
		msg := "no " + a.Debian + " (build it with `just debian-image`)"
		if os.Getenv(EnvIntegration) == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
}

func TestDebianModules(t *testing.T) {
	t.Parallel()
	a := artifacts(t)
	needDebianImage(t, a)
	needTools(t, "nc", "apt-get", "dpkg-scanpackages", "gpg")
	dir := t.TempDir()
	repo, repoSrv := serveAptRepo(t, 10*time.Minute, harness.AptRepoOptions{
		Packages: debModulesPackages, Image: a.Debian, Dir: filepath.Join(dir, "repo"),
		Suite:       debModulesSuite,
		EmptySuites: []string{"bookworm", "bookworm-updates", "bookworm-security", "bookworm-backports"},
	})
	phone, err := harness.ServePosts(500)
	if err != nil {
		t.Fatal(err)
	}
	defer phone.Close()
	sink, err := harness.ListenLines()
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()

	caPEM, leafPEM := testCA(t)
	bobHash, err := target.HashPassword(bobPassword)
	if err != nil {
		t.Fatal(err)
	}
	carolHash, err := target.HashPassword(carolPassword)
	if err != nil {
		t.Fatal(err)
	}
	v := &vm{t: t, a: a, dir: dir, disk: filepath.Join(dir, "debian.img")}
	if err := harness.CopyDisk(a.Debian, v.disk); err != nil {
		t.Fatal(err)
	}
	seed := v.seed(map[string][]byte{
		"meta-data":      []byte("instance-id: " + debModulesIID + "\nlocal-hostname: debian-meta\n"),
		"user-data":      []byte(debModulesUserData(repo, caPEM, leafPEM, bobHash, carolHash)),
		"network-config": []byte(debianNetworkConfig),
	}, harness.SeedISO)
	start := time.Now()
	// The disk boots by itself (SeaBIOS, its GRUB); the image's GRUB menu
	// has no_timer_check (under TCG on a loaded host the kernel's IO-APIC
	// timer check can fail and panic before anything of ours runs).
	r := v.boot(harness.BootOptions{DiskBoot: true, Seed: seed, SeedKind: harness.SeedCDROM, Timeout: 25 * time.Minute,
		GuestFwd: []harness.GuestFwd{
			repoSrv.GuestFwd(),
			{GuestIP: phoneHomeGuestIP, GuestPort: 80, HostPort: phone.Port()},
			{GuestIP: rsyslogGuestIP, GuestPort: rsyslogGuestPort, HostPort: sink.Port()},
		}})
	t.Logf("Debian modules boot: QEMU start to exit %.1fs", time.Since(start).Seconds())
	t.Logf("apt repository requests:\n%s", strings.Join(repoSrv.Requests(), "\n"))
	wantPoweredOff(t, r)
	wantConsole(t, r, "cloudroot TestDebianModules powering off")
	d := v.image()

	facts := func(name string) string { t.Helper(); return d.fact(t, name) }

	t.Run("apt_configure", func(t *testing.T) {
		// The image's deb.debian.org sources are replaced by the mirrors.
		sl := d.read("/etc/apt/sources.list")
		if strings.Contains(sl, "deb.debian.org") || !strings.Contains(sl, "deb "+repo.GuestURL()+" bookworm main") {
			t.Errorf("/etc/apt/sources.list:\n%s\nwant the local mirror only", sl)
		}
		d.wantContains("/etc/apt/sources.list.d/cloudroot-test.list", "deb "+repo.GuestURL()+" "+debModulesSuite+" main")
		key := d.read("/etc/apt/trusted.gpg.d/cloudroot-test.gpg")
		if len(key) == 0 {
			t.Error("the source's key is not in /etc/apt/trusted.gpg.d/cloudroot-test.gpg")
		}
		if !repoSrv.Fetched("/dists/" + debModulesSuite + "/InRelease") {
			t.Error("the guest never fetched the signed InRelease of the keyed source")
		}
		if got := facts("apt-update.txt"); !strings.HasSuffix(got, "rc=0") || strings.Contains(got, "NO_PUBKEY") || strings.Contains(got, "W: ") {
			t.Errorf("apt-get update in the guest (signature checked against the key):\n%s", got)
		}
		// apt prints the URI without its final slash.
		if got := facts("policy-hello.txt"); !strings.Contains(got, strings.TrimSuffix(repo.GuestURL(), "/")+" "+debModulesSuite+"/main amd64 Packages") {
			t.Errorf("apt-cache policy hello does not name the local source:\n%s", got)
		}
	})

	t.Run("packages", func(t *testing.T) {
		got := facts("dpkg.txt")
		for _, p := range debModulesPackages {
			if !strings.Contains(got, p+" install ok installed") {
				t.Errorf("%s is not installed:\n%s", p, got)
			}
			if !slices.ContainsFunc(repoSrv.Requests(), func(l string) bool {
				return strings.HasPrefix(l, "GET /pool/main/"+p+"_") && strings.HasSuffix(l, " 200")
			}) {
				t.Errorf("the guest never downloaded %s from the local repository", p)
			}
		}
		if got := facts("hello.txt"); got != "Hello, world!" {
			t.Errorf("hello printed %q", got)
		}
		if got := facts("tree.txt"); !strings.HasPrefix(got, "tree v") {
			t.Errorf("tree --version printed %q", got)
		}
	})

	t.Run("set_passwords", func(t *testing.T) {
		sh := parseShadow(d.read("/etc/shadow"))
		for _, c := range []struct {
			user, pw string
			expired  bool
		}{{"alice", alicePassword, true}, {"bob", bobPassword, true}, {"carol", carolPassword, false}} {
			e, ok := sh[c.user]
			if !ok {
				t.Errorf("no %s in /etc/shadow", c.user)
				continue
			}
			if !verifiesPassword(e.Hash, c.pw) {
				t.Errorf("%s's shadow hash (%s) does not verify the password set", c.user, harness.PasswordState(e.Hash))
			}
			if got := e.LastChg == "0"; got != c.expired {
				t.Errorf("%s: last change %q, want expired=%v", c.user, e.LastChg, c.expired)
			}
			chage := facts("chage-" + c.user + ".txt")
			if got := strings.Contains(chage, "password must be changed"); got != c.expired {
				t.Errorf("chage -l %s in the guest:\n%s\nwant expired=%v", c.user, chage, c.expired)
			}
		}
		d.wantContains("/etc/ssh/sshd_config.d/50-cloud-init.conf", "PasswordAuthentication yes")
		if got := facts("sshd-pwauth.txt"); got != "passwordauthentication yes" {
			t.Errorf("sshd -T in the guest: %q, want passwordauthentication yes", got)
		}
	})

	t.Run("ntp", func(t *testing.T) {
		d.wantContains("/etc/chrony/chrony.conf", "server 169.254.0.2 iburst", "pool 0.cloudroot-test.pool.invalid iburst")
		if got := facts("chrony-active.txt"); got != "active" {
			t.Errorf("chrony is %q, want active", got)
		}
		if got := facts("chrony-sources.txt"); !strings.Contains(got, "169.254.0.2") {
			t.Errorf("chronyc sources does not list the configured server:\n%s", got)
		}
	})

	t.Run("timezone", func(t *testing.T) {
		d.wantContent("/etc/timezone", "Europe/Paris\n")
		d.wantLink("/etc/localtime", "/usr/share/zoneinfo/Europe/Paris")
		if got := facts("date-zone.txt"); got != "CET" && got != "CEST" {
			t.Errorf("date +%%Z in the guest = %q, want CET or CEST", got)
		}
	})

	t.Run("locale", func(t *testing.T) {
		d.wantContains("/etc/default/locale", "LANG=de_DE.UTF-8")
		if got := facts("locale-a.txt"); !strings.Contains(got, "de_DE.utf8") {
			t.Errorf("locale -a in the guest lacks de_DE.utf8 (not generated):\n%s", got)
		}
	})

	t.Run("ca_certs", func(t *testing.T) {
		d.wantContent("/usr/local/share/ca-certificates/cloud-init-ca-cert-1.crt", caPEM)
		d.wantContains("/etc/ssl/certs/ca-certificates.crt", strings.TrimSpace(caPEM))
		if got := facts("openssl-verify.txt"); !strings.Contains(got, ": OK") || !strings.HasSuffix(got, "rc=0") {
			t.Errorf("openssl verify of a leaf the test CA signed:\n%s", got)
		}
	})

	t.Run("rsyslog", func(t *testing.T) {
		d.wantContains("/etc/rsyslog.d/20-cloud-config.conf", "@@"+rsyslogGuestIP+":"+strconv.Itoa(rsyslogGuestPort))
		if got := facts("rsyslog-active.txt"); got != "active" {
			t.Errorf("rsyslog is %q, want active", got)
		}
		lines := sink.Lines()
		if !slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, "rsyslog-marker "+debModulesIID) }) {
			t.Errorf("the host listener did not receive the guest's logger line; it got %d line(s):\n%s", len(lines), strings.Join(lines, "\n"))
		}
	})

	t.Run("phone_home", func(t *testing.T) {
		posts := phone.Posts()
		if len(posts) != 2 {
			t.Fatalf("phone home server saw %d request(s), want 2 (500, then 200): %+v", len(posts), posts)
		}
		if posts[0].Status != 500 || posts[1].Status != 200 {
			t.Errorf("answers %d, %d", posts[0].Status, posts[1].Status)
		}
		p := posts[1]
		if p.Method != "POST" || p.Path != "/phone_home/"+debModulesIID {
			t.Errorf("request %s %s, want POST /phone_home/%s", p.Method, p.Path, debModulesIID)
		}
		want := []string{"pub_key_rsa", "pub_key_ecdsa", "pub_key_ed25519", "instance_id", "hostname", "fqdn"}
		if !slices.Equal(p.Order, want) {
			t.Errorf("form fields %v, want %v", p.Order, want)
		}
		// hostname and fqdn are the datasource's (meta-data's
		// local-hostname, no domain), as cloud.get_hostname() answers
		// upstream, not the user-data's hostname/fqdn.
		checkForm(t, p.Form, map[string]string{"instance_id": debModulesIID, "hostname": "debian-meta", "fqdn": "debian-meta"})
		for _, kt := range []string{"rsa", "ecdsa", "ed25519"} {
			if got, want := p.Form.Get("pub_key_"+kt), d.read("/etc/ssh/ssh_host_"+kt+"_key.pub"); got != strings.TrimSpace(want) && got != want {
				t.Errorf("pub_key_%s = %q, want the host key %q", kt, got, want)
			}
		}
	})

	t.Run("keys_to_console", func(t *testing.T) {
		wantConsole(t, r, "-----BEGIN SSH HOST KEY FINGERPRINTS-----", "-----END SSH HOST KEY FINGERPRINTS-----",
			"-----BEGIN SSH HOST KEY KEYS-----", "-----END SSH HOST KEY KEYS-----")
		keys := between(r.Console, "-----BEGIN SSH HOST KEY KEYS-----", "-----END SSH HOST KEY KEYS-----")
		for _, kt := range []string{"ecdsa", "ed25519"} {
			pub := strings.Join(strings.Fields(d.read("/etc/ssh/ssh_host_" + kt + "_key.pub"))[:2], " ")
			if !strings.Contains(keys, pub) {
				t.Errorf("the console's key block lacks the %s host key %s:\n%s", kt, pub, keys)
			}
		}
		if strings.Contains(keys, "ssh-rsa ") {
			t.Errorf("ssh-rsa is blacklisted but printed:\n%s", keys)
		}
		fps := between(r.Console, "-----BEGIN SSH HOST KEY FINGERPRINTS-----", "-----END SSH HOST KEY FINGERPRINTS-----")
		if n := strings.Count(fps, "SHA256:"); n != 3 {
			t.Errorf("the fingerprint block has %d SHA256 fingerprints, want 3:\n%s", n, fps)
		}
	})

	t.Run("boot", func(t *testing.T) {
		if got := facts("runcmd.txt"); got != "runcmd done" {
			t.Errorf("runcmd output = %q", got)
		}
		if got := facts("failed.txt"); got != "" {
			t.Errorf("failed units in the guest:\n%s", got)
		}
		// The one warning expected: the image has no gnupg and its
		// mirrors are out of reach until apt_configure replaces them, so
		// the inline key is dearmored without gpg. cloud-init answers 2
		// for "done" with recoverable errors.
		got := facts("status-long.txt")
		if !strings.Contains(got, "status: done") || !strings.Contains(got, "Installing gnupg failed") {
			t.Errorf("cloud-init status --long, want done with the gnupg warning:\n%s", got)
		}
		if n := strings.Count(got, "\n\t- "); n != 1 {
			t.Errorf("%d recoverable errors listed, want the gnupg one only:\n%s", n, got)
		}
	})
}

func checkForm(t *testing.T, form url.Values, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got := form.Get(k); got != v {
			t.Errorf("form %s = %q, want %q", k, got, v)
		}
	}
}

// between is the text between the first start marker and the end marker
// after it ("" when either is missing).
func between(s, start, end string) string {
	i := strings.Index(s, start)
	if i < 0 {
		return ""
	}
	s = s[i+len(start):]
	j := strings.Index(s, end)
	if j < 0 {
		return ""
	}
	return s[:j]
}
