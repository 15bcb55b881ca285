package integration

// TestDebian boots build/debian-12.img (`just debian-image`: Debian 12 with
// systemd, cloudroot installed through its Debian package) by itself, as a
// cloud does — SeaBIOS, the disk's GRUB, the cloudroot initrd the package
// built for the image's kernel — with a NoCloud seed, and asserts every effect of its
// user-data on the powered-off disk, plus what only the running guest could
// see (unit order, sshd's keys, cloud-init status), which a runcmd script and
// power_state's condition record under /var/lib/cloudroot-test.
//
// TestDebianTrixie does the same with build/debian-13.img (`just
// debian-image suite=trixie`: Debian 13, netplan + systemd-networkd, OpenSSH
// 10, systemd 257, trixie's own kernel), where the network is rendered to
// netplan and applied by networkd, and sshd is also reached from the host
// (hostfwd) for its host key.

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/cloudroot/cloudroot/integration/harness"
)

// debianTimeout bounds the Debian boot: systemd under TCG, to power-off.
const debianTimeout = 10 * time.Minute

const debianUserKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJImoPD3B5+x5J6CmGnzLwF22+t1E+B8TQVrD9c8FhhH alice@cloudroot-test"

// debianFacts records, in the booted guest, what the test cannot read from
// the disk afterwards. `facts` runs from runcmd (final stage); `facts late`
// is power_state's condition, run once the final stage is done.
const debianFacts = `#!/bin/sh
out=/var/lib/cloudroot-test
mkdir -p "$out"
if [ "$1" = late ]; then
	cloud-init status --long >"$out/status-long.txt" 2>&1
	echo "rc=$?" >>"$out/status-long.txt"
	sync
	exit 0
fi
systemctl is-system-running >"$out/is-system-running.txt" 2>&1
systemctl show -p Id -p ActiveState -p InactiveExitTimestampMonotonic -p ActiveEnterTimestampMonotonic \
	network-online.target networking.service multi-user.target ssh.service \
	systemd-networkd.service systemd-networkd-wait-online.service cloudroot-hostkeys-background.service \
	cloudroot-config.service cloudroot-final.service cloud-config.service cloud-final.service >"$out/units.txt" 2>&1
for a in cloud-config cloud-final; do
	systemctl show -p Id --value $a.service >"$out/alias-$a.txt" 2>&1
done
systemctl list-units --failed --plain --no-legend >"$out/failed.txt" 2>&1
systemctl is-active ssh >"$out/ssh-active.txt" 2>&1
for t in rsa ecdsa ed25519; do
	ssh-keygen -lf /etc/ssh/ssh_host_${t}_key.pub | cut -d' ' -f2 >"$out/hostkey-$t.file" 2>&1
	# ssh-keyscan's 5 s timeout is short for a guest under TCG on a busy host: 30 s, three tries.
	for try in 1 2 3; do
		ssh-keyscan -T 30 -t $t 127.0.0.1 2>/dev/null | ssh-keygen -lf - | cut -d' ' -f2 >"$out/hostkey-$t.sshd" 2>&1
		[ -s "$out/hostkey-$t.sshd" ] && break
		sleep 2
	done
done
id alice >"$out/id-alice.txt" 2>&1
getent group cloudops >"$out/getent-cloudops.txt" 2>&1
sudo -l -U alice >"$out/sudo-alice.txt" 2>&1
hostname >"$out/hostname.txt" 2>&1
hostname -f >"$out/hostname-f.txt" 2>&1
ip -o -4 addr show >"$out/ip-addr.txt" 2>&1
networkctl --no-pager status lan0 >"$out/networkctl.txt" 2>&1
ssh -V >"$out/ssh-version.txt" 2>&1
uname -r >"$out/uname-r.txt" 2>&1
cat /proc/cmdline >"$out/cmdline.txt" 2>&1
# The udev hand-off (docs/distributions.md): when /boot/efi's device unit
# was plugged against udevd's coldplug, and what udev made of the devices
# once its queue had drained.
esp=$(awk '$2 == "/boot/efi" { sub(/^UUID=/, "/dev/disk/by-uuid/", $1); print $1 }' /etc/fstab)
systemd-escape -p --suffix=device "$esp" >"$out/esp-unit.txt" 2>&1
systemctl show -p Id -p ActiveEnterTimestampMonotonic -p InactiveExitTimestampMonotonic \
	"$(cat "$out/esp-unit.txt")" boot-efi.mount local-fs-pre.target local-fs.target \
	systemd-udev-trigger.service systemd-udevd.service >"$out/udev-units.txt" 2>&1
udevadm settle --timeout=120 >/dev/null 2>&1
udevadm info "$esp" >"$out/udev-esp.txt" 2>&1
udevadm info "$(findmnt -n -o SOURCE /)" >"$out/udev-root.txt" 2>&1
ls -l /dev/disk/by-uuid /dev/disk/by-label >"$out/dev-disk.txt" 2>&1
lsblk -f >"$out/lsblk.txt" 2>&1
journalctl -b -o short-monotonic --no-pager | grep -E 'local-fs|boot-efi|udev|Expecting|Found device' >"$out/journal-udev.txt" 2>&1
echo runcmd done >"$out/runcmd.txt"
sync
`

