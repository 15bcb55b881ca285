package cli

import (
	"io/fs"
	"os/exec"
	"path"
	"strings"
	"testing"

	"github.com/cloudroot/cloudroot/templates"
)

// TestInstallTemplates checks what `cloudroot install` copies: every init
// script parses as a shell script and honours cloud-init=disabled, every
// systemd unit carries cloud-init's disable conditions, and every service is
// enabled by its [Install] section.
func TestInstallTemplates(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh to syntax-check the init scripts")
	}
	scripts, _ := fs.Glob(templates.FS, "openrc/*")
	sysv, _ := fs.Glob(templates.FS, "sysvinit/*")
	scripts = append(scripts, sysv...)
	if len(scripts) < 4 {
		t.Fatalf("init scripts: %v, want config and final for OpenRC and sysvinit", scripts)
	}
	for _, p := range scripts {
		t.Run(p, func(t *testing.T) {
			b, _ := templates.FS.ReadFile(p)
			cmd := exec.Command(sh, "-n")
			cmd.Stdin = strings.NewReader(string(b))
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("sh -n: %v: %s", err, out)
			}
			for _, want := range []string{"cloud-init=disabled", "/etc/cloud/cloud-init.disabled", "/usr/lib/cloudroot/cloudroot-agent modules --mode "} {
				if !strings.Contains(string(b), want) {
					t.Errorf("lacks %q", want)
				}
			}
			if strings.HasPrefix(p, "sysvinit/") && !strings.Contains(string(b), "### BEGIN INIT INFO") {
				t.Error("no LSB header")
			}
		})
	}
	units, _ := fs.Glob(templates.FS, "systemd/*")
	for _, p := range units {
		t.Run(p, func(t *testing.T) {
			b, _ := templates.FS.ReadFile(p)
			s := string(b)
			if !strings.Contains(s, "[Unit]") {
				t.Error("no [Unit] section")
			}
			for _, want := range []string{"ConditionKernelCommandLine=!cloud-init=disabled", "ConditionPathExists=!/etc/cloud/cloud-init.disabled"} {
				if !strings.Contains(s, want) {
					t.Errorf("lacks %s", want)
				}
			}
			if path.Ext(p) == ".service" {
				in := parseInstall(b)
				if len(in.wantedBy)+len(in.requiredBy) == 0 {
					t.Error("[Install] enables it nowhere")
				}
			}
		})
	}
}
