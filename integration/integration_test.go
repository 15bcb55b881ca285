package integration

import (
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/cloudroot/cloudroot/integration/harness"
)

const demoIID = "iid-cloudroot-demo-001"

func demoSeed(t *testing.T) map[string][]byte {
	t.Helper()
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	files, err := harness.SeedFiles(filepath.Join(root, "examples", "demo"))
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestFirstBoot boots the demo seed and checks everything it asks for.
func TestFirstBoot(t *testing.T) {
	t.Parallel()
	v := newVM(t)
	seed := v.seed(demoSeed(t), harness.SeedISO)
	r := v.boot(harness.BootOptions{Seed: seed, SeedKind: harness.SeedCDROMSCSI})
	wantPoweredOff(t, r)
	wantConsole(t, r, "cloudroot demo finished: ", "demo done, powering off")
	wantConsoleMatch(t, r, `cloudroot demo finished: \S+ at .+ via DataSourceNoCloud.*, up [0-9.]+s`)
	// Console progress: the root wait with its budget, the datasource
	// attempt, and the banner with the outcome (cmds/cloudroot-init/progress.go).
	wantConsoleMatch(t, r, `waiting for root device LABEL=cloudimg-rootfs \(up to \d+\S*\)`)
	wantConsoleMatch(t, r, `datasource NoCloud: looking for local seed`)
	wantConsoleMatch(t, r, `\[  OK  \] cloudroot: provisioned; datasource DataSourceNoCloud.*; instance-id iid-cloudroot-demo-001; [0-9.]+s since boot`)

	d := v.image()
	wantAnalyzableLog(t, d)
	if h := d.hostname(); h != "demo" {
		t.Errorf("/etc/hostname = %q, want demo", h)
	}
	hosts := d.read("/etc/hosts")
	if !hasFields(hosts, "127.0.1.1", "demo.cloudroot.test", "demo") {
		t.Errorf("/etc/hosts has no line `127.0.1.1 demo.cloudroot.test demo`:\n%s", hosts)
	}

	// Accounts.
	pw, gr := d.passwd(), d.groups()
	shadow := harness.ParseShadow([]byte(d.read("/etc/shadow")))
	deb, ok := pw["debian"]
	if !ok {
		t.Fatalf("default user debian not in /etc/passwd:\n%s", d.read("/etc/passwd"))
	}
	if deb.UID < 1000 || deb.Home != "/home/debian" {
		t.Errorf("debian = %+v, want uid >= 1000 and home /home/debian", deb)
	}
	if g := harness.Groups(gr, "debian"); !slices.Contains(g, "sudo") {
		t.Errorf("debian's groups = %q, want sudo among them", g)
	}
	alice, ok := pw["alice"]
	if !ok {
		t.Fatalf("alice not in /etc/passwd")
	}
	if g, ok := gr["alice"]; !ok || alice.GID != g.GID {
		t.Errorf("alice's primary gid %d is not group alice (%+v)", alice.GID, g)
	}
	if g := harness.Groups(gr, "alice"); !slices.Contains(g, "admins") || !slices.Contains(g, "adm") {
		t.Errorf("alice's groups = %q, want admins and adm", g)
	}
	if alice.Shell != "/bin/sh" || alice.Home != "/home/alice" || alice.Gecos != "Alice Example" {
		t.Errorf("alice = %+v, want shell /bin/sh, home /home/alice, gecos Alice Example", alice)
	}
	if f := shadow["alice"]; !strings.HasPrefix(f, "$6$cloudrootdemo$") {
		t.Errorf("alice's shadow entry is %s, want the hashed_passwd, unlocked", harness.PasswordState(f))
	}
	if f, ok := shadow["debian"]; !ok || !strings.HasPrefix(f, "!") {
		t.Errorf("debian's shadow entry is %s (present %v), want locked (lock_passwd defaults to true)", harness.PasswordState(f), ok)
	}
	svc, ok := pw["svc"]
	if !ok {
		t.Errorf("svc not in /etc/passwd")
	} else {
		if svc.UID >= 1000 || svc.UID == 0 {
			t.Errorf("svc uid = %d, want a system uid (1..999)", svc.UID)
		}
		if svc.Shell != "/usr/sbin/nologin" {
			t.Errorf("svc shell = %q, want /usr/sbin/nologin", svc.Shell)
		}
		if svc.Home != "" && svc.Home != "/" && svc.Home != "/nonexistent" {
			d.wantAbsent(svc.Home)
		}
	}
	if _, ok := gr["admins"]; !ok {
		t.Errorf("group admins missing")
	}
	if g, ok := gr["ops"]; !ok || !slices.Contains(g.Members, "root") {
		t.Errorf("group ops = %+v, want it with member root", g)
	}

	// sudo.
	const sudoers = "/etc/sudoers.d/90-cloud-init-users"
	d.wantMode(sudoers, 0o440, 0, 0)
	d.wantContains(sudoers, "alice ALL=(ALL) NOPASSWD:ALL", "debian ALL=(ALL) NOPASSWD:ALL")
	if s := d.read("/etc/sudoers"); !regexp.MustCompile(`(?m)^[#@]includedir\s+/etc/sudoers\.d\s*$`).MatchString(s) {
		t.Errorf("/etc/sudoers has no `#includedir /etc/sudoers.d`:\n%s", s)
	}

	// SSH.
	d.wantMode("/home/debian/.ssh", fs.ModeDir|0o700, deb.UID, deb.GID)
	d.wantMode("/home/debian/.ssh/authorized_keys", 0o600, deb.UID, deb.GID)
	d.wantContains("/home/debian/.ssh/authorized_keys", "MetaDataKeyForDefaultUser", "UserDataKeyForDefaultUser")
	d.wantMode("/home/alice/.ssh", fs.ModeDir|0o700, alice.UID, alice.GID)
	d.wantMode("/home/alice/.ssh/authorized_keys", 0o600, alice.UID, alice.GID)
	d.wantContains("/home/alice/.ssh/authorized_keys", "AliceKeyAliceKey")
	d.wantContains("/root/.ssh/authorized_keys",
		`no-port-forwarding,no-agent-forwarding,no-X11-forwarding,command="echo 'Please login as the user \"debian\" rather than the user \"root\".';echo;sleep 10;exit 142" ssh-ed25519 `,
		"MetaDataKeyForDefaultUser")
	for k, pub := range map[string]string{"ed25519": "ssh-ed25519 ", "ecdsa": "ecdsa-sha2-nistp256 "} {
		d.wantMode("/etc/ssh/ssh_host_"+k+"_key", 0o600, 0, 0)
		d.wantContains("/etc/ssh/ssh_host_"+k+"_key.pub", pub)
	}
	d.wantAbsent("/etc/ssh/ssh_host_rsa_key")
	d.wantContains("/etc/ssh/sshd_config.d/50-cloud-init.conf", "PasswordAuthentication yes")

	// write_files.
	if _, ok := gr["adm"]; !ok {
		t.Errorf("group adm missing")
	}
	d.wantContent("/etc/demo/plain.txt", "hello from cloudroot\nappended line\n")
	// cloud-init applies every write_files entry's permissions and owner,
	// defaults included (util.write_file always chmods; owner defaults to
	// root:root): the appending entry, which sets neither, leaves the file
	// 0644 root:root. The first entry's 0640 root:adm is checked on a seed
	// without the append in TestSecondBootAndNewInstance.
	d.wantMode("/etc/demo/plain.txt", 0o644, 0, 0)
	d.wantContent("/etc/demo/encoded.txt", "compressed and encoded\n")
	d.wantMode("/etc/demo/encoded.txt", 0o644, 0, 0)
	d.wantContent("/home/alice/notes.txt", "written after users exist")
	d.wantMode("/home/alice/notes.txt", 0o600, alice.UID, alice.GID)

	// bootcmd, runcmd.
	if l := d.wantLines("/var/log/demo-bootcmd.log", 1); len(l) == 1 && l[0] != "bootcmd ran for "+demoIID {
		t.Errorf("demo-bootcmd.log = %q, want %q", l[0], "bootcmd ran for "+demoIID)
	}
	if l := d.wantLines("/var/log/demo-runcmd.log", 1); len(l) == 1 && l[0] != "runcmd ran" {
		t.Errorf("demo-runcmd.log = %q, want %q", l[0], "runcmd ran")
	}
	d.wantContains("/var/log/demo-id-alice.txt", "uid=", "(alice)", "admins")

	// cloud-init's layout.
	d.wantLink(harness.InstanceLinkPath, "/var/lib/cloud/instances/"+demoIID)
	d.wantContent(harness.InstanceIDPath, demoIID+"\n")
	// A NoCloud seed in dsmode net: cloud-init 26.x's network stage
	// instancifies again and finds the id its init-local stage just wrote.
	d.wantContent(harness.PrevInstanceIDPath, demoIID+"\n")
	d.wantExists("/var/lib/cloud/instances/" + demoIID + "/sem/config_runcmd")
	d.wantExists(harness.BootFinishedPath)
	d.wantContains("/var/lib/cloud/instance/datasource", "DataSourceNoCloud")
	d.wantStagesDone(d.status(), true)
	if res, err := d.im.Result(); err != nil {
		t.Errorf("result.json: %v", err)
	} else if len(res.Errors) > 0 {
		t.Errorf("result.json errors: %q", res.Errors)
	}
	if st, err := d.im.State(); err != nil {
		t.Errorf("state file: %v", err)
	} else if st.InstanceID != demoIID || len(st.Timings) == 0 {
		t.Errorf("state file: instance_id %q with %d timings, want %s with timings", st.InstanceID, len(st.Timings), demoIID)
	}
}

// hasFields reports whether some line of text has exactly these fields.
func hasFields(text string, fields ...string) bool {
	for _, l := range strings.Split(text, "\n") {
		if slices.Equal(strings.Fields(l), fields) {
			return true
		}
	}
	return false
}

const smallUserData = `#cloud-config
hostname: again
ssh_genkeytypes: [ed25519]
write_files:
  - path: /etc/demo/plain.txt
    content: |
      plain
    permissions: '0640'
    owner: root:adm
bootcmd:
  - echo "bootcmd $INSTANCE_ID" >> /var/log/t-bootcmd.log
runcmd:
  - echo runcmd >> /var/log/t-runcmd.log
power_state:
  mode: poweroff
  delay: now
`

// TestSecondBootAndNewInstance boots one disk three times: twice as the
// same instance (per-instance modules do not run again, per-boot ones do),
// then as a new instance.
func TestSecondBootAndNewInstance(t *testing.T) {
	t.Parallel()
	const iid1, iid2 = "iid-again-001", "iid-again-002"
	v := newVM(t)
	seed1 := v.seed(map[string][]byte{"meta-data": meta(iid1, "again"), "user-data": []byte(smallUserData)}, harness.SeedISO)

	for boot := 1; boot <= 2; boot++ {
		o := harness.BootOptions{Seed: seed1, SeedKind: harness.SeedCDROMAHCI}
		if boot == 2 {
			// power_state_change runs once per instance, as in cloud-init:
			// the second boot of the instance is powered off by rcS.
			o.Append = []string{"cloudroot.test.poweroff"}
		}
		r := v.boot(o)
		wantPoweredOff(t, r)
		d := v.image()
		d.wantLines("/var/log/t-bootcmd.log", boot)
		d.wantLines("/var/log/t-runcmd.log", 1)
		d.wantLink(harness.InstanceLinkPath, "/var/lib/cloud/instances/"+iid1)
		d.wantContent(harness.InstanceIDPath, iid1+"\n")
		// dsmode net: previous-instance-id is the current id from the
		// first boot on (cloud-init's second instancify, in its network
		// stage); TestSeedCmdlineSeedfrom has the dsmode local case.
		d.wantContent(harness.PrevInstanceIDPath, iid1+"\n")
		if boot == 1 {
			d.wantContent("/etc/demo/plain.txt", "plain\n")
			d.wantMode("/etc/demo/plain.txt", 0o640, 0, d.groups()["adm"].GID)
		}
		d.wantStagesDone(d.status(), true)
		if t.Failed() {
			t.Fatalf("boot %d failed; not booting again", boot)
		}
	}

	seed2 := v.seed(map[string][]byte{"meta-data": meta(iid2, "again"), "user-data": []byte(smallUserData)}, harness.SeedISO)
	r := v.boot(harness.BootOptions{Seed: seed2, SeedKind: harness.SeedCDROMAHCI})
	wantPoweredOff(t, r)
	d := v.image()
	if l := d.wantLines("/var/log/t-bootcmd.log", 3); len(l) == 3 && l[2] != "bootcmd "+iid2 {
		t.Errorf("third bootcmd line = %q, want %q", l[2], "bootcmd "+iid2)
	}
	d.wantLines("/var/log/t-runcmd.log", 2)
	// A new instance, dsmode net: the new id too (init-local wrote it
	// before the network stage read it).
	d.wantContent(harness.PrevInstanceIDPath, iid2+"\n")
	d.wantContent(harness.InstanceIDPath, iid2+"\n")
	d.wantLink(harness.InstanceLinkPath, "/var/lib/cloud/instances/"+iid2)
	d.wantExists("/var/lib/cloud/instances/" + iid2 + "/sem/config_runcmd")
	d.wantExists("/var/lib/cloud/instances/" + iid1 + "/sem/config_runcmd")
	d.wantStagesDone(d.status(), true)
}

// TestSeedFAT reads the seed from a vfat filesystem labelled CIDATA on a
// virtio disk.
func TestSeedFAT(t *testing.T) {
	t.Parallel()
	v := newVM(t)
	ud := strings.Replace(smallUserData, "hostname: again", "hostname: fatseed", 1)
	seed := v.seed(map[string][]byte{"meta-data": meta("iid-fat-001", "fat-meta"), "user-data": []byte(ud)}, harness.SeedVFAT)
	r := v.boot(harness.BootOptions{Seed: seed, SeedKind: harness.SeedVirtio})
	wantPoweredOff(t, r)
	d := v.image()
	if h := d.hostname(); h != "fatseed" {
		t.Errorf("/etc/hostname = %q, want fatseed", h)
	}
	d.wantContent(harness.InstanceIDPath, "iid-fat-001\n")
	d.wantLines("/var/log/t-runcmd.log", 1)
	d.wantStagesDone(d.status(), true)
}

// TestSeedCmdlineSeedfrom has no seed device: ds=nocloud;s=file:///srv/seed/
// names a directory inside the root filesystem.
func TestSeedCmdlineSeedfrom(t *testing.T) {
	t.Parallel()
	v := newVM(t)
	ud := strings.Replace(smallUserData, "hostname: again", "hostname: fromdir", 1)
	im, err := harness.OpenImage(v.disk)
	if err != nil {
		t.Fatal(err)
	}
	if err := im.MkdirAll("/srv/seed"); err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"meta-data": meta("iid-seeddir-001", "dir-meta"), "user-data": []byte(ud)} {
		if err := im.WriteFile("/srv/seed/"+name, b); err != nil {
			t.Fatal(err)
		}
	}
	r := v.boot(harness.BootOptions{Append: []string{"ds=nocloud;s=file:///srv/seed/"}})
	wantPoweredOff(t, r)
	d := v.image()
	if h := d.hostname(); h != "fromdir" {
		t.Errorf("/etc/hostname = %q, want fromdir", h)
	}
	d.wantContent(harness.InstanceIDPath, "iid-seeddir-001\n")
	d.wantLines("/var/log/t-runcmd.log", 1)
	// /run (instance-data.json's subplatform) is gone after the power-off;
	// the instance's datasource file and the state file are on the disk.
	// The datasource file holds "DataSourceNoCloud: <str(datasource)>" as in
	// cloud-init, where str() is "DataSourceNoCloud [seed=...][dsmode=...]";
	// the subplatform ("seed-dir (...)") is kept in the state file.
	// ds=nocloud with a file:// seedfrom is dsmode local (cloud-init's
	// load_cmdline_data): instancified once, in init-local, so a first
	// boot leaves NO_PREVIOUS_INSTANCE_ID.
	d.wantContains("/var/lib/cloud/instance/datasource", "DataSourceNoCloud: DataSourceNoCloud [seed=/srv/seed/][dsmode=local]")
	d.wantContent(harness.PrevInstanceIDPath, harness.NoPreviousInstanceID+"\n")
	if st, err := d.im.State(); err != nil {
		t.Errorf("state file: %v", err)
	} else if st.Datasource.Subplatform != "seed-dir (/srv/seed/)" {
		t.Errorf("state file subplatform = %q, want %q", st.Datasource.Subplatform, "seed-dir (/srv/seed/)")
	}
	d.wantStagesDone(d.status(), true)
}