func debianUserData() string { return debianUserDataWith() }

// debianUserDataWith is debianUserData with more runcmd entries (shell
// lines) before the facts are recorded.
func debianUserDataWith(runcmd ...string) string {
	var more strings.Builder
	for _, c := range runcmd {
		more.WriteString("  - " + strconv.Quote(c) + "\n")
	}
	return `#cloud-config
hostname: debtest
fqdn: debtest.example.internal
manage_etc_hosts: true
groups:
  - cloudops
users:
  - default
  - name: alice
    gecos: Alice Tester
    shell: /bin/bash
    groups: [adm, sudo, cloudops]
    sudo: "ALL=(ALL) NOPASSWD:ALL"
    lock_passwd: true
    ssh_authorized_keys:
      - ` + debianUserKey + `
  - name: bob
    groups: users
ssh_deletekeys: true
ssh_genkeytypes: [rsa, ecdsa, ed25519]
bootcmd:
  - mkdir -p /var/lib/cloudroot-test
  - echo "bootcmd ran" > /var/lib/cloudroot-test/bootcmd.txt
write_files:
  - path: /etc/cloudroot-test/early.txt
    content: "written before the users exist\n"
    permissions: "0640"
  - path: /usr/local/sbin/cloudroot-facts
    permissions: "0755"
    content: |
` + indent(debianFacts, "      ") + `
  - path: /home/alice/deferred.txt
    content: "deferred until alice exists\n"
    owner: alice:alice
    permissions: "0600"
    defer: true
runcmd:
` + more.String() + `  - [/usr/local/sbin/cloudroot-facts]
power_state:
  mode: poweroff
  delay: now
  message: cloudroot TestDebian powering off
  timeout: 120
  condition: "/usr/local/sbin/cloudroot-facts late"
`
}

const debianNetworkConfig = `version: 2
ethernets:
  lan0:
    match:
      macaddress: "52:54:00:12:34:56"
    set-name: lan0
    dhcp4: true
`

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n")
}

// debianRelease is one Debian image the TestDebian* boots prove: what
// differs between releases.
type debianRelease struct {
	image string // build/debian-12.img
	build string // the recipe that builds it
	// netplan: the network is netplan's, rendered for systemd-networkd
	// (trixie, as Debian's cloud images); else ifupdown's ENI (bookworm).
	netplan bool
	// sshFromHost: the host connects to the guest's sshd (hostfwd) and
	// compares the host key it serves with the one on the disk.
	sshFromHost bool
}

func TestDebian(t *testing.T) {
	t.Parallel()
	a := artifacts(t)
	testDebianRelease(t, a, debianRelease{image: a.Debian, build: "just debian-image"})
}

func TestDebianTrixie(t *testing.T) {
	t.Parallel()
	a := artifacts(t)
	testDebianRelease(t, a, debianRelease{
		image: a.DebianTrixie, build: "just debian-image suite=trixie",
		netplan: true, sshFromHost: true,
	})
}

// sshProbe is what the host saw of the guest's sshd through hostfwd.
type sshProbe struct {
	fingerprint string // the ed25519 host key's SHA256 fingerprint
	err         error  // how the last handshake ended (an auth refusal is expected)
	tries       int
}

