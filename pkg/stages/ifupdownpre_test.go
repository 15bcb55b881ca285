package stages

import (
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/distro"
)

// TestIfupdownPreDropIn: on an ifupdown + systemd target, the network
// configuration written from the initramfs comes with a runtime drop-in
// that makes ifupdown-pre wait for the configured NICs the initramfs saw,
// not for the whole udev coldplug; anything else gets no drop-in.
func TestIfupdownPreDropIn(t *testing.T) {
	eni := map[string]string{
		"usr/sbin/ifquery": "", "usr/sbin/ifup": "", "usr/sbin/ifdown": "",
		"etc/network/interfaces": "source /etc/network/interfaces.d/*\n",
	}
	unit := map[string]string{"usr/lib/systemd/system/ifupdown-pre.service": "[Service]\n"}
	merge := func(ms ...map[string]string) map[string]string {
		out := map[string]string{}
		for _, m := range ms {
			for k, v := range m {
				out[k] = v
			}
		}
		return out
	}
	setName := map[string]any{"version": 2, "ethernets": map[string]any{"id0": map[string]any{
		"match": map[string]any{"macaddress": "52:54:00:12:34:56"}, "set-name": "lan0", "dhcp4": true}}}
	absent := base64.StdEncoding.EncodeToString([]byte("version: 1\nconfig:\n  - type: physical\n    name: eth9\n    subnets: [{type: dhcp}]\n"))
	links := []bootenv.NetLink{{Name: "ens3", MAC: "52:54:00:12:34:56", Carrier: true}, {Name: "lo", MAC: "00:00:00:00:00:00", Virtual: true}}
	for _, tc := range []struct {
		name    string
		files   map[string]string
		ds      map[string]any
		cmdline string
		want    []string // devices in the drop-in; nil: no drop-in
	}{
		{name: "set-name by MAC", files: merge(eni, unit), ds: setName, want: []string{"/sys/class/net/lan0"}},
		{name: "fallback on the NIC seen", files: merge(eni, unit), want: []string{"/sys/class/net/ens3"}},
		{name: "no ifupdown-pre unit", files: eni, ds: setName},
		{name: "a NIC the initramfs did not see", files: merge(eni, unit), cmdline: "network-config=" + absent},
		{name: "networkd target", files: merge(unit, map[string]string{"usr/lib/systemd/systemd-networkd": ""}), ds: setName},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newRoot(t, &fakeRunner{})
			for p, c := range tc.files {
				hp := filepath.Join(tr.Dir(), p)
				os.MkdirAll(filepath.Dir(hp), 0o755)
				os.WriteFile(hp, []byte(c), 0o755)
			}
			run := newRoot(t, &fakeRunner{})
			if _, err := ApplyNetwork(tr, run, distro.Info{ID: "debian", Family: "debian"}, tc.cmdline, nil, map[string]any{}, tc.ds, links, true, DSNetwork{}, "i-1"); err != nil {
				t.Fatal(err)
			}
			b, err := run.ReadFile(IfupdownPreDropIn)
			if tc.want == nil {
				if err == nil {
					t.Errorf("unexpected drop-in:\n%s", b)
				}
				return
			}
			if err != nil {
				t.Fatalf("no drop-in: %v", err)
			}
			s := string(b)
			wantLine := "ExecStart=/bin/sh -c 'if [ \"$CONFIGURE_INTERFACES\" = no ]; then exit 0; fi; udevadm wait --timeout=90 " + strings.Join(tc.want, " ") + " || udevadm settle'\n"
			if !strings.Contains(s, "[Service]\nExecStart=\n"+wantLine) {
				t.Errorf("drop-in =\n%s\nwant the reset ExecStart= and\n%s", s, wantLine)
			}
		})
	}
}

