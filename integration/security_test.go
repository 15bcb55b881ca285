package integration

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/cloudroot/cloudroot/integration/harness"
	"github.com/cloudroot/cloudroot/pkg/imdsserve"
)

// TestEc2RedirectRefused: the IMDS answers user-data with a 302 to another
// host on the guest's network (169.254.169.77, forwarded to a recorder on the
// host). The initramfs's metadata client does not follow it — the IMDSv2
// token never reaches that host, its body never becomes user-data — says
// why, and the boot goes on with the None fallback (issue 15, item 1).
func TestEc2RedirectRefused(t *testing.T) {
	t.Parallel()
	v := newVM(t)
	const (
		ver     = "2021-03-23"
		iid     = "i-0badc0ffee0000001"
		otherIP = "169.254.169.77"
	)
	tree := writeTree(t, map[string]string{
		ver + "/meta-data/instance-id":    iid,
		ver + "/meta-data/local-hostname": "ip-172-31-9-10.eu-west-1.compute.internal",
		ver + "/dynamic/instance-identity/document": `{"accountId": "123456789012", "availabilityZone": "eu-west-1b", "instanceId": "` + iid +
			`", "region": "eu-west-1", "instanceType": "t3.micro", "privateIp": "172.31.9.10", "version": "2017-09-30"}`,
		ver + "/user-data": dsUserData("ec2-sim", true),
	})
	var mu sync.Mutex
	var stolen []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		stolen = append(stolen, r.Method+" "+r.URL.Path+" token="+r.Header.Get(imdsserve.TokenHeader))
		mu.Unlock()
		w.Write([]byte(dsUserData("attacker", true)))
	}))
	defer other.Close()
	lw := harness.NewLineWriter(func(s string) { t.Logf("%s", s) })
	defer lw.Flush()
	s, err := imdsserve.New(imdsserve.Options{Cloud: imdsserve.CloudEC2, Dir: tree, RequireToken: true, Log: lw})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	imds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/user-data") && r.Method == http.MethodGet {
			http.Redirect(w, r, "http://"+otherIP+r.URL.Path, http.StatusFound)
			return
		}
		s.ServeHTTP(w, r)
	}))
	defer imds.Close()
	r := v.boot(harness.BootOptions{
		SMBIOSUUID: ec2UUID,
		Append:     []string{"cloudroot.test.poweroff"},
		GuestFwd: []harness.GuestFwd{
			{GuestIP: imdsIP, GuestPort: 80, HostPort: portOf(t, imds.URL)},
			{GuestIP: otherIP, GuestPort: 80, HostPort: portOf(t, other.URL)},
		},
	})
	wantPoweredOff(t, r)
	mu.Lock()
	for _, q := range stolen {
		t.Errorf("the other host was reached: %s", q)
	}
	mu.Unlock()
	wantConsoleMatch(t, r, `redirect to another origin refused`)
	d := v.image()
	if h, ok := d.readOpt("/etc/imds/written.txt"); ok {
		t.Errorf("/etc/imds/written.txt exists (%q): redirected user-data was provisioned", h)
	}
	if h := d.hostname(); h == "attacker" {
		t.Errorf("hostname %q came from the other host", h)
	}
	logText, _ := d.readOpt("/var/log/cloud-init.log")
	if !strings.Contains(logText, "redirect to another origin refused") {
		t.Errorf("/var/log/cloud-init.log does not say the redirect was refused")
	}
}

