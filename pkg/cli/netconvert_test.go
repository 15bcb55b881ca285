package cli

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const netconfigTestdata = "../netconfig/testdata"

func ncWriteFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestNetConvertArgs(t *testing.T) {
	root := t.TempDir()
	ncWriteFile(t, filepath.Join(root, "v1.yaml"), "version: 1\nconfig:\n- {type: physical, name: eth0, subnets: [{type: dhcp}]}\n")
	ncWriteFile(t, filepath.Join(root, "bad.yaml"), "version: 7\n")
	ncWriteFile(t, filepath.Join(root, "imds.json"), `{"compute": {}, "network": {"interface": [{"macAddress": "000D3A047598",
		"ipv4": {"ipAddress": [{"privateIpAddress": "10.0.0.4"}, {"privateIpAddress": "10.0.0.5"}], "subnet": [{"prefix": "24"}]}}]}}`)
	ncWriteFile(t, filepath.Join(root, "cust.cfg"), "[NIC-CONFIG]\nNICS = NIC1\n\n[NIC1]\nMACADDR = 00:50:56:a6:8c:08\nONBOOT = yes\nBOOTPROTO = dhcp\n")
	tests := []struct {
		name    string
		args    []string
		rc      int
		stderr  string
		wantOut []string
	}{
		{"missing", []string{"-k", "yaml"}, 2, "the following arguments are required: -p/--network-data, -d/--directory, -D/--distro, -O/--output-kind", nil},
		{"bad kind", []string{"-p", "v1.yaml", "-k", "toml", "-d", "out", "-D", "debian", "-O", "eni"}, 2, "argument -k/--kind: invalid choice: 'toml'", nil},
		{"bad output", []string{"-p", "v1.yaml", "-k", "yaml", "-d", "out", "-D", "debian", "-O", "ifcfg"}, 2, "argument -O/--output-kind: invalid choice", nil},
		{"bad distro", []string{"-p", "v1.yaml", "-k", "yaml", "-d", "out", "-D", "plan9", "-O", "eni"}, 2, "argument -D/--distro: invalid choice", nil},
		{"no value", []string{"-p"}, 2, "argument -p/--network-data: expected one argument", nil},
		{"unknown flag", []string{"--frobnicate"}, 2, "unrecognized arguments: --frobnicate", nil},
		{"no input file", []string{"-p", "nope.yaml", "-k", "yaml", "-d", "out", "-D", "debian", "-O", "eni"}, 2, "can't open 'nope.yaml'", nil},
		{"azure not json", []string{"-p", "v1.yaml", "-k", "azure-imds", "-d", "out", "-D", "ubuntu", "-O", "netplan"}, 1, "error: reading azure-imds input from v1.yaml", nil},
		{"azure", []string{"-p", "imds.json", "-k", "azure-imds", "-d", "out/az", "-D", "ubuntu", "-O", "netplan"}, 0,
			"Read input format 'azure-imds' from 'imds.json'.", []string{"out/az/etc/netplan/50-cloud-init.yaml"}},
		{"vmware", []string{"-p", "cust.cfg", "-k", "vmware-imc", "-d", "out/vm", "-D", "debian", "-O", "networkd"}, 0,
			"Read input format 'vmware-imc' from 'cust.cfg'.", []string{"out/vm/etc/systemd/network/10-cloud-init-NIC1.network"}},
		{"vmware bad ini", []string{"-p", "v1.yaml", "-k", "vmware-imc", "-d", "out", "-D", "debian", "-O", "eni"}, 1, "no section headers", nil},
		{"bad mac", []string{"-p", "v1.yaml", "-k", "yaml", "-d", "out", "-D", "debian", "-O", "eni", "-m", "eth0"}, 1, "expected name,mac", nil},
		{"bad version", []string{"-p", "bad.yaml", "-k", "yaml", "-d", "out", "-D", "debian", "-O", "eni"}, 1, "unsupported network config version", nil},
		{"netplan", []string{"-p", "v1.yaml", "-k", "yaml", "-d", "out/np", "-D", "ubuntu", "-O", "netplan"}, 0,
			"Read input format 'yaml' from 'v1.yaml'.\nWrote output format 'netplan' to 'out/np/'\n", []string{"out/np/etc/netplan/50-cloud-init.yaml"}},
		{"joined flags", []string{"-pv1.yaml", "--kind=yaml", "--directory=out/nd", "-Ddebian", "--output-kind", "networkd", "--debug"}, 0,
			"Internal State", []string{"out/nd/etc/systemd/network/10-cloud-init-eth0.network"}},
		{"eni", []string{"-p", "v1.yaml", "-k", "yaml", "-d", "out/eni", "-D", "debian", "-O", "eni"}, 0, "",
			[]string{"out/eni/etc/network/interfaces.d/50-cloud-init", "out/eni/etc/udev/rules.d/70-persistent-net.rules"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env, _, errb := newTestEnv(root)
			rc := runNetConvert(context.Background(), env, tc.args)
			if rc != tc.rc {
				t.Errorf("rc = %d, want %d; stderr:\n%s", rc, tc.rc, errb)
			}
			if !strings.Contains(errb.String(), tc.stderr) {
				t.Errorf("stderr %q does not contain %q", errb, tc.stderr)
			}
			for _, p := range tc.wantOut {
				if _, err := os.Stat(filepath.Join(root, p)); err != nil {
					t.Errorf("missing output: %v", err)
				}
			}
		})
	}
}

