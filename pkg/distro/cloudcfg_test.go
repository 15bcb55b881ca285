package distro

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/cloudcfg/schema"
	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"
)

// TestDefaultCloudConfigGolden holds every variant's rendered cloud.cfg to
// upstream's rendering (testdata/cloudcfg, from scripts/goldens/cloudcfg.sh)
// as YAML data: the same keys, module lists per stage and system_info.
func TestDefaultCloudConfigGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/cloudcfg/*.cfg")
	if err != nil || len(files) == 0 {
		t.Fatalf("no goldens in testdata/cloudcfg (run scripts/goldens/cloudcfg.sh): %v", err)
	}
	seen := map[string]bool{}
	for _, p := range files {
		v := strings.TrimSuffix(filepath.Base(p), ".cfg")
		seen[v] = true
		t.Run(v, func(t *testing.T) {
			want := loadYAML(t, mustRead(t, p))
			out, err := CloudConfigForVariant(v)
			if err != nil {
				t.Fatal(err)
			}
			got := loadYAML(t, out)
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("cloud.cfg for %s differs from upstream's (-upstream +cloudroot):\n%s\nrendered:\n%s", v, d, out)
			}
			assertKnownModules(t, got)
		})
	}
	for _, v := range Variants {
		if !seen[v] {
			t.Errorf("variant %s has no golden in testdata/cloudcfg", v)
		}
	}
}

func TestDefaultCloudConfigFromOSRelease(t *testing.T) {
	for _, tc := range []struct{ osRelease, variant, distro string }{
		{"ID=debian\nVERSION_ID=12\n", "debian", "debian"},
		{"ID=ubuntu\nID_LIKE=debian\n", "ubuntu", "ubuntu"},
		{"ID=\"rocky\"\nID_LIKE=\"rhel centos fedora\"\n", "rocky", "rocky"},
		{"ID=\"rhel\"\n", "rhel", "rhel"},
		{"ID=ol\nID_LIKE=fedora\n", "rhel", "rhel"},
		{"ID=opensuse-leap\nID_LIKE=\"suse opensuse\"\n", "suse", "suse"},
		{"ID=amzn\n", "amazon", "amazon"},
		{"ID=pop\nID_LIKE=\"ubuntu debian\"\n", "ubuntu", "ubuntu"},
		{"ID=mycorp\nID_LIKE=debian\n", "debian", "debian"},
		{"ID=nothing-known\n", "unknown", "ubuntu"},
	} {
		in := ParseOSRelease([]byte(tc.osRelease))
		if got := in.Variant(); got != tc.variant {
			t.Errorf("%q: variant %s, want %s", tc.osRelease, got, tc.variant)
		}
		out, err := DefaultCloudConfig(in)
		if err != nil {
			t.Fatal(err)
		}
		m := loadYAML(t, out)
		si, _ := m["system_info"].(map[string]any)
		if si["distro"] != tc.distro {
			t.Errorf("%q: system_info.distro %v, want %s", tc.osRelease, si["distro"], tc.distro)
		}
	}
	if _, err := CloudConfigForVariant("plan9"); err == nil {
		t.Error("an unknown variant rendered without error")
	}
}

// assertKnownModules checks that each stage lists only module names of
// cloud-init's (cloudroot's registry answers for the ones it implements and
// the agent reports the rest as unsupported).
func assertKnownModules(t *testing.T, cfg map[string]any) {
	t.Helper()
	known := cloudInitModules()
	for _, stage := range []string{"cloud_init_modules", "cloud_config_modules", "cloud_final_modules"} {
		l, ok := cfg[stage].([]any)
		if !ok || len(l) == 0 {
			t.Errorf("%s missing or empty", stage)
			continue
		}
		for _, m := range l {
			if s, ok := m.(string); !ok || !known[s] {
				t.Errorf("%s: %v is not a cloud-init module", stage, m)
			}
		}
	}
}

// cloudInitModules is every cc_<name> module cloud-init 26.x ships.
func cloudInitModules() map[string]bool {
	m := map[string]bool{}
	for _, n := range strings.Fields(`ansible apk_configure apt_configure apt_pipelining bootcmd byobu
		ca_certs chef disable_ec2_metadata disk_setup fan final_message growpart grub_dpkg
		install_hotplug keyboard keys_to_console landscape locale lxd mcollective mounts ntp
		package_update_upgrade_install phone_home power_state_change puppet raspberry_pi reset_rmc
		resizefs resolv_conf rh_subscription rsyslog runcmd salt_minion scripts_per_boot
		scripts_per_instance scripts_per_once scripts_user scripts_vendor seed_random set_hostname
		set_passwords snap spacewalk ssh ssh_authkey_fingerprints ssh_import_id timezone
		ubuntu_autoinstall ubuntu_drivers ubuntu_pro update_etc_hosts update_hostname
		users_groups wireguard write_files write_files_deferred yum_add_repo zypper_add_repo`) {
		m[n] = true
	}
	return m
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func loadYAML(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal(b, &m); err != nil {
		t.Fatalf("not YAML: %v\n%s", err, b)
	}
	return m
}

// TestDefaultCloudConfigSchema: each variant's cloud.cfg has exactly the
// schema errors upstream's rendering has (none, except the RHEL rebuilds'
// `syslog_fix_perms: ~` and photon's `disable_vmware_customization`, an
// unknown key, which cloud-init's own schema rejects too).
func TestDefaultCloudConfigSchema(t *testing.T) {
	for _, v := range Variants {
		out, err := CloudConfigForVariant(v)
		if err != nil {
			t.Fatal(err)
		}
		errs := func(doc []byte) []string {
			var l []string
			for _, f := range schema.Validate(doc, "/etc/cloud/cloud.cfg").Of(schema.Error) {
				l = append(l, f.Path+": "+f.Message)
			}
			return l
		}
		want := errs(mustRead(t, filepath.Join("testdata/cloudcfg", v+".cfg")))
		if d := cmp.Diff(want, errs(out)); d != "" {
			t.Errorf("%s: schema errors differ from upstream's cloud.cfg (-upstream +cloudroot):\n%s", v, d)
		}
		if (isRHEL(v) || v == "photon") != (len(want) > 0) {
			t.Errorf("%s: upstream's cloud.cfg schema errors %v", v, want)
		}
	}
}