// portOf is the port of an httptest server's URL.
func portOf(t *testing.T, u string) int {
	t.Helper()
	pu, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	p, err := strconv.Atoi(pu.Port())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSecretsStayPrivate: an OpenStack config drive whose meta_data.json
// carries admin_pass, and a user-data with a mistyped password
// (plain_text_passwd: [..]). Neither value reaches instance-data.json,
// status.json, /var/log/cloud-init.log or the console; the log the image
// ships (here made root:adm 0644 by bootcmd, before the initramfs writes
// it) keeps its group and mode (issue 15, item 2).
func TestSecretsStayPrivate(t *testing.T) {
	t.Parallel()
	v := newVM(t)
	const (
		uuid      = "5ec7e75a-0000-4000-8000-00000000000f"
		adminPass = "OsAdminPass77"
		userPass  = "AnnListPass88"
	)
	md, _ := json.Marshal(map[string]any{
		"uuid":        uuid,
		"hostname":    "sec-meta.novalocal",
		"name":        "sec-meta",
		"admin_pass":  adminPass,
		"public_keys": map[string]string{"imds-key": dsKey + "\n"},
	})
	ud := `#cloud-config
hostname: sec-sim
users:
  - default
  - name: ann
    plain_text_passwd: [` + userPass + `]
bootcmd:
  - touch /var/log/cloud-init.log && chgrp 4 /var/log/cloud-init.log && chmod 0644 /var/log/cloud-init.log
runcmd:
  - cp /run/cloud-init/instance-data.json /var/tmp/instance-data.json
power_state:
  mode: poweroff
  delay: now
`
	seed := v.seed(map[string][]byte{
		"openstack/2018-08-27/meta_data.json": md,
		"openstack/2018-08-27/user_data":      []byte(ud),
	}, harness.SeedConfigDrive)
	r := v.boot(harness.BootOptions{Seed: seed, SeedKind: harness.SeedCDROMAHCI})
	wantPoweredOff(t, r)
	d := v.image()
	if h := d.hostname(); h != "sec-sim" {
		t.Errorf("/etc/hostname = %q, want sec-sim (user-data)", h)
	}
	pub := d.read("/var/tmp/instance-data.json")
	if !strings.Contains(pub, "redacted for non-root user") {
		t.Errorf("instance-data.json was not copied or not redacted:\n%s", pub)
	}
	// status.json carries 26.x's one schema warning, without details (they
	// could hold secrets); cloud-init.log names the field, value redacted.
	status := d.read("/var/lib/cloud/data/status.json")
	if !strings.Contains(status, "cloud-config failed schema validation!") {
		t.Errorf("status.json does not report the invalid cloud-config:\n%s", status)
	}
	logText := d.read("/var/log/cloud-init.log")
	if !strings.Contains(logText, "users.1.plain_text_passwd: <redacted> is not of type 'string'") {
		t.Errorf("cloud-init.log does not name the mistyped password field:\n%s", logText)
	}
	for _, sec := range []string{adminPass, userPass} {
		for name, text := range map[string]string{"instance-data.json": pub, "status.json": status, "cloud-init.log": logText, "the console": r.Console} {
			if strings.Contains(text, sec) {
				t.Errorf("%s holds %q", name, sec)
			}
		}
	}
	d.wantMode("/var/log/cloud-init.log", 0o644, 0, 4)
}

// TestPlantedAuthorizedKeysLink: a user of the image made their
// ~/.ssh/authorized_keys a symlink to /etc/shadow; a new instance whose
// user-data gives that user keys (users_groups, in the initramfs, writing
// into /sysroot) leaves /etc/shadow alone, says why, and the boot goes on
// (issue 25 item 2). Boot 1 makes the user and plants the link, as the user
// could; boot 2 is the new instance.
func TestPlantedAuthorizedKeysLink(t *testing.T) {
	v := newVM(t)
	const plant = `#cloud-config
users:
  - name: mallory
runcmd:
  - mkdir -p /home/mallory/.ssh
  - ln -s /etc/shadow /home/mallory/.ssh/authorized_keys
  - chown mallory /home/mallory /home/mallory/.ssh
power_state: {mode: poweroff, delay: now}
`
	const keys = `#cloud-config
users:
  - name: mallory
    ssh_authorized_keys:
      - ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMalloryMalloryMalloryMalloryMalloryMa mallory@planted
power_state: {mode: poweroff, delay: now}
`
	seed1 := v.seed(map[string][]byte{"meta-data": meta("iid-plant-001", "plant"), "user-data": []byte(plant)}, harness.SeedISO)
	r := v.boot(harness.BootOptions{Seed: seed1, SeedKind: harness.SeedCDROMAHCI})
	wantPoweredOff(t, r)
	d := v.image()
	d.wantLink("/home/mallory/.ssh/authorized_keys", "/etc/shadow")
	before, err := d.im.Stat("/etc/shadow")
	if err != nil {
		t.Fatal(err)
	}
	if before.UID != 0 {
		t.Fatalf("/etc/shadow owned by %d after the first boot", before.UID)
	}
	shadow := d.read("/etc/shadow")
	if t.Failed() {
		t.FailNow()
	}

	seed2 := v.seed(map[string][]byte{"meta-data": meta("iid-plant-002", "plant"), "user-data": []byte(keys)}, harness.SeedISO)
	r = v.boot(harness.BootOptions{Seed: seed2, SeedKind: harness.SeedCDROMAHCI})
	wantPoweredOff(t, r)
	d = v.image()
	if got := d.read("/etc/shadow"); got != shadow {
		t.Errorf("/etc/shadow changed:\n%s", got)
	}
	d.wantMode("/etc/shadow", before.Mode, before.UID, before.GID)
	d.wantLink("/home/mallory/.ssh/authorized_keys", "/etc/shadow")
	d.wantContains("/var/log/cloud-init.log", "Not writing SSH authorized keys for user mallory: /home/mallory/.ssh/authorized_keys is a symlink")
	d.wantStagesDone(d.status(), true)
}
