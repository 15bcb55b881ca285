package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cloudroot/cloudroot/integration/harness"
)

// bootPathFacts records, after boot, what the boot-path checks need.
const bootPathFacts = `#!/bin/sh
out=/var/lib/cloudroot-bootpath
mkdir -p "$out"
ip -o link show >"$out/links.txt" 2>&1
systemctl show -p ActiveEnterTimestampMonotonic -p InactiveExitTimestampMonotonic -p Result networking.service >"$out/networking.txt" 2>&1
systemctl is-active ssh >"$out/ssh-active.txt" 2>&1
systemctl show -p ActiveState -p Result cloudroot-hostkeys.service >"$out/hostkeys-unit.txt" 2>&1
for t in rsa ecdsa ed25519; do
	# ssh-keyscan's 5 s timeout is short for a guest under TCG on a busy host: 30 s, three tries.
	for try in 1 2 3; do
		ssh-keyscan -T 30 -t $t 127.0.0.1 2>/dev/null | ssh-keygen -lf - | cut -d' ' -f2 >"$out/hostkey-$t.sshd" 2>&1
		[ -s "$out/hostkey-$t.sshd" ] && break
		sleep 2 # sshd re-executing on the reload for the RSA key made after it started
	done
	ssh-keygen -lf /etc/ssh/ssh_host_${t}_key.pub | cut -d' ' -f2 >"$out/hostkey-$t.file" 2>&1
done
sync
`

const bootPathUserData = `#cloud-config
hostname: bootpath
write_files:
  - path: /usr/local/sbin/cloudroot-bootpath-facts
    permissions: "0755"
    content: |
      ` + "{{FACTS}}" + `
runcmd:
  - [/usr/local/sbin/cloudroot-bootpath-facts]
power_state:
  mode: poweroff
  delay: now
  message: cloudroot boot-path check powering off
`