// TestCorruptUserData: user-data that is not YAML is reported, and the boot
// goes on with the meta-data.
func TestCorruptUserData(t *testing.T) {
	t.Parallel()
	v := newVM(t)
	seed := v.seed(map[string][]byte{
		"meta-data": meta("iid-corrupt-001", "corrupt-host"),
		"user-data": []byte("#cloud-config\nusers: [\n  - bad: [yaml"),
	}, harness.SeedISO)
	r := v.boot(harness.BootOptions{Seed: seed, SeedKind: harness.SeedCDROMSCSI, Append: []string{"cloudroot.test.poweroff"}})
	wantPoweredOff(t, r)
	wantConsole(t, r, "cloudroot-rootfs: final stage")
	d := v.image()
	if h := d.hostname(); h != "corrupt-host" {
		t.Errorf("/etc/hostname = %q, want corrupt-host (meta-data local-hostname)", h)
	}
	s := d.status()
	d.wantStagesDone(s, false)
	found := false
	for _, e := range s.AllErrors() {
		found = found || strings.Contains(strings.ToLower(e), "user-data") || strings.Contains(strings.ToLower(e), "userdata")
	}
	if !found {
		t.Errorf("status.json records no problem with the user-data; errors: %q", s.AllErrors())
	}
}

// TestNoSeed: without any datasource the root boots unprovisioned.
func TestNoSeed(t *testing.T) {
	t.Parallel()
	v := newVM(t)
	r := v.boot(harness.BootOptions{Append: []string{"cloudroot.test.poweroff"}})
	wantPoweredOff(t, r)
	wantConsole(t, r,
		"provisioning disabled",                // cloudroot-init
		"cloud-init is disabled for this boot", // the agent in the root
		"cloudroot-rootfs: final stage")
	d := v.image()
	d.wantAbsent(harness.InstanceLinkPath)
	d.wantContains("/var/log/cloud-init.log", "cloud-init is disabled for this boot")
}

