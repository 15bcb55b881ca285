package integration

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cloudroot/cloudroot/integration/harness"
	"github.com/cloudroot/cloudroot/pkg/imdsserve"
	"github.com/cloudroot/cloudroot/pkg/seed"
)

// The faults of the chaos campaign that are not power cuts: each boot must
// reach the booted root's final stage and report (existing neighbours:
// TestCorruptUserData, TestNoSeed, TestUnreachableIMDS,
// TestMissingStorageDriver).

// wantReported checks that the boot went through switch_root to the final
// stage and that status.json says how it ended.
func wantReported(t *testing.T, v *vm, r *harness.Run) *disk {
	t.Helper()
	wantPoweredOff(t, r)
	wantConsole(t, r, "switching root", "cloudroot-rootfs: final stage")
	d := v.image()
	if b, err := d.im.ReadFile(harness.StatusPath); err != nil {
		t.Errorf("no status.json after the boot: %v", err)
	} else {
		t.Logf("status.json:\n%s", b)
	}
	return d
}

// TestFaultySeed: a NoCloud seed image cut short, or with its directory
// overwritten by garbage, is reported and the boot goes on.
func TestFaultySeed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		spoil func(b []byte) []byte
	}{
		// ISO9660 keeps its volume descriptors at 32 KiB: cut inside them.
		{"truncated", func(b []byte) []byte { return b[:34<<10] }},
		{"garbage", func(b []byte) []byte {
			rng := rand.New(rand.NewPCG(7, 7))
			for i := 32 << 10; i < len(b); i++ {
				b[i] = byte(rng.UintN(256))
			}
			return b
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := newVM(t)
			seed := v.seed(chaosSeedFiles(), harness.SeedISO)
			b, err := os.ReadFile(seed)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(seed, tc.spoil(b), 0o644); err != nil {
				t.Fatal(err)
			}
			r := v.boot(harness.BootOptions{Seed: seed, SeedKind: harness.SeedCDROMSCSI, Append: []string{"cloudroot.test.poweroff"}})
			d := wantReported(t, v, r)
			if h := d.hostname(); h == "chaos" {
				t.Errorf("hostname chaos came from a seed that cannot be read")
			}
		})
	}
}

// TestHostileSeedDisk: issue 25's two seed disks, made as `cloudroot seed
// make` makes them and then corrupted — a FAT32 disk whose root directory
// cluster is chained to itself in both FATs (before: fatal error: out of
// memory in go-diskfs's fat12 getClusterList, PID 1 gone), an ISO9660 disk
// whose root "." record has its name length flipped (before: panic: slice
// bounds out of range [33:32]). The boot must reach the root's final stage
// and power off, with the disk's failure in status.json.
func TestHostileSeedDisk(t *testing.T) {
	for _, tc := range []struct {
		name   string
		format seed.Format
		kind   string
		spoil  func(img []byte)
	}{
		{"vfat-root-loop", seed.FormatVFAT, harness.SeedVirtio, func(img []byte) {
			sector := int(binary.LittleEndian.Uint16(img[11:]))
			reserved := int(binary.LittleEndian.Uint16(img[14:]))
			fatSectors := int(binary.LittleEndian.Uint32(img[36:]))
			root := binary.LittleEndian.Uint32(img[44:])
			for i := range int(img[16]) {
				binary.LittleEndian.PutUint32(img[(reserved+i*fatSectors)*sector+int(root)*4:], root)
			}
		}},
		{"iso-root-record", seed.FormatISO, harness.SeedCDROMSCSI, func(img []byte) {
			root := int(binary.LittleEndian.Uint32(img[16*2048+156+2:])) * 2048
			img[root+32] ^= 0xff
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := newVM(t)
			p := filepath.Join(v.dir, "hostile-seed.img")
			md, err := seed.MetaData("iid-hostile-001", "hostile")
			if err != nil {
				t.Fatal(err)
			}
			if err := seed.Write(p, tc.format, seed.Files{MetaData: md, UserData: []byte("#cloud-config\nhostname: hostile\n")}); err != nil {
				t.Fatal(err)
			}
			img, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			tc.spoil(img)
			if err := os.WriteFile(p, img, 0o644); err != nil {
				t.Fatal(err)
			}
			r := v.boot(harness.BootOptions{Seed: p, SeedKind: tc.kind, Append: []string{"cloudroot.test.poweroff"}})
			d := wantReported(t, v, r)
			if h := d.hostname(); h == "hostile" {
				t.Errorf("hostname hostile came from a seed that cannot be read")
			}
			found := false
			for _, e := range d.status().AllErrors() {
				if strings.Contains(e, "corrupt or hostile volume") {
					found = true
				}
			}
			if !found {
				t.Errorf("status.json does not record the corrupt seed disk; errors: %q", d.status().AllErrors())
			}
		})
	}
}