// TestIfupdownPreRenames: on a target whose udev keeps a name userspace
// gave, the plan renames the configured NICs to their booted-system names
// (set-name, else the predictable name) and RenameNICs then lets
// ifupdown-pre wait only for them to exist; targets naming NICs their own
// way, names held by another NIC and failed renames leave the NICs to udev.
func TestIfupdownPreRenames(t *testing.T) {
	base := map[string]string{
		"usr/sbin/ifquery": "", "usr/sbin/ifup": "", "usr/sbin/ifdown": "",
		"etc/network/interfaces":                       "source /etc/network/interfaces.d/*\n",
		"usr/lib/systemd/system/ifupdown-pre.service":  "[Service]\n",
		"usr/lib/udev/rules.d/80-net-setup-link.rules": "IMPORT{builtin}=\"net_setup_link\"\n",
		"usr/lib/systemd/network/99-default.link":      "[Link]\nNamePolicy=keep kernel database onboard slot path\n",
	}
	setName := map[string]any{"version": 2, "ethernets": map[string]any{"id0": map[string]any{
		"match": map[string]any{"macaddress": "52:54:00:12:34:56"}, "set-name": "lan0", "dhcp4": true}}}
	nic := bootenv.NetLink{Name: "eth0", MAC: "52:54:00:12:34:56", Carrier: true, Names: bootenv.NetNames{Path: "enp0s2"}}
	lo := bootenv.NetLink{Name: "lo", MAC: "00:00:00:00:00:00", Virtual: true}
	for _, tc := range []struct {
		name  string
		extra map[string]string
		ds    map[string]any
		links []bootenv.NetLink
		want  []NICRename
	}{
		{name: "set-name", ds: setName, links: []bootenv.NetLink{nic, lo}, want: []NICRename{{From: "eth0", To: "lan0", MAC: "52:54:00:12:34:56"}}},
		{name: "predictable name", links: []bootenv.NetLink{nic, lo}, want: []NICRename{{From: "eth0", To: "enp0s2", MAC: "52:54:00:12:34:56"}}},
		{name: "policy without keep", ds: setName, links: []bootenv.NetLink{nic},
			extra: map[string]string{"etc/systemd/network/99-default.link": "[Link]\nNamePolicy=kernel database onboard slot path\n"}},
		{name: "the target's own .link", ds: setName, links: []bootenv.NetLink{nic},
			extra: map[string]string{"etc/systemd/network/10-mine.link": "[Match]\nMACAddress=52:54:00:12:34:56\n[Link]\nName=mine0\n"}},
		{name: "the target's own udev rule", ds: setName, links: []bootenv.NetLink{nic},
			extra: map[string]string{"etc/udev/rules.d/71-mine.rules": "SUBSYSTEM==\"net\", NAME=\"mine0\"\n"}},
		{name: "name held by another NIC", ds: setName,
			links: []bootenv.NetLink{nic, {Name: "lan0", MAC: "52:54:00:00:00:01", Carrier: true}}},
		{name: "masked net-setup-link rule keeps kernel names", links: []bootenv.NetLink{nic}, extra: map[string]string{"etc/udev/rules.d/80-net-setup-link.rules": ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newRoot(t, &fakeRunner{})
			files := map[string]string{}
			for k, v := range base {
				files[k] = v
			}
			for k, v := range tc.extra {
				files[k] = v
			}
			for p, c := range files {
				hp := filepath.Join(tr.Dir(), p)
				os.MkdirAll(filepath.Dir(hp), 0o755)
				os.WriteFile(hp, []byte(c), 0o755)
			}
			run := newRoot(t, &fakeRunner{})
			res, err := ApplyNetwork(tr, run, distro.Info{ID: "debian", Family: "debian"}, "", nil, map[string]any{}, tc.ds, tc.links, true, DSNetwork{}, "i-1")
			if err != nil {
				t.Fatal(err)
			}
			if res.IfupdownPre == nil {
				t.Fatal("no ifupdown-pre plan")
			}
			if got := res.IfupdownPre.Renames; !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("renames = %+v, want %+v", got, tc.want)
			}
			if len(tc.want) == 0 {
				return
			}
			var asked []NICRename
			done, err := RenameNICs(run, res.IfupdownPre, func(r NICRename) error { asked = append(asked, r); return nil })
			if err != nil || !reflect.DeepEqual(asked, tc.want) || len(done) != 1 || done[0] != tc.want[0].To {
				t.Fatalf("RenameNICs asked %+v, gave %v, %v", asked, done, err)
			}
			b, err := run.ReadFile(IfupdownPreDropIn)
			if err != nil {
				t.Fatal(err)
			}
			want := "; udevadm wait --initialized=false --timeout=90 /sys/class/net/" + tc.want[0].To + " || udevadm settle'\n"
			if !strings.Contains(string(b), want) {
				t.Errorf("drop-in after the rename =\n%s\nwant %q", b, want)
			}
		})
	}

	t.Run("failed rename keeps the udev wait", func(t *testing.T) {
		run := newRoot(t, &fakeRunner{})
		plan := &IfupdownPre{Wait: []string{"lan0", "lan1"}, Renames: []NICRename{
			{From: "eth0", To: "lan0", MAC: "52:54:00:12:34:56"}, {From: "eth1", To: "lan1", MAC: "52:54:00:12:34:57"}}}
		if err := writeIfupdownPre(run, plan.Wait, nil); err != nil {
			t.Fatal(err)
		}
		done, err := RenameNICs(run, plan, func(r NICRename) error {
			if r.From == "eth1" {
				return errors.New("interface eth1 is up")
			}
			return nil
		})
		if err == nil || !strings.Contains(err.Error(), "eth1 is up") || !reflect.DeepEqual(done, []string{"lan0"}) {
			t.Fatalf("RenameNICs = %v, %v; want lan0 done and eth1's error", done, err)
		}
		b, _ := run.ReadFile(IfupdownPreDropIn)
		want := "udevadm wait --initialized=false --timeout=90 /sys/class/net/lan0 && udevadm wait --timeout=90 /sys/class/net/lan1 || udevadm settle'"
		if !strings.Contains(string(b), want) {
			t.Errorf("drop-in =\n%s\nwant %q", b, want)
		}
	})
}