// TestMissingRoot: a root= that matches nothing ends the boot with an
// explanation (and, with cloudroot.onfail=poweroff, a power-off).
func TestMissingRoot(t *testing.T) {
	t.Parallel()
	v := newVM(t)
	r := v.boot(harness.BootOptions{Append: []string{"root=LABEL=does-not-exist", "cloudroot.rootwait=2"}})
	wantExited(t, r)
	wantConsole(t, r, "cannot mount the root filesystem", "looked for root=LABEL=does-not-exist")
	wantConsoleMatch(t, r, `/dev/vda\S*\s+.*label="cloudimg-rootfs"`)
	if strings.Contains(r.Console, "switching root") {
		t.Errorf("the console says it switched root")
	}
}

// TestSeedSMBIOSSerialAndScripts takes the seed from the SMBIOS system
// serial (as `-smbios type=1,serial=ds=nocloud;...` gives it) with i= and h=
// overriding meta-data, runs a user-data `#!` script and image-supplied
// per-boot/per-instance scripts, and mounts the root read-only at handoff
// (`ro`), which the image's rcS remounts rw like a distro would.
func TestSeedSMBIOSSerialAndScripts(t *testing.T) {
	t.Parallel()
	v := newVM(t)
	im, err := harness.OpenImage(v.disk)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"/srv/smbios/meta-data":                           meta("iid-from-meta", "meta-name"),
		"/srv/smbios/user-data":                           []byte("#!/bin/sh\necho \"user script as $(id -un) iid=$INSTANCE_ID\" > /var/log/t-user-script.log\n"),
		"/var/lib/cloud/scripts/per-boot/10-boot":         []byte("#!/bin/sh\necho boot >> /var/log/t-per-boot.log\n"),
		"/var/lib/cloud/scripts/per-instance/10-instance": []byte("#!/bin/sh\necho instance >> /var/log/t-per-instance.log\n"),
	}
	for _, d := range []string{"/srv/smbios", "/var/lib/cloud/scripts/per-boot", "/var/lib/cloud/scripts/per-instance"} {
		if err := im.MkdirAll(d); err != nil {
			t.Fatal(err)
		}
	}
	for p, b := range files {
		if err := im.WriteFile(p, b); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"/var/lib/cloud/scripts/per-boot/10-boot", "/var/lib/cloud/scripts/per-instance/10-instance"} {
		if err := im.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	opts := harness.BootOptions{
		SMBIOSSerial: "ds=nocloud;s=file:///srv/smbios/;i=iid-from-serial;h=serial-name",
		Append:       []string{"ro", "cloudroot.test.poweroff"},
	}
	r := v.boot(opts)
	wantPoweredOff(t, r)
	wantConsole(t, r, "cloudroot-rootfs| status: done", "cloudroot-rootfs| cloud-init status rc=0")
	d := v.image()
	if h := d.hostname(); h != "serial-name" {
		t.Errorf("/etc/hostname = %q, want serial-name (h= in the SMBIOS serial)", h)
	}
	d.wantContent(harness.InstanceIDPath, "iid-from-serial\n")
	d.wantContent("/var/log/t-user-script.log", "user script as root iid=iid-from-serial\n")
	d.wantLines("/var/log/t-per-boot.log", 1)
	d.wantLines("/var/log/t-per-instance.log", 1)
	d.wantMode("/var/lib/cloud/instance/scripts/part-001", 0o700, 0, 0)

	// Same instance again: per-boot runs, per-instance and the user script do not.
	if err := im.WriteFile("/var/log/t-user-script.log", []byte("cleared\n")); err != nil {
		t.Fatal(err)
	}
	r = v.boot(opts)
	wantPoweredOff(t, r)
	d = v.image()
	d.wantLines("/var/log/t-per-boot.log", 2)
	d.wantLines("/var/log/t-per-instance.log", 1)
	d.wantContent("/var/log/t-user-script.log", "cleared\n")
}

