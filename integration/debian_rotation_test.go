package integration

// TestDebianAdminPassRotation: issue 13's OpenStack case over two boots of
// the Debian 12 image against the metadata-service simulator (pkg/imdsserve
// on 127.0.0.1, the guest's 169.254.169.254 through guestfwd). The
// vendor-data moves set-passwords and phone_home into the config stage at
// frequency always; the jinja user-data sets root's password from
// ds.meta_data.meta.admin_pass and phones home to ...?unset=admin_pass with
// post: [instance_id], tries: 5. Between the boots the simulator's
// admin_pass changes from A to B, with the same instance: boot 2 must apply
// B (no cache deletion), and the phone-home server must see the POSTs of
// both boots.
//
// Boot 1 ends with power_state (per instance); boot 2 with a unit the first
// boot enabled, ordered after cloudroot-final.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cloudroot/cloudroot/integration/harness"
	"github.com/cloudroot/cloudroot/pkg/imdsserve"
)

const (
	rotationUUID  = "8d3c2b1a-4e5f-4a6b-9c7d-0e1f2a3b4c5d"
	adminPassA    = "Admin-pass-A-1f9c"
	adminPassB    = "Admin-pass-B-7e42"
	rotationPhone = "/phone_home"
)

// rotationVendorData is the provider's vendor-data: cloud.cfg's Debian
// config-stage list with set-passwords and phone_home first, always.
const rotationVendorData = `#cloud-config
cloud_config_modules:
  - [set-passwords, always]
  - [phone_home, always]
  - snap
  - ssh_import_id
  - keyboard
  - locale
  - grub_dpkg
  - apt_pipelining
  - apt_configure
  - ntp
  - timezone
  - disable_ec2_metadata
  - runcmd
  - byobu
`

// rotationUserData is the user's jinja cloud-config.
const rotationUserData = `## template: jinja
#cloud-config
chpasswd:
  expire: false
  users:
    - name: root
      password: "{{ ds.meta_data.meta.admin_pass }}"
      type: text
ssh_pwauth: true
phone_home:
  url: http://` + phoneHomeGuestIP + rotationPhone + `?unset=admin_pass
  post: [instance_id]
  tries: 5
write_files:
  - path: /etc/systemd/system/cloudroot-test-poweroff.service
    content: |
      [Unit]
      Description=Power off once the final stage is done (cloudroot's tests, boots after the first)
      After=cloudroot-final.service multi-user.target
      [Service]
      Type=oneshot
      ExecStart=/bin/sh -c 'cloud-init status --long > /var/lib/cloudroot-test/status-long-boot.txt 2>&1; sync'
      ExecStartPost=/bin/systemctl --no-block poweroff
      [Install]
      WantedBy=multi-user.target
runcmd:
  - mkdir -p /var/lib/cloudroot-test
  - systemctl enable cloudroot-test-poweroff.service
power_state:
  mode: poweroff
  delay: now
  message: cloudroot rotation boot 1 powering off
  timeout: 120
`

func rotationMetaData(t *testing.T, adminPass string) string {
	t.Helper()
	md, err := json.Marshal(map[string]any{
		"uuid":              rotationUUID,
		"hostname":          "rotate.novalocal",
		"name":              "rotate",
		"availability_zone": "nova",
		"launch_index":      0,
		"project_id":        "4b1c6e0f9a2d4e7b8c3f5a6d7e8f9a0b",
		"meta":              map[string]string{"admin_pass": adminPass},
	})
	if err != nil {
		t.Fatal(err)
	}
	return string(md)
}

