package integration

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/cli"
)

// wantAnalyzableLog checks a booted guest's /var/log/cloud-init.log holds
// cloud-init's reporting events for every stage (the initramfs's part
// carried across switch_root), that cloudroot's analyze blame and plot read
// it, and, with CLOUDINIT_SRC set and root, that upstream's own
// `analyze show` and `blame` list every module the log says ran.
func wantAnalyzableLog(t *testing.T, d *disk) {
	t.Helper()
	log := d.read("/var/log/cloud-init.log")
	for _, st := range []string{"init-local", "init-network", "modules-config", "modules-final"} {
		if !regexp.MustCompile(`(?m)^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} - handlers\.py\[DEBUG\]: finish: ` + st + `: (SUCCESS|FAIL): `).MatchString(log) {
			t.Errorf("cloud-init.log has no finish event for %s", st)
		}
	}
	var mods []string
	for _, m := range regexp.MustCompile(`finish: [\w-]+/config-(\w+): `).FindAllStringSubmatch(log, -1) {
		mods = append(mods, m[1])
	}
	if len(mods) == 0 {
		t.Fatal("cloud-init.log has no module events")
	}
	// A root holding the guest's log, hand-off state (its instance mirror)
	// and status, for analyze plot's initramfs bars.
	root := t.TempDir()
	files := map[string]string{"/var/log/cloud-init.log": log}
	if iid, ok := d.readOpt("/var/lib/cloud/data/instance-id"); ok {
		if st, ok := d.readOpt("/var/lib/cloud/instances/" + strings.TrimSpace(iid) + "/cloudroot-state.json"); ok {
			files["/run/cloud-init/cloudroot/state.json"] = st
		}
	}
	if st, ok := d.readOpt("/var/lib/cloud/data/status.json"); ok {
		files["/var/lib/cloud/data/status.json"] = st
	}
	for name, body := range files {
		hp := filepath.Join(root, name)
		os.MkdirAll(filepath.Dir(hp), 0o755)
		if err := os.WriteFile(hp, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := filepath.Join(root, "var/log/cloud-init.log")
	for _, sub := range []string{"blame", "plot"} {
		var out, errb bytes.Buffer
		env := cli.DefaultEnv()
		env.Root = root
		env.Stdout, env.Stderr = &out, &errb
		if code := cli.Run(context.Background(), env, []string{"analyze", sub}); code != 0 {
			t.Errorf("cloudroot analyze %s: exit %d: %s", sub, code, errb.String())
		}
		if sub == "plot" {
			for _, bar := range []string{`data-name="initramfs: drivers"`, `data-name="switch_root"`, `data-name="init-local/search-NoCloud"`} {
				if !strings.Contains(out.String(), bar) {
					t.Errorf("analyze plot has no %s", bar)
				}
			}
			// Kept beside the console log for a look.
			if b := os.Getenv("CLOUDROOT_BUILD"); b != "" {
				os.WriteFile(filepath.Join(b, "integration", t.Name()+".boot.svg"), out.Bytes(), 0o644)
			}
		}
		for _, m := range mods {
			want := "config-" + m
			if !strings.Contains(out.String(), want) {
				t.Errorf("cloudroot analyze %s lacks %s", sub, want)
			}
		}
	}
	src := os.Getenv("CLOUDINIT_SRC")
	if src == "" || os.Geteuid() != 0 {
		t.Log("CLOUDINIT_SRC unset or not root: upstream analyze not run")
		return
	}
	script, _ := filepath.Abs("../scripts/upstream-cloudinit.sh")
	for _, sub := range []string{"show", "blame"} {
		out, err := exec.Command(script, "analyze", sub, "-i", p).CombinedOutput()
		if err != nil {
			t.Errorf("upstream analyze %s: %v\n%s", sub, err, out)
			continue
		}
		for _, m := range mods {
			if !bytes.Contains(out, []byte("config-"+m)) {
				t.Errorf("upstream analyze %s lacks config-%s:\n%s", sub, m, out)
			}
		}
	}
}