// probeSSH dials addr until a handshake reaches the server's host key (the
// authentication that follows must fail: no key is offered) or ctx ends.
func probeSSH(ctx context.Context, addr string) sshProbe {
	var p sshProbe
	for ctx.Err() == nil {
		p.tries++
		conn, err := (&net.Dialer{Timeout: 5 * time.Second}).DialContext(ctx, "tcp", addr)
		if err == nil {
			cfg := &ssh.ClientConfig{
				User:              "alice",
				HostKeyAlgorithms: []string{ssh.KeyAlgoED25519},
				HostKeyCallback: func(_ string, _ net.Addr, k ssh.PublicKey) error {
					p.fingerprint = ssh.FingerprintSHA256(k)
					return nil
				},
				Timeout: 60 * time.Second,
			}
			_ = conn.SetDeadline(time.Now().Add(90 * time.Second))
			var c ssh.Conn
			c, _, _, err = ssh.NewClientConn(conn, addr, cfg)
			if c != nil {
				_ = c.Close()
			}
			_ = conn.Close()
			if p.fingerprint != "" {
				p.err = err
				return p
			}
		}
		p.err = err
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
	if p.err == nil {
		p.err = ctx.Err()
	}
	return p
}

// freePort returns a TCP port free on the host's loopback now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func testDebianRelease(t *testing.T, a harness.Artifacts, rel debianRelease) {
	if fi, err := os.Stat(rel.image); err != nil || !fi.Mode().IsRegular() {
		msg := "no " + rel.image + " (build it with `" + rel.build + "`)"
		if os.Getenv(EnvIntegration) == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	dir := t.TempDir()
	v := &vm{t: t, a: a, dir: dir, disk: filepath.Join(dir, "debian.img")}
	if err := harness.CopyDisk(rel.image, v.disk); err != nil {
		t.Fatal(err)
	}
	userData := debianUserData()
	o := harness.BootOptions{DiskBoot: true, SeedKind: harness.SeedCDROM, Timeout: debianTimeout}
	probed := make(chan sshProbe, 1)
	probeCtx, stopProbe := context.WithCancel(t.Context())
	defer stopProbe()
	if rel.sshFromHost {
		// The final stage waits (at most 3 minutes) until sshd has
		// logged the host's connection, so the guest stays up for it.
		userData = debianUserDataWith(`for i in $(seq 180); do journalctl -q -u ssh.service | grep -q 10.0.2.2 && break; sleep 1; done`)
		port := freePort(t)
		o.HostFwd = []harness.HostFwd{{HostPort: port, GuestPort: 22}}
		go func() { probed <- probeSSH(probeCtx, net.JoinHostPort("127.0.0.1", strconv.Itoa(port))) }()
	}
	o.Seed = v.seed(map[string][]byte{
		"meta-data":      []byte("instance-id: iid-debian-test\nlocal-hostname: debian-meta\n"),
		"user-data":      []byte(userData),
		"network-config": []byte(debianNetworkConfig),
	}, harness.SeedISO)
	start := time.Now()
	r := v.boot(o)
	t.Logf("Debian boot: QEMU start to exit %.1fs", time.Since(start).Seconds())
	stopProbe()
	wantPoweredOff(t, r)
	wantConsole(t, r, "cloudroot TestDebian powering off")
	d := v.image()

	facts := func(name string) string { t.Helper(); return d.fact(t, name) }

	t.Run("hostname", func(t *testing.T) {
		d.wantContent("/etc/hostname", "debtest\n")
		d.wantContains("/etc/hosts", "debtest.example.internal debtest")
		if got := facts("hostname.txt"); got != "debtest" {
			t.Errorf("hostname in the guest = %q, want debtest", got)
		}
		if got := facts("hostname-f.txt"); got != "debtest.example.internal" {
			t.Errorf("hostname -f in the guest = %q, want debtest.example.internal", got)
		}
	})

	t.Run("users", func(t *testing.T) {
		pw := harness.ParsePasswd([]byte(d.read("/etc/passwd")))
		gr := harness.ParseGroup([]byte(d.read("/etc/group")))
		for _, u := range []string{"debian", "alice", "bob"} {
			if _, ok := pw[u]; !ok {
				t.Errorf("no user %s in /etc/passwd", u)
			}
		}
		if pw["alice"].Shell != "/bin/bash" || pw["alice"].Home != "/home/alice" {
			t.Errorf("alice = %+v, want shell /bin/bash, home /home/alice", pw["alice"])
		}
		groups := harness.Groups(gr, "alice")
		for _, g := range []string{"adm", "sudo", "cloudops"} {
			if !slices.Contains(groups, g) {
				t.Errorf("alice is in %v, want %s too", groups, g)
			}
		}
		if !slices.Contains(harness.Groups(gr, "bob"), "users") {
			t.Errorf("bob is in %v, want users", harness.Groups(gr, "bob"))
		}
		d.wantContains("/etc/sudoers.d/90-cloud-init-users", "alice ALL=(ALL) NOPASSWD:ALL")
		if got := facts("id-alice.txt"); !strings.Contains(got, "(sudo)") || !strings.Contains(got, "(cloudops)") {
			t.Errorf("id alice in the guest = %q, want sudo and cloudops", got)
		}
		if got := facts("getent-cloudops.txt"); !strings.HasPrefix(got, "cloudops:") || !strings.Contains(got, "alice") {
			t.Errorf("getent group cloudops = %q, want alice a member", got)
		}
		if got := facts("sudo-alice.txt"); !strings.Contains(got, "NOPASSWD: ALL") {
			t.Errorf("sudo -l -U alice in the guest:\n%s\nwant NOPASSWD: ALL", got)
		}
	})

	t.Run("ssh", func(t *testing.T) {
		alice := harness.ParsePasswd([]byte(d.read("/etc/passwd")))["alice"]
		d.wantContains("/home/alice/.ssh/authorized_keys", debianUserKey)
		d.wantMode("/home/alice/.ssh/authorized_keys", 0o600, alice.UID, alice.GID)
		wantHostKeysServed(t, d, facts)
		facts("ssh-version.txt")
		if rel.sshFromHost {
			p := <-probed
			var authErr *ssh.ServerAuthError
			if p.fingerprint == "" {
				t.Errorf("sshd through hostfwd: no host key after %d tries: %v", p.tries, p.err)
			} else if !errors.As(p.err, &authErr) && (p.err == nil || !strings.Contains(p.err.Error(), "unable to authenticate")) {
				t.Errorf("sshd through hostfwd: the handshake ended with %v, want an authentication refusal", p.err)
			}
			if want := facts("hostkey-ed25519.file"); p.fingerprint != "" && p.fingerprint != want {
				t.Errorf("sshd through hostfwd serves ed25519 key %s, the disk's is %s", p.fingerprint, want)
			}
			t.Logf("sshd through hostfwd: ed25519 %s after %d tries (%v)", p.fingerprint, p.tries, p.err)
		}
	})

	t.Run("write_files", func(t *testing.T) {
		d.wantContent("/etc/cloudroot-test/early.txt", "written before the users exist\n")
		d.wantMode("/etc/cloudroot-test/early.txt", 0o640, 0, 0)
		alice := harness.ParsePasswd([]byte(d.read("/etc/passwd")))["alice"]
		d.wantContent("/home/alice/deferred.txt", "deferred until alice exists\n")
		d.wantMode("/home/alice/deferred.txt", 0o600, alice.UID, alice.GID)
	})

	t.Run("bootcmd_runcmd", func(t *testing.T) {
		if got := facts("bootcmd.txt"); got != "bootcmd ran" {
			t.Errorf("bootcmd output = %q", got)
		}
		if got := facts("runcmd.txt"); got != "runcmd done" {
			t.Errorf("runcmd output = %q", got)
		}
	})

	t.Run("network", func(t *testing.T) {
		if rel.netplan {
			// netplan's YAML, 0600, read at boot by netplan's systemd
			// generator (`netplan generate`) into networkd's files,
			// which networkd applied: lan0 renamed by MAC, routable.
			d.wantContains(netplanYAML, "macaddress: '52:54:00:12:34:56'", "set-name: lan0", "dhcp4: true")
			d.wantMode(netplanYAML, 0o600, 0, 0)
			d.wantAbsent("/etc/network/interfaces.d/50-cloud-init")
			nc := facts("networkctl.txt")
			for _, want := range []string{"/run/systemd/network/10-netplan-lan0.network", "routable", "configured", "10.0.2.15"} {
				if !strings.Contains(nc, want) {
					t.Errorf("networkctl status lan0 in the guest lacks %q:\n%s", want, nc)
				}
			}
		} else {
			d.wantContains("/etc/network/interfaces.d/50-cloud-init", "iface lan0 inet dhcp")
		}
		if got := facts("ip-addr.txt"); !strings.Contains(got, "lan0") || !strings.Contains(got, "inet 10.0.2.15/") {
			t.Errorf("ip -4 addr in the guest:\n%s\nwant lan0 with 10.0.2.15 (DHCP from QEMU)", got)
		}
	})

	// RSA is made after sshd started (cloudroot-hostkeys-background),
	// before the final stage, which lists it on the console; sshd serves it.
	t.Run("rsa_background", func(t *testing.T) {
		units := parseSystemctlShow(facts("units.txt"))
		bg, ssh := units["cloudroot-hostkeys-background.service"], units["ssh.service"]
		if bg["ActiveState"] != "active" {
			t.Errorf("cloudroot-hostkeys-background.service is %q, want active (ran)", bg["ActiveState"])
		}
		wantConsole(t, r, "SSH host key generation left to the booted system")
		rsa := facts("hostkey-rsa.file")
		if sshd := facts("hostkey-rsa.sshd"); !strings.HasPrefix(rsa, "SHA256:") || sshd != rsa {
			t.Errorf("rsa host key: the file's fingerprint is %q, sshd serves %q", rsa, sshd)
		}
		fps := between(r.Console, "-----BEGIN SSH HOST KEY FINGERPRINTS-----", "-----END SSH HOST KEY FINGERPRINTS-----")
		if !strings.Contains(fps, rsa) || !strings.Contains(fps, "(RSA)") || strings.Count(fps, "SHA256:") != 3 {
			t.Errorf("the console's fingerprint block lacks RSA %s or a key:\n%s", rsa, fps)
		}
		t.Logf("ssh.service active at %s µs; cloudroot-hostkeys-background ran %s..%s µs (monotonic)",
			ssh["ActiveEnterTimestampMonotonic"], bg["InactiveExitTimestampMonotonic"], bg["ActiveEnterTimestampMonotonic"])
	})

	t.Run("systemd", func(t *testing.T) {
		units := parseSystemctlShow(facts("units.txt"))
		get := func(unit, prop string) int64 {
			t.Helper()
			u, ok := units[unit]
			if !ok {
				t.Errorf("systemctl show knows no %s", unit)
				return 0
			}
			n, err := strconv.ParseInt(u[prop], 10, 64)
			if err != nil {
				t.Errorf("%s %s = %q", unit, prop, u[prop])
			}
			return n
		}
		active := []string{"network-online.target", "multi-user.target", "ssh.service", "cloudroot-config.service"}
		if rel.netplan {
			active = append(active, "systemd-networkd.service", "systemd-networkd-wait-online.service")
			if on, wait := get("network-online.target", "ActiveEnterTimestampMonotonic"), get("systemd-networkd-wait-online.service", "ActiveEnterTimestampMonotonic"); wait == 0 || on < wait {
				t.Errorf("network-online.target reached at %d µs, before systemd-networkd-wait-online at %d µs", on, wait)
			}
		}
		for _, u := range active {
			if s := units[u]["ActiveState"]; s != "active" {
				t.Errorf("%s is %q when the final stage runs, want active", u, s)
			}
		}
		if s := units["cloudroot-final.service"]["ActiveState"]; s != "activating" {
			t.Errorf("cloudroot-final.service is %q while it runs runcmd, want activating", s)
		}
		if on, cfg := get("network-online.target", "ActiveEnterTimestampMonotonic"), get("cloudroot-config.service", "InactiveExitTimestampMonotonic"); cfg < on || on == 0 {
			t.Errorf("cloudroot-config started at %d µs, before network-online.target was reached at %d µs", cfg, on)
		}
		if mu, fin := get("multi-user.target", "ActiveEnterTimestampMonotonic"), get("cloudroot-final.service", "InactiveExitTimestampMonotonic"); fin < mu || mu == 0 {
			t.Errorf("cloudroot-final started at %d µs, before multi-user.target was reached at %d µs", fin, mu)
		}
		if cfg, fin := get("cloudroot-config.service", "ActiveEnterTimestampMonotonic"), get("cloudroot-final.service", "InactiveExitTimestampMonotonic"); fin < cfg {
			t.Errorf("cloudroot-final started at %d µs, before cloudroot-config finished at %d µs", fin, cfg)
		}
		// The aliases: systemctl resolves cloud-config/cloud-final to ours.
		for alias, id := range map[string]string{"cloud-config": "cloudroot-config.service", "cloud-final": "cloudroot-final.service"} {
			if got := facts("alias-" + alias + ".txt"); got != id {
				t.Errorf("systemctl show -p Id %s.service = %q, want %s", alias, got, id)
			}
		}
		facts("is-system-running.txt") // "starting" while the final stage runs
		if got := facts("failed.txt"); got != "" {
			t.Errorf("failed units in the guest:\n%s", got)
		}
		if got := facts("uname-r.txt"); !d.im.Exists("/usr/lib/modules/"+got+"/modules.dep") && !d.im.Exists("/lib/modules/"+got+"/modules.dep") {
			t.Errorf("the guest runs kernel %q, which has no /lib/modules in the image", got)
		}
	})

	// The disk booted by itself: GRUB's command line (BOOT_IMAGE, the
	// image's console=, no harness arguments), and the initramfs that
	// ran the init-local stage is the one cloudroot's package built for
	// the running kernel, where initramfs-tools would have put its own.
	t.Run("self-boot", func(t *testing.T) {
		cmdline := facts("cmdline.txt")
		kver := facts("uname-r.txt")
		if !strings.Contains(cmdline, "BOOT_IMAGE=/boot/vmlinuz-"+kver) || strings.Contains(cmdline, "cloudroot.onfail") {
			t.Errorf("/proc/cmdline = %q, want GRUB's (BOOT_IMAGE=/boot/vmlinuz-%s), not the harness's", cmdline, kver)
		}
		wantConsole(t, r, "running 'init-local'")
		d.wantExists("/boot/initrd.img-" + kver)
		d.wantAbsent("/etc/kernel/postinst.d/initramfs-tools")
		d.wantExists("/etc/kernel/postinst.d/cloudroot")
		d.wantContains("/etc/cloudroot/initramfs.conf.d/50-image.conf", "PROFILE=")
	})

	// The initramfs's udev hand-off (cmds/cloudroot-init/udev.go): systemd
	// found /boot/efi's device plugged when it enumerated the udev
	// database at start, before its own udevd's coldplug began (without
	// the hand-off the unit is plugged only once udevd has processed the
	// coldplug's event), and udev's coldplug then replaced the entries
	// with its own: the properties and links agree, our marker is gone.
	t.Run("udev", func(t *testing.T) {
		wantConsole(t, r, "udev database handed over")
		espUnit := facts("esp-unit.txt")
		units := parseSystemctlShow(facts("udev-units.txt"))
		plugged, _ := strconv.ParseInt(units[espUnit]["ActiveEnterTimestampMonotonic"], 10, 64)
		coldplug, _ := strconv.ParseInt(units["systemd-udev-trigger.service"]["InactiveExitTimestampMonotonic"], 10, 64)
		if plugged == 0 || coldplug == 0 || plugged >= coldplug {
			t.Errorf("%s plugged at %d µs, udev's coldplug began at %d µs: want the device plugged before the coldplug (the udev hand-off)", espUnit, plugged, coldplug)
		}
		var uuid string // the ESP's, as fstab names it (UUID=XXXX-XXXX)
		for l := range strings.SplitSeq(d.read("/etc/fstab"), "\n") {
			if f := strings.Fields(l); len(f) > 1 && f[1] == "/boot/efi" {
				uuid = strings.TrimPrefix(f[0], "UUID=")
			}
		}
		if uuid == "" {
			t.Fatalf("the image's fstab mounts no /boot/efi:\n%s", d.read("/etc/fstab"))
		}
		esp, root := facts("udev-esp.txt"), facts("udev-root.txt")
		for _, c := range []struct {
			name, info string
			want       []string
		}{
			{"/boot/efi's device", esp, []string{"E: ID_FS_UUID=" + uuid, "E: ID_FS_TYPE=vfat", "S: disk/by-uuid/" + uuid, "E: CURRENT_TAGS=:systemd:"}},
			{"the root's device", root, []string{"E: ID_FS_LABEL=cloudimg-rootfs", "E: ID_FS_TYPE=ext4", "S: disk/by-label/cloudimg-rootfs", "E: CURRENT_TAGS=:systemd:"}},
		} {
			for _, w := range c.want {
				if !strings.Contains(c.info, w) {
					t.Errorf("udevadm info of %s lacks %q", c.name, w)
				}
			}
			if strings.Contains(c.info, "CLOUDROOT_INITRD_DB") {
				t.Errorf("udevadm info of %s still shows the initramfs's entry (CLOUDROOT_INITRD_DB): udev's coldplug did not replace it", c.name)
			}
		}
		if !strings.Contains(facts("dev-disk.txt"), uuid+" -> ../../") {
			t.Errorf("no /dev/disk/by-uuid/%s link to a device node", uuid)
		}
		facts("lsblk.txt")
		facts("journal-udev.txt")
	})

	t.Run("status", func(t *testing.T) {
		got := facts("status-long.txt")
		for _, want := range []string{"status: done", "rc=0"} {
			if !strings.Contains(got, want) {
				t.Errorf("cloud-init status --long after the final stage lacks %q:\n%s", want, got)
			}
		}
	})
}

// parseSystemctlShow parses `systemctl show -p Id -p ...` of several units
// (blocks separated by blank lines) into Id -> property -> value.
func parseSystemctlShow(s string) map[string]map[string]string {
	out := map[string]map[string]string{}
	for block := range strings.SplitSeq(s, "\n\n") {
		props := map[string]string{}
		for line := range strings.SplitSeq(strings.TrimSpace(block), "\n") {
			if k, v, ok := strings.Cut(line, "="); ok {
				props[k] = v
			}
		}
		if id := props["Id"]; id != "" {
			out[id] = props
		}
	}
	return out
}

// serveAptRepo builds the guest's local apt repository (harness.BuildAptRepo,
// within timeout, logging to t) and serves it on the host's loopback until
// the test ends; the guest reaches it through the server's GuestFwd.
func serveAptRepo(t *testing.T, timeout time.Duration, o harness.AptRepoOptions) (*harness.AptRepo, *harness.AptRepoServer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if o.Log == nil {
		o.Log = func(s string) { t.Log(s) }
	}
	repo, err := harness.BuildAptRepo(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("apt repository: %v", repo.Installs)
	srv, err := harness.ServeAptRepo(repo.Dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return repo, srv
}

// aptLocalRepoConfig is the user-data's apt section that makes the test's
// local repository (serveAptRepo) the guest's only source: primary and
// security mirrors, and suite as cloudroot-test.list with the repository's
// signing key.
func aptLocalRepoConfig(repo *harness.AptRepo, suite string) string {
	mirror := repo.GuestURL()
	return `apt:
  preserve_sources_list: false
  primary:
    - arches: [default]
      uri: ` + mirror + `
  security:
    - arches: [default]
      uri: ` + mirror + `
  sources:
    cloudroot-test.list:
      source: "deb ` + mirror + ` ` + suite + ` main"
      key: |
` + indent(repo.KeyArmored, "        ") + "\n"
}

// wantHostKeysServed checks the three host keys on the disk (root's, 0600)
// against what the guest's sshd served (the fact script's ssh-keyscan
// fingerprints, read through facts) and that ssh was active.
func wantHostKeysServed(t *testing.T, d *disk, facts func(string) string) {
	t.Helper()
	for _, kt := range []string{"rsa", "ecdsa", "ed25519"} {
		d.wantMode("/etc/ssh/ssh_host_"+kt+"_key", 0o600, 0, 0)
		file, sshd := facts("hostkey-"+kt+".file"), facts("hostkey-"+kt+".sshd")
		if !strings.HasPrefix(file, "SHA256:") || file != sshd {
			t.Errorf("%s host key: the file's fingerprint is %q, sshd serves %q", kt, file, sshd)
		}
	}
	if got := facts("ssh-active.txt"); got != "active" {
		t.Errorf("systemctl is-active ssh = %q", got)
	}
}
