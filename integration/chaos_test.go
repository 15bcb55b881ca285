package integration

import (
	"context"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cloudroot/cloudroot/integration/harness"
)

// The chaos campaign (`just chaos N`): N times, boot a fresh copy of the
// suite's busybox root from a seed, cut the power (SIGKILL of QEMU) at a
// random console line of the first boot, boot again without a fault and
// check that the machine is provisioned as if nothing had happened.
//
// CLOUDROOT_CHAOS is N (default 3, the `just test` run); CLOUDROOT_CHAOS_SEED
// replays a campaign (the seed is printed at the start).

const chaosIID = "iid-chaos-001"

const chaosUserData = `#cloud-config
hostname: chaos
fqdn: chaos.cloudroot.test
ssh_genkeytypes: [ed25519]
users:
  - default
  - name: alice
    gecos: Alice Chaos
    groups: [adm, chaosgroup]
    sudo: ALL=(ALL) NOPASSWD:ALL
    shell: /bin/sh
    ssh_authorized_keys:
      - ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIChaosKeyChaosKeyChaosKeyChaosKeyChaosKe alice@chaos
  - name: bob
    groups: [chaosgroup]
    lock_passwd: false
    hashed_passwd: $6$chaos$Zm9vYmFyYmF6
groups: [chaosgroup]
write_files:
  - path: /etc/chaos/one.txt
    content: |
      chaos file one
    permissions: '0644'
  - path: /etc/chaos/big.txt
    encoding: b64
    content: %s
  - path: /etc/chaos/secret.txt
    content: only root
    permissions: '0600'
runcmd:
  - echo "runcmd ran" >> /var/log/chaos-runcmd.log
`

// chaosBig is the decoded content of /etc/chaos/big.txt (64 KiB): a file
// large enough that its write spans several blocks.
func chaosBig() []byte {
	var b strings.Builder
	for i := 0; b.Len() < 64<<10; i++ {
		fmt.Fprintf(&b, "line %06d of the chaos file\n", i)
	}
	return []byte(b.String())
}

func chaosSeedFiles() map[string][]byte {
	ud := fmt.Sprintf(chaosUserData, base64.StdEncoding.EncodeToString(chaosBig()))
	return map[string][]byte{
		"meta-data": meta(chaosIID, "chaos"),
		"user-data": []byte(ud),
	}
}

func chaosRuns(t *testing.T) (n int, seed uint64) {
	t.Helper()
	n = 3
	if s := os.Getenv("CLOUDROOT_CHAOS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			t.Fatalf("CLOUDROOT_CHAOS=%q: want a positive number of runs", s)
		}
		n = v
	}
	seed = uint64(time.Now().UnixNano())
	if s := os.Getenv("CLOUDROOT_CHAOS_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("CLOUDROOT_CHAOS_SEED=%q: %v", s, err)
		}
		seed = v
	}
	return n, seed
}

// killAt boots v and SIGKILLs QEMU once line number `line` (counted from 1)
// has been printed and jitter has passed. It returns the run and the console
// lines printed before the kill.
func (v *vm) killAt(o harness.BootOptions, line int, jitter time.Duration) (*harness.Run, []string) {
	v.t.Helper()
	v.boots++
	o.Kernel, o.Disk, o.Initramfs = v.a.Kernel, v.disk, v.a.Initramfs
	o.Timeout = 4 * bootTimeout
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var seen []string
	o.Output = harness.NewLineWriter(func(s string) {
		mu.Lock()
		defer mu.Unlock()
		if strings.Contains(s, "] harness: ") {
			return
		}
		seen = append(seen, s)
		if len(seen) == line {
			time.AfterFunc(jitter, cancel)
		}
	})
	if dir := filepath.Join(v.a.Dir, "integration"); os.MkdirAll(dir, 0o755) == nil {
		o.ConsoleLog = filepath.Join(dir, fmt.Sprintf("%s-boot%d.log", strings.ReplaceAll(v.t.Name(), "/", "_"), v.boots))
	}
	r, err := harness.Boot(ctx, o)
	if err != nil {
		v.t.Fatalf("boot %d: %v", v.boots, err)
	}
	mu.Lock()
	defer mu.Unlock()
	return r, slices.Clone(seen)
}

