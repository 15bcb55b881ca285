package stages

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/distro"
	"github.com/cloudroot/cloudroot/pkg/target"
)

// TestApplyNetworkSources covers the datasource converters (EC2, ENI) and
// the INITRAMFS source (klibc state files in the run root).
func TestApplyNetworkSources(t *testing.T) {
	links := []bootenv.NetLink{
		{Name: "ens5", MAC: "0a:1b:2c:3d:4e:5f", Carrier: true},
		{Name: "ens6", MAC: "0a:1b:2c:3d:4e:60", Carrier: true},
		{Name: "lo", MAC: "00:00:00:00:00:00", Virtual: true},
	}
	ec2 := map[string]any{"ec2_macs": map[string]any{
		"0a:1b:2c:3d:4e:5f": map[string]any{"device-number": "0", "network-card": "0",
			"local-ipv4s": []any{"172.31.20.15", "172.31.20.16"}, "subnet-ipv4-cidr-block": "172.31.16.0/20"},
		"0a:1b:2c:3d:4e:60": map[string]any{"device-number": "1", "network-card": "0",
			"local-ipv4s": "172.31.40.7", "subnet-ipv4-cidr-block": "172.31.32.0/20"},
	}}
	klibc := "DEVICE='ens5'\nPROTO='none'\nIPV4ADDR='10.0.0.5'\nIPV4NETMASK='255.255.255.0'\nIPV4GATEWAY='10.0.0.1'\nIPV4DNS0='10.0.0.2'\n"
	v1 := base64.StdEncoding.EncodeToString([]byte("version: 1\nconfig:\n  - type: physical\n    name: eth9\n    subnets: [{type: dhcp}]\n"))
	netplan := map[string]string{"usr/sbin/netplan": ""}
	networkd := map[string]string{"usr/lib/systemd/systemd-networkd": ""}
	for _, tc := range []struct {
		name     string
		files    map[string]string
		run      map[string]string
		cmdline  string
		system   map[string]any
		merged   map[string]any
		ds       map[string]any
		wantSrc  string
		want     []string // substrings of the rendered files
		wantNot  []string
		wantWarn string
		dsNet    DSNetwork
	}{
		{name: "ec2 netplan policy routing", files: netplan, ds: ec2, wantSrc: "ds",
			want: []string{"route-metric: 200", "table: 101", "via: 172.31.32.1", "- 172.31.20.16/20", "set-name: ens6"}},
		{name: "ec2 networkd no policy routing", files: networkd, ds: ec2, wantSrc: "ds",
			want: []string{"Name=ens6", "RouteMetric=200", "Address=172.31.20.16/20"}, wantNot: []string{"Table="}},
		{name: "ec2 primary only", files: netplan, ds: ec2, wantSrc: "ds",
			merged: map[string]any{"datasource": map[string]any{"Ec2": map[string]any{"apply_full_imds_network_config": false}}},
			want:   []string{"set-name: ens5"}, wantNot: []string{"ens6", "route-metric"}},
		{name: "ec2 no NIC present falls back", files: netplan,
			ds:      map[string]any{"ec2_macs": map[string]any{"aa:bb:cc:dd:ee:ff": map[string]any{"device-number": "0"}}},
			wantSrc: "fallback", want: []string{"accept-ra: true"}, wantWarn: "configures nothing here"},
		{name: "config drive ENI", files: networkd, ds: map[string]any{"eni": "auto eth0\niface eth0 inet static\n  address 10.1.0.5/24\n  gateway 10.1.0.1\n"},
			wantSrc: "ds", want: []string{"Address=10.1.0.5/24"}},
		{name: "initramfs with ip=", files: netplan, run: map[string]string{"run/net-ens5.conf": klibc}, cmdline: "root=/dev/nfs ip=dhcp",
			ds: ec2, wantSrc: "initramfs", want: []string{"10.0.0.5/24", "via: 10.0.0.1", "macaddress: 0a:1b:2c:3d:4e:5f"}, wantNot: []string{"ens6"}},
		{name: "initramfs with open-iscsi", files: netplan, run: map[string]string{"run/net-ens5.conf": klibc, "run/initramfs/open-iscsi.interface": "ens5\n"},
			system:  map[string]any{"network": map[string]any{"version": 2, "ethernets": map[string]any{"x": map[string]any{"dhcp4": true}}}},
			wantSrc: "initramfs", want: []string{"10.0.0.5/24"}},
		// Oracle's network_config_sources put the datasource before the
		// initramfs: its converted description wins over klibc's state.
		{name: "datasource before initramfs (Oracle)", files: netplan, run: map[string]string{"run/net-ens5.conf": klibc}, cmdline: "root=/dev/sda1 ip=dhcp",
			ds: ec2, dsNet: DSNetwork{Sources: []string{"cmdline", "system_cfg", "ds", "initramfs"}}, wantSrc: "ds", want: []string{"table: 101", "set-name: ens6"}},
		{name: "initramfs without ip= is ignored", files: netplan, run: map[string]string{"run/net-ens5.conf": klibc},
			ds: ec2, wantSrc: "ds", want: []string{"table: 101"}},
		{name: "cmdline beats initramfs", files: netplan, run: map[string]string{"run/net-ens5.conf": klibc}, cmdline: "ip=dhcp network-config=" + v1,
			wantSrc: "cmdline", want: []string{"eth9"}},
		{name: "broken initramfs state is skipped", files: netplan, run: map[string]string{"run/net-ens5.conf": "DEVICE=ens5\nPROTO=bootp\nIPV4ADDR=1.2.3.4\n"},
			cmdline: "ip=dhcp", ds: ec2, wantSrc: "ds", wantWarn: "unexpected PROTO"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newRoot(t, &fakeRunner{})
			for p, c := range tc.files {
				hp := filepath.Join(tr.Dir(), p)
				os.MkdirAll(filepath.Dir(hp), 0o755)
				os.WriteFile(hp, []byte(c), 0o755)
			}
			rdir := t.TempDir()
			for p, c := range tc.run {
				hp := filepath.Join(rdir, p)
				os.MkdirAll(filepath.Dir(hp), 0o755)
				os.WriteFile(hp, []byte(c), 0o644)
			}
			run, err := target.New(rdir)
			if err != nil {
				t.Fatal(err)
			}
			merged := tc.merged
			if merged == nil {
				merged = map[string]any{}
			}
			res, err := ApplyNetwork(tr, run, distro.Info{ID: "debian", Family: "debian"}, tc.cmdline, tc.system, merged, tc.ds, links, true, tc.dsNet, "i-net")
			if err != nil {
				t.Fatal(err)
			}
			if res.Source != tc.wantSrc {
				t.Errorf("source = %q, want %q (warnings %q)", res.Source, tc.wantSrc, res.Warnings)
			}
			var all strings.Builder
			for _, f := range res.Files {
				b, err := tr.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				all.Write(b)
			}
			for _, w := range tc.want {
				if !strings.Contains(all.String(), w) {
					t.Errorf("rendered files lack %q:\n%s", w, all.String())
				}
			}
			for _, w := range tc.wantNot {
				if strings.Contains(all.String(), w) {
					t.Errorf("rendered files contain %q:\n%s", w, all.String())
				}
			}
			if tc.wantWarn != "" && !strings.Contains(strings.Join(res.Warnings, "\n"), tc.wantWarn) {
				t.Errorf("warnings %q lack %q", res.Warnings, tc.wantWarn)
			}
		})
	}
}