// TestDatasourceCache boots one disk four times with a NoCloud seed in the
// root's seed directory, as cloud-init's cache rules decide:
//  1. first boot: searched, instance A;
//  2. same seed: NoCloud's local check (seed-dir instance-id) passes, the
//     cached answer is reused without a search;
//  3. the seed says B: the check fails, the search finds B, a new instance
//     (B's user-data sets manual_cache_clean: true);
//  4. the seed says C: manual_cache_clean trusts the cache, the machine
//     stays instance B and per-instance modules do not run again.
func TestDatasourceCache(t *testing.T) {
	t.Parallel()
	v := newVM(t)
	writeSeed := func(iid, ud string) {
		t.Helper()
		im, err := harness.OpenImage(v.disk)
		if err != nil {
			t.Fatal(err)
		}
		if err := im.MkdirAll("/var/lib/cloud/seed/nocloud"); err != nil {
			t.Fatal(err)
		}
		for name, b := range map[string][]byte{"meta-data": meta(iid, "cached"), "user-data": []byte(ud)} {
			if err := im.WriteFile("/var/lib/cloud/seed/nocloud/"+name, b); err != nil {
				t.Fatal(err)
			}
		}
	}
	trusting := strings.Replace(smallUserData, "runcmd:\n", "manual_cache_clean: true\nruncmd:\n", 1)
	steps := []struct {
		iid, ud      string
		append       []string
		wantIID      string
		wantRestored string
		runcmds      int
	}{
		{"iid-cache-a", smallUserData, nil, "iid-cache-a", "", 1},
		// power_state ran once for A: rcS powers the second boot off.
		{"iid-cache-a", smallUserData, []string{"cloudroot.test.poweroff"}, "iid-cache-a", "restored from checked cache: DataSourceNoCloud", 1},
		{"iid-cache-b", trusting, nil, "iid-cache-b", "", 2},
		{"iid-cache-c", smallUserData, []string{"cloudroot.test.poweroff"}, "iid-cache-b", "restored from cache: DataSourceNoCloud", 2},
	}
	for i, s := range steps {
		writeSeed(s.iid, s.ud)
		r := v.boot(harness.BootOptions{Append: s.append})
		wantPoweredOff(t, r)
		d := v.image()
		d.wantContent(harness.InstanceIDPath, s.wantIID+"\n")
		d.wantLines("/var/log/t-runcmd.log", s.runcmds)
		d.wantLines("/var/log/t-bootcmd.log", i+1)
		st, err := d.im.State()
		switch {
		case err != nil:
			t.Errorf("boot %d: state file: %v", i+1, err)
		case s.wantRestored == "" && st.Restored != "":
			t.Errorf("boot %d: restored %q, want a search", i+1, st.Restored)
		case !strings.HasPrefix(st.Restored, s.wantRestored):
			t.Errorf("boot %d: restored %q, want %q...", i+1, st.Restored, s.wantRestored)
		}
		d.wantStagesDone(d.status(), true)
		if t.Failed() {
			t.Fatalf("boot %d failed; not booting again", i+1)
		}
	}
}