// TestDebianBootPath boots build/debian-12.img (just debian-image) by
// itself (SeaBIOS, its GRUB) the way a plain VM is: QEMU's default CPU (no RDRAND), no virtio-rng, no network
// configuration (the fallback). Host keys must exist and sshd serve them,
// the NIC keep its predictable name, and networking.service must not wait
// for a DHCPv6 server QEMU does not have. With cloudroot.hostkeys=defer the
// keys are made by cloudroot-hostkeys.service under systemd instead (the
// argument added to the disk copy's GRUB menu, harness.AppendGRUBCmdline).
func TestDebianBootPath(t *testing.T) {
	t.Parallel()
	a := artifacts(t)
	img := filepath.Join(a.Dir, "debian-12.img")
	if fi, err := os.Stat(img); err != nil || !fi.Mode().IsRegular() {
		t.Skip("no " + img + " (build it with `just debian-image`)")
	}
	for _, tc := range []struct {
		name    string
		append  []string
		machine string
		nic     string // the name systemd gives the NIC
	}{
		{"initramfs keys", nil, "", "enp0s2"},
		{"deferred keys", []string{"cloudroot.hostkeys=defer"}, "", "enp0s2"},
		// i440fx: ACPI hotplug slots, so the slot name wins.
		{"pc machine", nil, "pc", "ens"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			v := &vm{t: t, a: a, dir: dir, disk: filepath.Join(dir, "debian.img")}
			if err := harness.CopyDisk(img, v.disk); err != nil {
				t.Fatal(err)
			}
			ud := strings.Replace(bootPathUserData, "{{FACTS}}", strings.ReplaceAll(strings.TrimSpace(bootPathFacts), "\n", "\n      "), 1)
			seed := v.seed(map[string][]byte{
				"meta-data": []byte("instance-id: iid-bootpath\n"),
				"user-data": []byte(ud),
			}, harness.SeedISO)
			start := time.Now()
			// The disk boots through its own GRUB; the case's kernel
			// arguments go into the copy's GRUB menu.
			if err := harness.AppendGRUBCmdline(v.disk, tc.append...); err != nil {
				t.Fatal(err)
			}
			r := v.boot(harness.BootOptions{DiskBoot: true, Seed: seed, SeedKind: harness.SeedCDROM, CPU: "default", NoRNG: true,
				Machine: tc.machine, Timeout: 10 * time.Minute})
			t.Logf("QEMU start to exit %.1fs (%s)", time.Since(start).Seconds(), r.Accel)
			wantPoweredOff(t, r)
			d := v.image()
			fact := func(n string) string {
				s, ok := d.readOpt("/var/lib/cloudroot-bootpath/" + n)
				if !ok {
					t.Errorf("the guest recorded no %s", n)
				}
				t.Logf("%s: %s", n, strings.TrimSpace(s))
				return strings.TrimSpace(s)
			}
			// The predictable name, in the rendered config and on the system.
			links := fact("links.txt")
			nic := ""
			for l := range strings.SplitSeq(links, "\n") {
				if f := strings.Fields(l); len(f) > 1 && strings.HasPrefix(f[1], tc.nic) {
					nic = strings.TrimSuffix(f[1], ":")
				}
			}
			if nic == "" {
				t.Fatalf("ip link in the guest has no %s* NIC:\n%s", tc.nic, links)
			}
			d.wantContains("/etc/network/interfaces.d/50-cloud-init", "iface "+nic+" inet dhcp", "iface "+nic+" inet6 auto")
			if eni, _ := d.readOpt("/etc/network/interfaces.d/50-cloud-init"); strings.Contains(eni, "inet6 dhcp") || strings.Contains(eni, "eth0") {
				t.Errorf("50-cloud-init waits for DHCPv6 or pins eth0:\n%s", eni)
			}
			// networking.service started and did not run into its
			// 5-minute start timeout (the symptom of waiting for a
			// DHCPv6 server). No tighter bound: under TCG on a loaded
			// host a normal start takes from seconds to minutes.
			nt := fact("networking.txt")
			n := parseShow(nt)
			if r := showValue(nt, "Result"); r != "success" {
				t.Errorf("networking.service result %q", r)
			}
			if exit, enter := n["InactiveExitTimestampMonotonic"], n["ActiveEnterTimestampMonotonic"]; exit > 0 && enter-exit >= 290e6 {
				t.Errorf("networking.service took %.0fs to start: its start timeout", float64(enter-exit)/1e6)
			}
			if got := fact("ssh-active.txt"); got != "active" {
				t.Errorf("ssh is %q", got)
			}
			for _, kt := range []string{"rsa", "ecdsa", "ed25519"} {
				d.wantMode("/etc/ssh/ssh_host_"+kt+"_key", 0o600, 0, 0)
				if f, s := fact("hostkey-"+kt+".file"), fact("hostkey-"+kt+".sshd"); !strings.HasPrefix(f, "SHA256:") || f != s {
					t.Errorf("%s host key: file %q, sshd %q", kt, f, s)
				}
			}
			if tc.append != nil {
				if got := fact("hostkeys-unit.txt"); !strings.Contains(got, "ActiveState=active") {
					t.Errorf("cloudroot-hostkeys.service: %s", got)
				}
				wantConsole(t, r, "SSH host key generation deferred to the booted system")
			}
		})
	}
}

// showValue is one property of `systemctl show -p A -p B unit` output.
func showValue(s, key string) string {
	for l := range strings.SplitSeq(s, "\n") {
		if k, v, ok := strings.Cut(l, "="); ok && k == key {
			return v
		}
	}
	return ""
}

// parseShow reads `systemctl show -p A -p B unit` numbers.
func parseShow(s string) map[string]int64 {
	out := map[string]int64{}
	for l := range strings.SplitSeq(s, "\n") {
		k, v, ok := strings.Cut(l, "=")
		if !ok {
			continue
		}
		var n int64
		for _, c := range v {
			if c < '0' || c > '9' {
				n = -1
				break
			}
			n = n*10 + int64(c-'0')
		}
		if n >= 0 && v != "" {
			out[k] = n
		}
	}
	return out
}
