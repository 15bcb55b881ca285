package integration

import (
	"strings"
	"testing"

	"github.com/cloudroot/cloudroot/integration/harness"
)

// udYAML11 is read as cloud-init's PyYAML reads it: hostname and runcmd are
// given twice (the last value wins, the part is not dropped), `yes`/`on`
// are booleans, 0640 is an octal mode.
const udYAML11 = `#cloud-config
hostname: yaml-first
write_files:
  - path: /etc/yaml11/secret
    permissions: 0640
    content: secret
  - path: /etc/yaml11/flags
    content: "a\n"
  - path: /etc/yaml11/flags
    append: yes
    content: "b\n"
users:
  - name: yamlsys
    system: on
runcmd:
  - echo first >> /var/log/yaml11.log
hostname: yaml-last
runcmd:
  - echo last >> /var/log/yaml11.log
`

func TestUserDataYAML11(t *testing.T) {
	v := newVM(t)
	seed := v.seed(map[string][]byte{"meta-data": meta("iid-yaml11", "yaml-meta"), "user-data": []byte(udYAML11)}, harness.SeedISO)
	r := v.boot(harness.BootOptions{Seed: seed, SeedKind: harness.SeedCDROMSCSI, Append: []string{"cloudroot.test.poweroff"}})
	wantPoweredOff(t, r)
	wantConsole(t, r, "cloudroot-rootfs: final stage rc=0")

	d := v.image()
	if h := d.hostname(); h != "yaml-last" {
		t.Errorf("/etc/hostname = %q, want yaml-last (the repeated key's last value)", h)
	}
	d.wantContent("/etc/yaml11/secret", "secret")
	d.wantMode("/etc/yaml11/secret", 0o640, 0, 0)
	d.wantContent("/etc/yaml11/flags", "a\nb\n")
	if u, ok := d.passwd()["yamlsys"]; !ok || u.UID >= 1000 {
		t.Errorf("yamlsys = %+v (present %v), want a system user (system: on)", u, ok)
	}
	if l := d.wantLines("/var/log/yaml11.log", 1); len(l) == 1 && l[0] != "last" {
		t.Errorf("yaml11.log = %q, want only the last runcmd", l)
	}
	log, _ := d.readOpt("/var/log/cloud-init.log")
	for _, want := range []string{"line 17 column 1: duplicate key", "line 18 column 1: duplicate key"} {
		if !strings.Contains(log, want) {
			t.Errorf("/var/log/cloud-init.log lacks %q", want)
		}
	}
	// cloud-init says nothing about a repeated key: no error, no
	// recoverable error, status stays "done".
	s := d.status()
	d.wantStagesDone(s, true)
	if e := s.AllErrors(); len(e) > 0 {
		t.Errorf("status.json errors and recoverable errors: %q", e)
	}
}