// TestSeedNetwork: NoCloud-net. `ds=nocloud-net;s=http://…/seed/` on the
// command line: the initramfs brings the network up for it and reads the
// seed from a server on the host (reached through guestfwd).
func TestSeedNetwork(t *testing.T) {
	t.Parallel()
	v := newVM(t)
	ud := strings.Replace(smallUserData, "hostname: again", "hostname: netseed", 1)
	srv, err := harness.ServeFiles(map[string][]byte{
		"/seed/meta-data": meta("iid-netseed-001", "net-meta"),
		"/seed/user-data": []byte(ud),
		// A vendor script (scripts_vendor, final stage): a vendor
		// cloud-config's lists would be replaced by user-data's.
		"/seed/vendor-data": []byte("#!/bin/sh\necho vendor >> /var/log/t-vendor.log\n"),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	r := v.boot(harness.BootOptions{
		Append:   []string{"ds=nocloud-net;s=http://" + imdsIP + "/seed/"},
		GuestFwd: imdsFwd(srv.Port()),
	})
	t.Logf("seed server requests: %s\n%s", srv, srv.Log())
	wantPoweredOff(t, r)
	for _, p := range []string{"/seed/meta-data", "/seed/user-data", "/seed/vendor-data"} {
		if n := srv.Count(p); n != 1 {
			t.Errorf("%s fetched %d time(s), want 1", p, n)
		}
	}
	d := v.image()
	if h := d.hostname(); h != "netseed" {
		t.Errorf("/etc/hostname = %q, want netseed", h)
	}
	d.wantContent(harness.InstanceIDPath, "iid-netseed-001\n")
	d.wantLines("/var/log/t-runcmd.log", 1)
	d.wantLines("/var/log/t-vendor.log", 1)
	// An http seed is found by cloud-init's network stage: the class is
	// DataSourceNoCloudNet (the instancify goldens of pkg/stages).
	d.wantContains("/var/lib/cloud/instance/datasource", "DataSourceNoCloudNet: DataSourceNoCloudNet [seed=http://"+imdsIP+"/seed/]")
	d.wantStagesDone(d.status(), true)
}
