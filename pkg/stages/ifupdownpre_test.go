package stages

import (
	"encoding/base64"
	"os"
	"path/filepath"
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