// TestChaos is the power-cut campaign.
func TestChaos(t *testing.T) {
	t.Parallel()
	n, seed := chaosRuns(t)
	t.Logf("chaos: %d runs, seed %d (replay: CLOUDROOT_CHAOS=%d CLOUDROOT_CHAOS_SEED=%d)", n, seed, n, seed)
	rng := rand.New(rand.NewPCG(seed, seed^0x636c6f7564726f6f))
	opts := harness.BootOptions{SeedKind: harness.SeedCDROMSCSI, Append: []string{"cloudroot.test.poweroff"}}

	// The calibration boot: an undisturbed first boot, whose console says
	// where cloudroot's part of the boot starts and how long it is.
	cal := newVM(t)
	o := opts
	o.Seed = cal.seed(chaosSeedFiles(), harness.SeedISO)
	r := cal.boot(o)
	wantPoweredOff(t, r)
	checkChaos(t, cal.image(), true)
	if t.Failed() {
		t.Fatalf("the undisturbed boot already fails; no campaign")
	}
	lines := strings.Split(strings.TrimRight(r.Console, "\n"), "\n")
	first := slices.IndexFunc(lines, func(s string) bool { return strings.Contains(s, "cloudroot-init starting") })
	if first < 0 {
		t.Fatalf("no \"cloudroot-init starting\" on the console of the undisturbed boot")
	}
	t.Logf("chaos: cut points drawn from console lines %d..%d", first+1, len(lines))

	// Every cut point is drawn before any run starts, so a seed names the
	// same campaign whatever -parallel runs it with.
	type cutPoint struct {
		line   int
		jitter time.Duration
	}
	cuts := make([]cutPoint, n)
	for i := range cuts {
		cuts[i].line = first + 1 + rng.IntN(len(lines)-first)
		cuts[i].jitter = time.Duration(rng.IntN(500)) * time.Millisecond
	}
	var mu sync.Mutex
	var failed []string
	// The runs are independent VMs on their own disks: they run -parallel
	// at a time (`just chaos N P`), the group waiting for all of them.
	t.Run("runs", func(t *testing.T) {
		for i, c := range cuts {
			name := fmt.Sprintf("run%03d-line%d", i+1, c.line)
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				defer func() {
					if t.Failed() {
						mu.Lock()
						failed = append(failed, name)
						mu.Unlock()
					}
				}()
				v := newVM(t)
				o := opts
				o.Seed = v.seed(chaosSeedFiles(), harness.SeedISO)
				cut, seen := v.killAt(o, c.line, c.jitter)
				last := ""
				if len(seen) > 0 {
					last = seen[len(seen)-1]
				}
				t.Logf("cut after %d console lines (+%s): %s; last line: %s", len(seen), c.jitter, cut.Summary(), last)
				finalStarted := slices.ContainsFunc(seen, func(s string) bool { return strings.Contains(s, "config stage rc=") })
				r := v.boot(o)
				wantPoweredOff(t, r)
				checkChaos(t, v.image(), !finalStarted)
			})
		}
	})
	slices.Sort(failed)
	t.Logf("chaos: %d runs, %d failed %q, seed %d", n, len(failed), failed, seed)
}

// checkChaos checks the provisioned state after the boots: every file the
// user-data asked for is whole, the account databases agree, every
// per-instance module has its semaphore, runcmd ran at most once (exactly
// once when runOnce: the cut came before the final stage could start).
func checkChaos(t *testing.T, d *disk, runOnce bool) {
	t.Helper()
	if h := d.hostname(); h != "chaos" {
		t.Errorf("/etc/hostname = %q, want chaos", h)
	}
	d.wantContent("/etc/chaos/one.txt", "chaos file one\n")
	d.wantContent("/etc/chaos/big.txt", string(chaosBig()))
	d.wantContent("/etc/chaos/secret.txt", "only root")
	d.wantMode("/etc/chaos/secret.txt", 0o600, 0, 0)

	pw, gr := d.passwd(), d.groups()
	shadow := d.read("/etc/shadow")
	sh := harness.ParseShadow([]byte(shadow))
	for _, u := range []string{"root", "alice", "bob"} {
		if _, ok := pw[u]; !ok {
			t.Errorf("%s missing from /etc/passwd", u)
		}
	}
	for u := range pw {
		if _, ok := sh[u]; !ok {
			t.Errorf("%s is in /etc/passwd but not in /etc/shadow", u)
		}
	}
	if f := sh["bob"]; !strings.HasPrefix(f, "$6$chaos$") {
		t.Errorf("bob's shadow entry is %s, want the hashed_passwd", harness.PasswordState(f))
	}
	if g, ok := gr["chaosgroup"]; !ok || !slices.Contains(g.Members, "alice") || !slices.Contains(g.Members, "bob") {
		t.Errorf("group chaosgroup = %+v, want members alice and bob", g)
	}
	if g := harness.Groups(gr, "alice"); !slices.Contains(g, "adm") {
		t.Errorf("alice's groups = %q, want adm", g)
	}
	d.wantContains("/etc/sudoers.d/90-cloud-init-users", "alice ALL=(ALL) NOPASSWD:ALL")
	d.wantContains("/home/alice/.ssh/authorized_keys", "ChaosKeyChaosKey")
	d.wantContains("/etc/ssh/ssh_host_ed25519_key.pub", "ssh-ed25519 ")
	for _, p := range []string{"/etc/passwd", "/etc/group", "/etc/shadow", "/etc/hostname", "/etc/hosts"} {
		if s, ok := d.readOpt(p); ok && s == "" {
			t.Errorf("%s is empty", p)
		}
	}
	if ents, err := d.im.ReadDir("/etc"); err == nil {
		for _, e := range ents {
			if strings.HasPrefix(e, ".cloudroot-accounts.") || strings.Contains(e, ".cloudroot-new.") {
				t.Errorf("account commit left behind: /etc/%s", e)
			}
		}
	}
	for _, m := range []string{"write_files", "users_groups", "ssh", "set_hostname", "runcmd", "scripts_user"} {
		d.wantExists("/var/lib/cloud/instances/" + chaosIID + "/sem/config_" + m)
	}
	runs := 0
	if s, ok := d.readOpt("/var/log/chaos-runcmd.log"); ok {
		runs = strings.Count(s, "runcmd ran\n")
	}
	switch {
	case runs > 1:
		t.Errorf("runcmd ran %d times, want at most once", runs)
	case runs == 0 && runOnce:
		t.Errorf("runcmd never ran, though the cut came before the final stage")
	case runs == 0:
		t.Logf("runcmd did not run: the cut came while scripts_user held its semaphore (at most once, documented)")
	}
	d.wantStagesDone(d.status(), true)
}
