package integration

// TestDebianVendorModules boots build/debian-12.img with a user-data using
// modules of the vendor family on the real Debian: disable_ec2_metadata
// (the reject route, seen by `ip route` in the guest), grub_dpkg (the
// install device reaches debconf's database) and write_files' deferred
// `source` entries fetched from a server on the host's 127.0.0.1 through
// guestfwd (headers sent; a missing source falls back to its content).

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cloudroot/cloudroot/integration/harness"
)

const vendorUserData = `#cloud-config
disable_ec2_metadata: true
grub_dpkg:
  enabled: true
  grub-pc/install_devices: /dev/vda
  grub-pc/install_devices_empty: false
write_files:
  - path: /etc/cloudroot-test/fetched.txt
    source:
      uri: http://169.254.169.1:8080/payload
      headers: {X-Cloudroot-Test: vendor}
    content: not this
    defer: true
  - path: /etc/cloudroot-test/fallback.txt
    source: {uri: http://169.254.169.1:8080/missing}
    content: "inline fallback\n"
    defer: true
runcmd:
  - [sh, -c, "mkdir -p /var/lib/cloudroot-test && ip route show > /var/lib/cloudroot-test/routes.txt 2>&1; sync"]
power_state:
  mode: poweroff
  delay: now
  message: cloudroot TestDebianVendorModules powering off
  timeout: 120
`

func TestDebianVendorModules(t *testing.T) {
	t.Parallel()
	a := artifacts(t)
	if fi, err := os.Stat(a.Debian); err != nil || !fi.Mode().IsRegular() {
		msg := "no " + a.Debian + " (build it with `just debian-image`)"
		if os.Getenv(EnvIntegration) == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.Path+" "+r.Header.Get("X-Cloudroot-Test"))
		mu.Unlock()
		if r.URL.Path == "/payload" {
			w.Write([]byte("fetched from the host\n"))
			return
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	port, err := strconv.Atoi(srv.URL[strings.LastIndex(srv.URL, ":")+1:])
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	v := &vm{t: t, a: a, dir: dir, disk: filepath.Join(dir, "debian.img")}
	if err := harness.CopyDisk(a.Debian, v.disk); err != nil {
		t.Fatal(err)
	}
	seed := v.seed(map[string][]byte{
		"meta-data":      []byte("instance-id: iid-debian-vendor\nlocal-hostname: debian-vendor\n"),
		"user-data":      []byte(vendorUserData),
		"network-config": []byte(debianNetworkConfig),
	}, harness.SeedISO)
	start := time.Now()
	r := v.boot(harness.BootOptions{DiskBoot: true, Seed: seed, SeedKind: harness.SeedCDROM, Timeout: debianTimeout,
		GuestFwd: []harness.GuestFwd{{GuestIP: "169.254.169.1", GuestPort: 8080, HostPort: port}}})
	t.Logf("Debian boot: QEMU start to exit %.1fs", time.Since(start).Seconds())
	wantPoweredOff(t, r)
	d := v.image()

	t.Run("disable_ec2_metadata", func(t *testing.T) {
		d.wantContains("/var/lib/cloudroot-test/routes.txt", "prohibit 169.254.169.254")
	})
	t.Run("grub_dpkg", func(t *testing.T) {
		d.wantContains("/var/cache/debconf/config.dat", "Name: grub-pc/install_devices\n", "Value: /dev/vda\n")
	})
	t.Run("write_files_source", func(t *testing.T) {
		d.wantContent("/etc/cloudroot-test/fetched.txt", "fetched from the host\n")
		d.wantContent("/etc/cloudroot-test/fallback.txt", "inline fallback\n")
		mu.Lock()
		defer mu.Unlock()
		if len(seen) == 0 || seen[0] != "/payload vendor" {
			t.Errorf("the host server saw %q, want /payload with X-Cloudroot-Test: vendor first", seen)
		}
	})
}