func TestNetConvertModesAndIfMissing(t *testing.T) {
	root := t.TempDir()
	ncWriteFile(t, filepath.Join(root, "v2.yaml"), "network:\n  version: 2\n  ethernets:\n    eth0: {dhcp4: true}\n")
	env, _, errb := newTestEnv(root)
	if rc := runNetConvert(context.Background(), env, []string{"-p", "v2.yaml", "-k", "yaml", "-d", "out", "-D", "ubuntu", "-O", "netplan"}); rc != 0 {
		t.Fatalf("rc %d: %s", rc, errb)
	}
	st, err := os.Stat(filepath.Join(root, "out/etc/netplan/50-cloud-init.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("netplan mode %o, want 600", st.Mode().Perm())
	}
	// An existing /etc/network/interfaces is left alone.
	ncWriteFile(t, filepath.Join(root, "out2/etc/network/interfaces"), "# mine\n")
	env, _, errb = newTestEnv(root)
	if rc := runNetConvert(context.Background(), env, []string{"-p", "v2.yaml", "-k", "yaml", "-d", "out2", "-D", "debian", "-O", "eni"}); rc != 0 {
		t.Fatalf("rc %d: %s", rc, errb)
	}
	b, err := os.ReadFile(filepath.Join(root, "out2/etc/network/interfaces"))
	if err != nil || string(b) != "# mine\n" {
		t.Errorf("existing interfaces file changed: %q %v", b, err)
	}
}

func TestNetConvertDisabled(t *testing.T) {
	root := t.TempDir()
	ncWriteFile(t, filepath.Join(root, "off.yaml"), "network: {config: disabled}\n")
	env, _, errb := newTestEnv(root)
	if rc := runNetConvert(context.Background(), env, []string{"-p", "off.yaml", "-k", "yaml", "-d", "out", "-D", "debian", "-O", "eni"}); rc != 0 {
		t.Fatalf("rc %d: %s", rc, errb)
	}
	if !strings.Contains(errb.String(), "disabled") {
		t.Errorf("stderr %q", errb)
	}
	entries, _ := os.ReadDir(filepath.Join(root, "out"))
	if len(entries) != 0 {
		t.Errorf("files written for a disabled config: %v", entries)
	}
}

// TestNetConvertCorpus runs net-convert over pkg/netconfig's golden corpus
// and checks it writes exactly the golden files.
func TestNetConvertCorpus(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join(netconfigTestdata, "*"))
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]string{"input.yaml": "yaml", "network_data.json": "network_data.json", "interfaces.eni": "eni"}
	n := 0
	for _, dir := range dirs {
		for file, kind := range kinds {
			input := filepath.Join(dir, file)
			if _, err := os.Stat(input); err != nil {
				continue
			}
			if _, err := os.Stat(filepath.Join(dir, "want", "ERROR")); err == nil {
				continue
			}
			var macArgs []string
			if b, err := os.ReadFile(filepath.Join(dir, "macs.txt")); err == nil {
				for _, l := range strings.Fields(string(b)) {
					macArgs = append(macArgs, "-m", l)
				}
			}
			for _, out := range []string{"eni", "netplan", "networkd", "sysconfig", "network-manager"} {
				wantDir := filepath.Join(dir, "want", out)
				if _, err := os.Stat(wantDir); err != nil {
					continue
				}
				n++
				t.Run(filepath.Base(dir)+"/"+out, func(t *testing.T) {
					abs, err := filepath.Abs(input)
					if err != nil {
						t.Fatal(err)
					}
					root := t.TempDir()
					env, _, errb := newTestEnv(root)
					args := append([]string{"-p", abs, "-k", kind, "-d", "out", "-D", "debian", "-O", out}, macArgs...)
					if rc := runNetConvert(context.Background(), env, args); rc != 0 {
						t.Fatalf("rc %d: %s", rc, errb)
					}
					got := ncTreeOf(t, filepath.Join(root, "out"))
					want := ncTreeOf(t, wantDir)
					delete(want, "MANIFEST")
					delete(want, "WARNINGS")
					if diff := cmp.Diff(want, got); diff != "" {
						t.Errorf("-want +got:\n%s", diff)
					}
				})
			}
		}
	}
	if n == 0 {
		t.Fatal("no corpus cases found")
	}
}

func ncTreeOf(t *testing.T, dir string) map[string]string {
	t.Helper()
	tree := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		tree[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tree
}
