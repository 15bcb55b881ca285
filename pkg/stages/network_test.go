package stages

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/distro"
)

func TestApplyNetwork(t *testing.T) {
	v2 := map[string]any{"version": 2, "ethernets": map[string]any{"id0": map[string]any{
		"match": map[string]any{"macaddress": "52:54:00:00:00:01"}, "set-name": "lan0", "dhcp4": true}}}
	links := []bootenv.NetLink{{Name: "ens3", MAC: "52:54:00:00:00:01", Carrier: true}, {Name: "lo", MAC: "00:00:00:00:00:00", Virtual: true}}
	debian := distro.Info{ID: "debian", Family: "debian"}
	v1 := base64.StdEncoding.EncodeToString([]byte("version: 1\nconfig:\n  - type: physical\n    name: eth9\n    subnets: [{type: dhcp}]\n"))
	for _, tc := range []struct {
		name      string
		files     map[string]string
		cmdline   string
		system    map[string]any
		ds        map[string]any
		newInst   bool
		dsEvents  []string
		merged    map[string]any
		wantSrc   string
		wantRend  string
		wantFiles []string
		wantGone  []string
	}{
		{name: "datasource v2 with netplan", files: map[string]string{"usr/sbin/netplan": "#!/bin/sh\n"}, ds: v2, newInst: true,
			wantSrc: "ds", wantRend: "netplan", wantFiles: []string{"/etc/netplan/50-cloud-init.yaml"}},
		{name: "networkd target, fallback", files: map[string]string{"usr/lib/systemd/systemd-networkd": ""}, newInst: true,
			wantSrc: "fallback", wantRend: "networkd"},
		{name: "system config disables", files: map[string]string{"usr/sbin/netplan": ""},
			system: map[string]any{"network": map[string]any{"config": "disabled"}}, ds: v2, newInst: true,
			wantSrc: "disabled-by-system_cfg"},
		{name: "cmdline wins", files: map[string]string{"usr/sbin/netplan": ""}, ds: v2, newInst: true,
			cmdline: "network-config=" + v1,
			wantSrc: "cmdline", wantRend: "netplan", wantFiles: []string{"/etc/netplan/50-cloud-init.yaml"}},
		{name: "cmdline disabled", ds: v2, newInst: true, cmdline: "network-config=disabled", wantSrc: "disabled-by-cmdline"},
		{name: "same instance leaves it", files: map[string]string{"usr/sbin/netplan": ""}, ds: v2,
			wantSrc: "unchanged (not a new instance)"},
		{name: "same instance, datasource re-applies every boot", files: map[string]string{"usr/sbin/netplan": ""}, ds: v2,
			dsEvents: []string{"boot-new-instance", "boot"},
			wantSrc:  "ds", wantRend: "netplan", wantFiles: []string{"/etc/netplan/50-cloud-init.yaml"}},
		{name: "same instance, user updates override the datasource", files: map[string]string{"usr/sbin/netplan": ""}, ds: v2,
			merged:   map[string]any{"updates": map[string]any{"network": map[string]any{"when": []any{"boot-new-instance"}}}},
			dsEvents: []string{"boot-new-instance", "boot"}, wantSrc: "unchanged (not a new instance)"},
		{name: "upgraded-network", files: map[string]string{"var/lib/cloud/data/upgraded-network": "", "usr/sbin/netplan": ""}, ds: v2, newInst: true,
			wantSrc: "upgraded-network"},
		{name: "stale files removed", files: map[string]string{"usr/sbin/netplan": "",
			"etc/udev/rules.d/70-persistent-net.rules": "old", "etc/systemd/network/10-cloud-init-eth0.network": "old"},
			ds: v2, newInst: true, wantSrc: "ds", wantRend: "netplan",
			wantGone: []string{"/etc/udev/rules.d/70-persistent-net.rules", "/etc/systemd/network/10-cloud-init-eth0.network"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newRoot(t, &fakeRunner{})
			for p, c := range tc.files {
				hp := filepath.Join(tr.Dir(), p)
				os.MkdirAll(filepath.Dir(hp), 0o755)
				os.WriteFile(hp, []byte(c), 0o755)
			}
			merged := tc.merged
			if merged == nil {
				merged = map[string]any{}
			}
			res, err := ApplyNetwork(tr, nil, debian, tc.cmdline, tc.system, merged, tc.ds, links, tc.newInst, DSNetwork{UpdateEvents: tc.dsEvents}, "i-net")
			if err != nil {
				t.Fatal(err)
			}
			if res.Source != tc.wantSrc || res.Renderer != tc.wantRend {
				t.Errorf("source/renderer = %q/%q, want %q/%q", res.Source, res.Renderer, tc.wantSrc, tc.wantRend)
			}
			for _, f := range tc.wantFiles {
				if !tr.Exists(f) {
					t.Errorf("%s not written (files %v)", f, res.Files)
				}
			}
			for _, f := range tc.wantGone {
				if tr.Exists(f) {
					t.Errorf("stale %s not removed", f)
				}
			}
			if tc.wantRend == "networkd" && len(res.Files) == 0 {
				t.Errorf("fallback rendered nothing")
			}
		})
	}
}

