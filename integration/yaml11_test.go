package integration

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cloudroot/cloudroot/integration/harness"
	"github.com/cloudroot/cloudroot/pkg/stages"
)

const (
	y11IID  = "iid-yaml11-001"
	y11Hash = "$6$cloudrootyaml$u2zBFw2Sn0B3nRCvK9ieOYvpT2t3Bho5l1SS/tqLjm8TXa3a2BdTI0/iVbLT3AtZGx.w0mEcm8zkQ0v0.qtE00"

	// y11UserData is read as PyYAML (YAML 1.1) reads it: a repeated key
	// keeps its last value, yes/no/on/off are booleans and 0640 is an
	// octal int (416).
	y11UserData = `#cloud-config
hostname: yaml11-first
write_files:
  - path: /etc/yaml11/dropped.txt
    content: the first write_files is replaced by the second
runcmd:
  - echo first-runcmd >> /var/log/yaml11-runcmd.log
users:
  - default
  - name: y11
    shell: /bin/sh
    lock_passwd: no
    no_create_home: no
    hashed_passwd: ` + y11Hash + `
  - name: y11sys
    system: on
hostname: yaml11-host
write_files:
  - path: /etc/yaml11/secret.conf
    content: "octal mode\n"
    permissions: 0640
  - path: /etc/yaml11/appended.txt
    content: "line one\n"
  - path: /etc/yaml11/appended.txt
    content: "line two\n"
    append: on
  - path: /etc/yaml11/deferred.txt
    content: "written in the final stage\n"
    owner: y11:y11
    defer: yes
runcmd:
  - echo second-runcmd >> /var/log/yaml11-runcmd.log
`
)

// TestYAML11UserData: a cloud-config with repeated keys, YAML 1.1
// booleans (yes/no/on/off) and an unquoted octal mode is applied as
// cloud-init (PyYAML) applies it: the last runcmd, write_files and
// hostname win; lock_passwd: no leaves the password usable; no_create_home:
// no creates the home (the string "no" would be true); system: on makes a
// system user without a home; append: on appends; defer: yes writes the
// file in the final stage, after the user that owns it exists;
// permissions: 0640 is mode 0640. Nothing of it is a problem in
// status.json (cloud-init is silent about repeated keys) but the integer
// mode, which cloud-init 26.x's schema wants as a string: one warning.
func TestYAML11UserData(t *testing.T) {
	t.Parallel()
	v := newVM(t)
	seed := v.seed(map[string][]byte{"meta-data": meta(y11IID, "y11-meta"), "user-data": []byte(y11UserData)}, harness.SeedISO)
	r := v.boot(harness.BootOptions{Seed: seed, SeedKind: harness.SeedCDROMSCSI, Append: []string{"cloudroot.test.poweroff"}})
	wantPoweredOff(t, r)
	wantConsole(t, r, "cloudroot-rootfs: final stage rc=0")

	d := v.image()
	d.wantContent(harness.InstanceIDPath, y11IID+"\n")
	if h := d.hostname(); h != "yaml11-host" {
		t.Errorf("/etc/hostname = %q, want yaml11-host (the last hostname key)", h)
	}

	// Repeated keys: the last value wins.
	d.wantAbsent("/etc/yaml11/dropped.txt")
	d.wantContent("/var/log/yaml11-runcmd.log", "second-runcmd\n")

	// permissions: 0640 (YAML 1.1 int 416).
	d.wantContent("/etc/yaml11/secret.conf", "octal mode\n")
	d.wantMode("/etc/yaml11/secret.conf", 0o640, 0, 0)

	// append: on.
	d.wantContent("/etc/yaml11/appended.txt", "line one\nline two\n")

	// lock_passwd: no — the hashed password is set and not locked.
	pw := d.passwd()
	u, ok := pw["y11"]
	if !ok {
		t.Fatalf("user y11 not in /etc/passwd:\n%s", d.read("/etc/passwd"))
	}
	shadow := harness.ParseShadow([]byte(d.read("/etc/shadow")))
	if f := shadow["y11"]; f != y11Hash {
		t.Errorf("y11's shadow password is %s, want the hashed_passwd, unlocked (lock_passwd: no)", harness.PasswordState(f))
	}

	// no_create_home: no — the home exists; system: on — a system user
	// (uid below 1000) without one.
	if fi, err := d.im.Stat("/home/y11"); err != nil || !fi.Mode.IsDir() {
		t.Errorf("/home/y11 is not a directory (no_create_home: no): %v", err)
	}
	if sys, ok := pw["y11sys"]; !ok {
		t.Errorf("user y11sys not in /etc/passwd")
	} else if sys.UID >= 1000 {
		t.Errorf("y11sys has uid %d, want a system uid (system: on)", sys.UID)
	}
	d.wantAbsent("/home/y11sys")

	// defer: yes — written in the final stage, owned by the user the
	// init stage created after write_files ran.
	d.wantContent("/etc/yaml11/deferred.txt", "written in the final stage\n")
	d.wantMode("/etc/yaml11/deferred.txt", 0o644, u.UID, u.GID)

	// Each repeat is logged where it is (cloudroot's notice; cloud-init
	// says nothing) ...
	log, _ := d.readOpt("/var/log/cloud-init.log")
	for _, key := range []string{"hostname", "write_files", "runcmd"} {
		// (the log is slog text: the message is quoted, the key's quotes escaped)
		want := fmt.Sprintf("line %d column 1: duplicate key", repeatLine(y11UserData, key))
		if !strings.Contains(log, want) {
			t.Errorf("/var/log/cloud-init.log lacks %q", want)
		}
	}
	// ... and no problem is recorded but the schema's warning (26.x's
	// one "cloud-config failed schema validation!"), about the integer
	// mode, which the log details.
	if want := "permissions: 416 is not of type 'string'"; !strings.Contains(log, want) {
		t.Errorf("/var/log/cloud-init.log lacks %q", want)
	}
	s := d.status()
	d.wantStagesDone(s, true)
	var others []string
	for _, e := range s.AllErrors() {
		if !strings.Contains(e, stages.SchemaWarning) {
			others = append(others, e)
		}
	}
	if len(others) > 0 {
		t.Errorf("status.json records problems, cloud-init would record none:\n  %s", strings.Join(others, "\n  "))
	}
}

// repeatLine is the 1-based line of the second top-level key in doc.
func repeatLine(doc, key string) int {
	seen := false
	for i, l := range strings.Split(doc, "\n") {
		if strings.HasPrefix(l, key+":") {
			if seen {
				return i + 1
			}
			seen = true
		}
	}
	return 0
}
