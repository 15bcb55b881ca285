package integration

// The SmartOS datasource on a KVM guest: the Joyent metadata protocol V2
// over the guest's second serial port. The port's host side is a unix
// socket (BootOptions.Serial1Socket) served by the fake metadata server of
// pkg/datasource/smartos/smartostest; DMI product "SmartDC HVM" makes
// pkg/identify pick the datasource. No network is involved.

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cloudroot/cloudroot/integration/harness"
	"github.com/cloudroot/cloudroot/pkg/datasource/smartos/smartostest"
)

// serveSmartOS serves values on a unix socket in a short temporary
// directory (sockaddr_un holds about 100 bytes) until the test ends.
func serveSmartOS(t *testing.T, values map[string]string) (*smartostest.Server, string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "cr-smartos-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	s := smartostest.New(values)
	l, err := s.Listen(filepath.Join(dir, "ttyS1.sock"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := l.Close(); err != nil {
			t.Errorf("metadata server: %v", err)
		}
	})
	return s, l.Path()
}

// TestSmartOS: a SmartOS KVM guest (DMI "SmartDC HVM") reads its metadata
// over /dev/ttyS1 and is provisioned from it: sdc:uuid is the instance id,
// cloud-init:user-data the user-data, root_authorized_keys the default
// user's keys, and the user-script is written into the instance's data
// directory and run by the default vendor-data's per-boot script. A second
// boot reads the metadata again and runs the changed user-script.
func TestSmartOS(t *testing.T) {
	t.Parallel()
	v := newVM(t)
	const (
		uuid        = "b6a1c0de-5f4e-4d3c-8b2a-190807060504"
		userScript  = "echo \"user-script $(cat /var/lib/cloud/data/instance-id)\" >> /var/log/smartos-user-script.log\n"
		userScript2 = "echo \"user-script v2 $(cat /var/lib/cloud/data/instance-id)\" >> /var/log/smartos-user-script.log\n"
	)
	srv, sock := serveSmartOS(t, map[string]string{
		"sdc:uuid":             uuid,
		"sdc:datacenter_name":  "us-test-1",
		"hostname":             "smartos-meta",
		"root_authorized_keys": dsKey + "\n",
		"cloud-init:user-data": dsUserData("smartos-sim", true),
		// No "#!" line: the datasource puts "#!/bin/bash" in front, as
		// cloud-init does.
		"user-script": userScript,
	})
	r := v.boot(harness.BootOptions{SMBIOSProduct: "SmartDC HVM", Serial1Socket: sock})
	reqs := srv.Requests()
	t.Logf("metadata requests over ttyS1:\n  %s", strings.Join(reqs, "\n  "))
	wantPoweredOff(t, r)

	// The conversation cloud-init has: a flush answered "invalid
	// command", NEGOTIATE V2, then GETs; nothing the server could not
	// parse (a corrupted frame on the emulated line).
	for _, want := range []string{"FLUSH", "NEGOTIATE", "GET sdc:uuid", "GET cloud-init:user-data", "GET user-script", "GET root_authorized_keys"} {
		if !slices.Contains(reqs, want) {
			t.Errorf("the metadata server was not asked %q", want)
		}
	}
	for _, q := range reqs {
		if strings.HasPrefix(q, "BAD ") {
			t.Errorf("the metadata server got a request it could not parse: %q", q)
		}
	}
	if strings.Contains(r.Console, ephemeralUpMsg) {
		t.Errorf("the initramfs brought a network up for SmartOS (its metadata comes over the serial port)")
	}

	d := v.image()
	d.wantContent(harness.InstanceIDPath, uuid+"\n")
	d.wantLink(harness.InstanceLinkPath, "/var/lib/cloud/instances/"+uuid)
	if h := d.hostname(); h != "smartos-sim" {
		t.Errorf("/etc/hostname = %q, want smartos-sim (user-data)", h)
	}
	d.wantContent("/etc/imds/written.txt", "written for smartos-sim\n")
	if l := d.wantLines("/var/log/imds-runcmd.log", 1); len(l) == 1 && l[0] != "runcmd smartos-sim "+uuid {
		t.Errorf("imds-runcmd.log = %q, want %q", l[0], "runcmd smartos-sim "+uuid)
	}
	d.wantContains("/var/lib/cloud/instance/datasource", "DataSourceSmartOS")

	// cloud-init's write_boot_content: the user-script in the instance's
	// data directory, 0700, with a shebang; /var/db/user-script links to
	// it; the default vendor-data runs it on every boot.
	script := "/var/lib/cloud/instances/" + uuid + "/data/user-script"
	d.wantContent(script, "#!/bin/bash\n"+userScript)
	d.wantMode(script, 0o700, 0, 0)
	d.wantLink("/var/db/user-script", script)
	if l := d.wantLines("/var/log/smartos-user-script.log", 1); len(l) == 1 && l[0] != "user-script "+uuid {
		t.Errorf("smartos-user-script.log = %q, want %q", l[0], "user-script "+uuid)
	}

	if deb, ok := d.passwd()["debian"]; !ok {
		t.Errorf("default user debian not in /etc/passwd")
	} else {
		d.wantMode("/home/debian/.ssh/authorized_keys", 0o600, deb.UID, deb.GID)
		d.wantContains("/home/debian/.ssh/authorized_keys", dsKey)
	}

	s := d.status()
	d.wantStagesDone(s, true)
	if !strings.Contains(s.Datasource, "DataSourceSmartOS") {
		t.Errorf("status.json datasource = %q, want it to name DataSourceSmartOS", s.Datasource)
	}
	if st, err := d.im.State(); err != nil {
		t.Errorf("state file: %v", err)
	} else if st.Datasource.Subplatform != "serial (/dev/ttyS1)" {
		t.Errorf("subplatform = %q, want serial (/dev/ttyS1)", st.Datasource.Subplatform)
	}
	if res, err := d.im.Result(); err != nil {
		t.Errorf("result.json: %v", err)
	} else if len(res.Errors) > 0 {
		t.Errorf("result.json errors: %q", res.Errors)
	}
	if t.Failed() {
		if b, err := d.im.ReadFile(harness.StatusPath); err == nil {
			t.Logf("status.json:\n%s", b)
		}
		return
	}

	// Second boot, same instance, a new user-script: the metadata is read
	// again over ttyS1, the user-script rewritten and run again (per
	// boot), runcmd not (per instance). power_state ran once: the test
	// switch powers the VM off.
	srv.Set("user-script", userScript2)
	r = v.boot(harness.BootOptions{SMBIOSProduct: "SmartDC HVM", Serial1Socket: sock, Append: []string{"cloudroot.test.poweroff"}})
	wantPoweredOff(t, r)
	if n := strings.Count(strings.Join(srv.Requests(), "\n"), "NEGOTIATE"); n != 2 {
		t.Errorf("NEGOTIATE V2 was asked %d time(s) in two boots, want 2", n)
	}
	d = v.image()
	d.wantContent(harness.InstanceIDPath, uuid+"\n")
	d.wantContent(script, "#!/bin/bash\n"+userScript2)
	d.wantMode(script, 0o700, 0, 0)
	if l := d.wantLines("/var/log/smartos-user-script.log", 2); len(l) == 2 && l[1] != "user-script v2 "+uuid {
		t.Errorf("smartos-user-script.log line 2 = %q, want %q", l[1], "user-script v2 "+uuid)
	}
	d.wantLines("/var/log/imds-runcmd.log", 1)
	d.wantStagesDone(d.status(), true)
}