// TestApplyNetworkPlatformMetadata: a datasource's platform document
// (DigitalOcean here) goes through its converter into the renderer.
func TestApplyNetworkPlatformMetadata(t *testing.T) {
	b, err := os.ReadFile("../netconfig/testdata/cloud/digitalocean/public-private-anchor/metadata.json")
	if err != nil {
		t.Fatal(err)
	}
	var md map[string]any
	if err := json.Unmarshal(b, &md); err != nil {
		t.Fatal(err)
	}
	tr := newRoot(t, &fakeRunner{})
	hp := filepath.Join(tr.Dir(), "usr/sbin/netplan")
	os.MkdirAll(filepath.Dir(hp), 0o755)
	os.WriteFile(hp, nil, 0o755)
	links := []bootenv.NetLink{{Name: "ens3", MAC: "0a:1b:2c:3d:4e:5f", Carrier: true}, {Name: "ens4", MAC: "0a:1b:2c:3d:4e:60"}}
	res, err := ApplyNetwork(tr, nil, distro.Info{ID: "debian", Family: "debian"}, "", nil, map[string]any{},
		map[string]any{"digitalocean_metadata": md}, links, true, DSNetwork{}, "i-do")
	if err != nil {
		t.Fatal(err)
	}
	if res.Source != "ds" || res.Renderer != "netplan" {
		t.Fatalf("source/renderer = %s/%s", res.Source, res.Renderer)
	}
	out, err := tr.ReadFile("/etc/netplan/50-cloud-init.yaml")
	if err != nil || !strings.Contains(string(out), "45.55.50.93") {
		t.Errorf("netplan lacks the droplet's public address:\n%s (%v)", out, err)
	}
}

// TestApplyNetworkAzure: the Azure IMDS network document reaches
// ConvertAzure (secondary IPs become static addresses).
func TestApplyNetworkAzure(t *testing.T) {
	b, err := os.ReadFile("../netconfig/testdata/cloud/azure/two-nics-secondary-ips/metadata.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	tr := newRoot(t, &fakeRunner{})
	hp := filepath.Join(tr.Dir(), "usr/sbin/netplan")
	os.MkdirAll(filepath.Dir(hp), 0o755)
	os.WriteFile(hp, nil, 0o755)
	links := []bootenv.NetLink{{Name: "eth0", MAC: "00:0d:3a:04:75:98", Carrier: true}, {Name: "eth1", MAC: "00:0d:3a:04:75:ab"}}
	res, err := ApplyNetwork(tr, nil, distro.Info{ID: "ubuntu", Family: "debian"}, "", nil, map[string]any{},
		map[string]any{"azure_imds_network": doc["network"]}, links, true, DSNetwork{}, "i-az")
	if err != nil {
		t.Fatal(err)
	}
	out, err := tr.ReadFile("/etc/netplan/50-cloud-init.yaml")
	if err != nil || res.Source != "ds" || !strings.Contains(string(out), "10.0.0.5") {
		t.Errorf("source %s; netplan lacks the secondary address 10.0.0.5:\n%s (%v)", res.Source, out, err)
	}
}

// TestApplyNetworkRejectsUnsafeValues: a sysconfig target and a datasource
// v1 config with a search domain that would run a command when ifcfg is
// sourced: the value is not written, the rest is, and the result names the
// source and the key.
func TestApplyNetworkRejectsUnsafeValues(t *testing.T) {
	tr := newRoot(t, &fakeRunner{})
	for _, p := range []string{"usr/sbin/ifup", "usr/sbin/ifdown", "etc/sysconfig/network-scripts/network-functions"} {
		hp := filepath.Join(tr.Dir(), p)
		os.MkdirAll(filepath.Dir(hp), 0o755)
		os.WriteFile(hp, nil, 0o755)
	}
	ds := map[string]any{"version": 1, "config": []any{map[string]any{
		"type": "physical", "name": "eth0", "subnets": []any{map[string]any{
			"type": "static", "address": "192.0.2.10/24", "dns_nameservers": []any{"192.0.2.1"},
			"dns_search": []any{"good.example", "a$(touch /pwn)"}}}}}}
	links := []bootenv.NetLink{{Name: "eth0", MAC: "52:54:00:00:00:01", Carrier: true}}
	res, err := ApplyNetwork(tr, nil, distro.Info{ID: "rocky", Family: "rhel", IDLike: []string{"rhel"}}, "", nil, map[string]any{},
		ds, links, true, DSNetwork{}, "i-net")
	if err != nil {
		t.Fatal(err)
	}
	if res.Renderer != "sysconfig" {
		t.Fatalf("renderer %q (files %v)", res.Renderer, res.Files)
	}
	b, err := tr.ReadFile("/etc/sysconfig/network-scripts/ifcfg-eth0")
	if err != nil || strings.Contains(string(b), "pwn") || !strings.Contains(string(b), "DOMAIN=good.example") {
		t.Errorf("ifcfg-eth0 (%v):\n%s", err, b)
	}
	if len(res.Rejected) != 1 || !strings.HasPrefix(res.Rejected[0], "network config from ds: eth0: subnet 0: dns search domain \"a$(touch /pwn)\"") {
		t.Errorf("rejected = %q", res.Rejected)
	}
}