func TestDebianAdminPassRotation(t *testing.T) {
	t.Parallel()
	a := artifacts(t)
	needDebianImage(t, a)
	needTools(t, "nc")
	vd, err := json.Marshal(map[string]string{"cloud-init": rotationVendorData})
	if err != nil {
		t.Fatal(err)
	}
	tree := writeTree(t, map[string]string{
		"openstack/2018-08-27/meta_data.json":   rotationMetaData(t, adminPassA),
		"openstack/2018-08-27/user_data":        rotationUserData,
		"openstack/2018-08-27/vendor_data.json": string(vd),
		"latest/meta-data/instance-id":          "i-0000007b",
		"latest/meta-data/local-hostname":       "rotate.novalocal",
	})
	srv, run := startIMDS(t, imdsserve.CloudOpenStack, tree, false)
	phone, err := harness.ServePosts(500)
	if err != nil {
		t.Fatal(err)
	}
	defer phone.Close()
	dir := t.TempDir()
	v := &vm{t: t, a: a, dir: dir, disk: filepath.Join(dir, "debian.img")}
	if err := harness.CopyDisk(a.Debian, v.disk); err != nil {
		t.Fatal(err)
	}
	// Both boots through the disk's own GRUB (SeaBIOS), whose menu has
	// no_timer_check (under TCG on a loaded host the kernel's IO-APIC
	// timer check can fail and panic before anything of ours runs).
	opts := harness.BootOptions{DiskBoot: true, SMBIOSProduct: "OpenStack Nova", SMBIOSUUID: rotationUUID, Timeout: 25 * time.Minute,
		GuestFwd: append(imdsFwd(run.Port()), harness.GuestFwd{GuestIP: phoneHomeGuestIP, GuestPort: 80, HostPort: phone.Port()})}

	start := time.Now()
	r1 := v.boot(opts)
	t.Logf("boot 1: QEMU start to exit %.1fs", time.Since(start).Seconds())
	wantPoweredOff(t, r1)
	wantConsole(t, r1, "cloudroot rotation boot 1 powering off")
	posts1 := phone.Posts()
	d := v.image()
	rootHash := func() string {
		t.Helper()
		return parseShadow(d.read("/etc/shadow"))["root"].Hash
	}
	if h := rootHash(); !verifiesPassword(h, adminPassA) {
		t.Fatalf("after boot 1, root's shadow hash (%s) does not verify admin_pass A", harness.PasswordState(h))
	}
	d.wantContains("/etc/ssh/sshd_config.d/50-cloud-init.conf", "PasswordAuthentication yes")

	// The platform sets a new admin_pass and reboots the same instance.
	if err := os.WriteFile(filepath.Join(tree, "openstack/2018-08-27/meta_data.json"), []byte(rotationMetaData(t, adminPassB)), 0o644); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	r2 := v.boot(opts)
	t.Logf("boot 2: QEMU start to exit %.1fs", time.Since(start).Seconds())
	t.Logf("metadata service requests:\n%s", srv.Log())
	wantPoweredOff(t, r2)
	posts := phone.Posts()
	posts2 := posts[len(posts1):]
	d = v.image()

	t.Run("password", func(t *testing.T) {
		h := rootHash()
		if !verifiesPassword(h, adminPassB) {
			t.Errorf("after boot 2, root's shadow hash (%s) does not verify admin_pass B", harness.PasswordState(h))
		}
		if verifiesPassword(h, adminPassA) {
			t.Error("after boot 2, root's password is still admin_pass A")
		}
		sh := parseShadow(d.read("/etc/shadow"))
		if sh["root"].LastChg == "0" {
			t.Error("root's password is expired; chpasswd.expire is false")
		}
	})

	t.Run("phone_home", func(t *testing.T) {
		check := func(boot int, ps []harness.Post) {
			t.Helper()
			var ok []harness.Post
			for _, p := range ps {
				t.Logf("boot %d: %s %s?%s %v -> %d", boot, p.Method, p.Path, p.Query.Encode(), p.Form, p.Status)
				if p.Status == 200 {
					ok = append(ok, p)
				}
			}
			if len(ok) == 0 {
				t.Errorf("boot %d: the phone-home server answered no POST with 200 (%d request(s))", boot, len(ps))
				return
			}
			for _, p := range ok {
				if p.Method != "POST" || p.Path != rotationPhone || p.Query.Get("unset") != "admin_pass" {
					t.Errorf("boot %d: %s %s?%s, want POST %s?unset=admin_pass", boot, p.Method, p.Path, p.Query.Encode(), rotationPhone)
				}
				if strings.Join(p.Order, ",") != "instance_id" || p.Form.Get("instance_id") != rotationUUID {
					t.Errorf("boot %d: form %v, want instance_id=%s only", boot, p.Form, rotationUUID)
				}
			}
		}
		check(1, posts1)
		check(2, posts2)
		// As in cloud-init: boot 1 runs phone_home twice, in the config
		// stage (always: no semaphore; its first POST answered 500 and
		// retried) and in the final stage (per instance, not run yet);
		// boot 2 once, in the config stage.
		status := func(ps []harness.Post) []int {
			var c []int
			for _, p := range ps {
				c = append(c, p.Status)
			}
			return c
		}
		if got := status(posts1); !slices.Equal(got, []int{500, 200, 200}) {
			t.Errorf("boot 1: answers %v, want [500 200 200] (retry, then the final stage's per-instance run)", got)
		}
		if got := status(posts2); !slices.Equal(got, []int{200}) {
			t.Errorf("boot 2: answers %v, want [200] (the config stage's always run)", got)
		}
	})

	t.Run("status", func(t *testing.T) {
		got, _ := d.readOpt("/var/lib/cloudroot-test/status-long-boot.txt")
		t.Logf("boot 2 cloud-init status --long:\n%s", got)
		if !strings.Contains(got, "extended_status: done") {
			t.Errorf("boot 2's status is not a clean done:\n%s", got)
		}
		if !strings.Contains(r2.Console, "refreshed the restored datasource on boot") {
			t.Error("boot 2 did not refresh the OpenStack metadata (console)")
		}
	})
}