// faultyIMDS serves an EC2 metadata tree on 127.0.0.1 through a fault:
// "5xx" answers 503 to everything, "garbage" answers 200 with random bytes,
// "slow" forwards to the real simulator after a delay per request.
func faultyIMDS(t *testing.T, fault string) int {
	t.Helper()
	needTools(t, "nc")
	const ver = "2021-03-23"
	tree := writeTree(t, map[string]string{
		ver + "/meta-data/instance-id":              "i-0fa017fa017fa0170",
		ver + "/meta-data/local-hostname":           "ip-10-0-0-7.ec2.internal",
		ver + "/meta-data/hostname":                 "ip-10-0-0-7.ec2.internal",
		ver + "/meta-data/local-ipv4":               "10.0.0.7",
		ver + "/user-data":                          dsUserData("slow-sim", true),
		ver + "/dynamic/instance-identity/document": `{"accountId": "123456789012", "availabilityZone": "us-east-1a", "instanceId": "i-0fa017fa017fa0170", "region": "us-east-1", "instanceType": "t3.micro", "privateIp": "10.0.0.7", "version": "2017-09-30"}`,
	})
	_, run := startIMDS(t, imdsserve.CloudEC2, tree, true)
	target, _ := url.Parse("http://127.0.0.1:" + strconv.Itoa(run.Port()))
	// Without X-Forwarded-For: the EC2 simulator, as AWS, refuses a token
	// PUT that carries one.
	proxy := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(target) }}
	rng := rand.New(rand.NewPCG(5, 5))
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch fault {
		case "5xx":
			http.Error(w, "service unavailable", http.StatusServiceUnavailable)
		case "garbage":
			b := make([]byte, 64+rng.IntN(4096))
			for i := range b {
				b[i] = byte(rng.UintN(256))
			}
			w.WriteHeader(http.StatusOK)
			w.Write(b)
		case "slow":
			time.Sleep(200 * time.Millisecond)
			proxy.ServeHTTP(w, r)
		case "late":
			// Slow but working: every request 1.5 s late. The detection
			// window (5 s) sees the first answer; after it the policy's
			// per-request timeout (10 s) and the search deadline (2 m)
			// let the whole crawl through (docs/security.md).
			time.Sleep(1500 * time.Millisecond)
			proxy.ServeHTTP(w, r)
		}
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().(*net.TCPAddr).Port
}

// TestIMDSFaults: a metadata service that answers 5xx, garbage, slowly
// (200 ms) or late (1.5 s per request). The first two end with the None
// fallback reported; the slow and the late one still provision.
func TestIMDSFaults(t *testing.T) {
	t.Parallel()
	for _, fault := range []string{"5xx", "garbage", "slow", "late"} {
		t.Run(fault, func(t *testing.T) {
			v := newVM(t)
			port := faultyIMDS(t, fault)
			r := v.boot(harness.BootOptions{SMBIOSUUID: ec2UUID, GuestFwd: imdsFwd(port), Append: []string{"cloudroot.test.poweroff"}, Timeout: 6 * time.Minute})
			d := wantReported(t, v, r)
			if fault == "slow" || fault == "late" {
				if h := d.hostname(); h != "slow-sim" {
					t.Errorf("/etc/hostname = %q, want slow-sim from the %s service's user-data", h, fault)
				}
				return
			}
			if h, ok := d.readOpt("/etc/imds/written.txt"); ok {
				t.Errorf("/etc/imds/written.txt exists (%q): provisioned from a %s service", h, fault)
			}
		})
	}
}

// TestFullRoot: a root filesystem with no space left. Writes fail and are
// reported; the boot still reaches the final stage.
func TestFullRoot(t *testing.T) {
	t.Parallel()
	v := newVM(t)
	im, err := harness.OpenImage(v.disk)
	if err != nil {
		t.Fatal(err)
	}
	// Bigger than the free space: debugfs writes what fits (not zeros,
	// which it would leave as holes).
	filler := bytes.Repeat([]byte{0x5a}, 256<<20)
	if err := im.WriteFile("/filler", filler); err != nil {
		t.Logf("filling the root: %v (what fitted stays)", err)
	}
	seed := v.seed(chaosSeedFiles(), harness.SeedISO)
	r := v.boot(harness.BootOptions{Seed: seed, SeedKind: harness.SeedCDROMSCSI, Append: []string{"cloudroot.test.poweroff"}})
	wantPoweredOff(t, r)
	wantConsole(t, r, "switching root", "cloudroot-rootfs: final stage")
	if !strings.Contains(strings.ToLower(r.Console), "no space left on device") {
		t.Errorf("the console never says the root is full")
	}
}
