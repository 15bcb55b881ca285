package smartos

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestParseReplyVectors: frames with the checksums cloud-init's own tests
// use.
func TestParseReplyVectors(t *testing.T) {
	for _, tc := range []struct {
		line string
		want Reply
	}{
		{"V2 25 b5a9ff00 abcdef12 SUCCESS dmFsdWU=", Reply{"abcdef12", "SUCCESS", []byte("value")}},
		{"V2 29 40873553 abcdef12 SUCCESS Zm9vCmJhcg==", Reply{"abcdef12", "SUCCESS", []byte("foo\nbar")}},
		{"V2 16 14e563ba abcdef12 SUCCESS", Reply{"abcdef12", "SUCCESS", nil}},
		{"V2 17 " + Checksum("abcdef12 NOTFOUND") + " abcdef12 NOTFOUND", Reply{"abcdef12", "NOTFOUND", nil}},
	} {
		got, err := ParseReply(tc.line)
		if err != nil {
			t.Errorf("%q: %v", tc.line, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tc.line, diff)
		}
	}
	for _, bad := range []string{"", "V2", "V2 x y", "V2 -1 0 a b", "V2 +5 " + Checksum("a b c") + " a b c", "V2 5 " + Checksum("ABC X") + " ABC X", "V2 2 " + Checksum("a ") + " a "} {
		if _, err := ParseReply(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	if _, err := ParseReply("invalid command"); !errors.Is(err, ErrNotFrame) {
		t.Errorf("invalid command: %v, want ErrNotFrame", err)
	}
}

// TestFormatRequest checks what cloud-init's tests check of a GET line.
func TestFormatRequest(t *testing.T) {
	line := FormatRequest(0xabcdef12, "GET", []byte("some_key"))
	if !strings.HasSuffix(line, "\n") || strings.Count(line, "\n") != 1 || !strings.HasPrefix(line, "V2 ") {
		t.Fatalf("%q is not one V2 line", line)
	}
	parts := strings.Split(strings.TrimSpace(line), " ")
	body := strings.Join(parts[3:], " ")
	if parts[1] != strconv.Itoa(len(body)) {
		t.Errorf("length %s, body has %d bytes", parts[1], len(body))
	}
	if want := fmt.Sprintf("%08x", crc32.ChecksumIEEE([]byte(body))); parts[2] != want {
		t.Errorf("checksum %s, want %s", parts[2], want)
	}
	if parts[3] != "abcdef12" || parts[4] != "GET" || parts[5] != base64.StdEncoding.EncodeToString([]byte("some_key")) {
		t.Errorf("parts %q", parts)
	}
	if got := FormatRequest(1, "KEYS", nil); got != "V2 13 "+Checksum("00000001 KEYS")+" 00000001 KEYS\n" {
		t.Errorf("KEYS line %q", got)
	}
}

// The sdc:nics examples of cloud-init's tests.
const (
	nicsSimple = `[{"nic_tag":"external","primary":true,"mtu":1500,"model":"virtio","gateway":"8.12.42.1","netmask":"255.255.255.0","ip":"8.12.42.102","gateways":["8.12.42.1"],"vlan_id":324,"mac":"90:b8:d0:f5:e4:f5","interface":"net0","ips":["8.12.42.102/24"]},
{"nic_tag":"sdc_overlay/16187209","gateway":"192.168.128.1","model":"virtio","mac":"90:b8:d0:a5:ff:cd","netmask":"255.255.252.0","ip":"192.168.128.93","gateways":["192.168.128.1"],"vlan_id":2,"mtu":8500,"interface":"net1","ips":["192.168.128.93/22"]}]`
	nicsDHCP = `[{"interface":"net0","mac":"90:b8:d0:ae:64:51","gateway":"8.12.42.1","gateways":["8.12.42.1"],"ips":["8.12.42.51/24"],"mtu":1500,"primary":true},
{"interface":"net1","mac":"90:b8:d0:bd:4f:9c","netmask":"255.255.255.0","ip":"10.210.1.217","ips":["dhcp"],"mtu":1500}]`
	nicsMultiIPv6 = `[{"interface":"net0","mac":"90:b8:d0:ae:64:51","gateways":["8.12.42.1"],"ips":["2001:4800:78ff:1b:be76:4eff:fe06:96b3/64","8.12.42.51/24"],"mtu":1500,"primary":true},
{"interface":"net1","mac":"90:b8:d0:bd:4f:9c","ips":["10.210.1.217/24"],"mtu":1500}]`
	nicsBoth = `[{"interface":"net0","mac":"90:b8:d0:ae:64:51","gateways":["8.12.42.1","2001::1","2001::2"],"ips":["2001::10/64","8.12.42.51/24","2001::11/64","8.12.42.52/32"],"mtu":1500,"primary":true},
{"interface":"net1","mac":"90:b8:d0:bd:4f:9c","ips":["10.210.1.217/24"],"gateways":["10.210.1.210"],"mtu":1500}]`
	nicsSingleGateway = `[{"interface":"net0","mac":"90:b8:d0:d8:82:b4","gateway":"8.12.42.1","gateways":["8.12.42.1"],"ips":["8.12.42.26/24"],"mtu":1500,"primary":true},
{"interface":"net1","mac":"90:b8:d0:0a:51:31","ips":["10.210.1.27/24"],"mtu":1500}]`
	nicsAddrconf = `[{"gateway":"10.64.1.129","gateways":["10.64.1.129"],"interface":"net0","ip":"10.64.1.130","ips":["10.64.1.130/26","addrconf"],"mac":"e2:7f:c1:50:eb:99","model":"virtio","netmask":"255.255.255.192","nic_tag":"external","primary":true,"vlan_id":20}]`
)

// TestConvertNetwork compares with the results cloud-init's tests expect.
func TestConvertNetwork(t *testing.T) {
	routes := `[{"linklocal": false, "dst": "3.0.0.0/8", "gateway": "8.12.42.3"}, {"linklocal": false, "dst": "4.0.0.0/8", "gateway": "10.210.1.4"}]`
	twoRoutes := `[{"network": "3.0.0.0/8", "gateway": "8.12.42.3"}, {"network": "4.0.0.0/8", "gateway": "10.210.1.4"}]`
	for _, tc := range []struct {
		name, nics, dns, domain, routes, want string
	}{
		{name: "simple", nics: nicsSimple, want: `[
			{"name": "net0", "type": "physical", "mtu": 1500, "mac_address": "90:b8:d0:f5:e4:f5",
			 "subnets": [{"type": "static", "gateway": "8.12.42.1", "address": "8.12.42.102/24"}]},
			{"name": "net1", "type": "physical", "mtu": 8500, "mac_address": "90:b8:d0:a5:ff:cd",
			 "subnets": [{"type": "static", "address": "192.168.128.93/22"}]}]`},
		{name: "dhcp with dns", nics: nicsDHCP, dns: `["8.8.8.8", "8.8.8.1"]`, domain: `"local"`, want: `[
			{"name": "net0", "type": "physical", "mtu": 1500, "mac_address": "90:b8:d0:ae:64:51",
			 "subnets": [{"type": "static", "gateway": "8.12.42.1", "address": "8.12.42.51/24"}]},
			{"name": "net1", "type": "physical", "mtu": 1500, "mac_address": "90:b8:d0:bd:4f:9c", "subnets": [{"type": "dhcp4"}]},
			{"type": "nameserver", "address": ["8.8.8.8", "8.8.8.1"], "search": ["local"]}]`},
		{name: "one resolver, no domain", nics: `[]`, dns: `"10.0.0.1"`, want: `[{"type": "nameserver", "address": ["10.0.0.1"], "search": []}]`},
		{name: "multi ipv6", nics: nicsMultiIPv6, want: `[
			{"name": "net0", "type": "physical", "mtu": 1500, "mac_address": "90:b8:d0:ae:64:51",
			 "subnets": [{"type": "static", "address": "2001:4800:78ff:1b:be76:4eff:fe06:96b3/64"},
			             {"type": "static", "gateway": "8.12.42.1", "address": "8.12.42.51/24"}]},
			{"name": "net1", "type": "physical", "mtu": 1500, "mac_address": "90:b8:d0:bd:4f:9c",
			 "subnets": [{"type": "static", "address": "10.210.1.217/24"}]}]`},
		{name: "both families", nics: nicsBoth, want: `[
			{"name": "net0", "type": "physical", "mtu": 1500, "mac_address": "90:b8:d0:ae:64:51",
			 "subnets": [{"address": "2001::10/64", "gateway": "2001::1", "type": "static"},
			             {"address": "8.12.42.51/24", "gateway": "8.12.42.1", "type": "static"},
			             {"address": "2001::11/64", "type": "static"},
			             {"address": "8.12.42.52/32", "type": "static"}]},
			{"name": "net1", "type": "physical", "mtu": 1500, "mac_address": "90:b8:d0:bd:4f:9c",
			 "subnets": [{"address": "10.210.1.217/24", "type": "static"}]}]`},
		{name: "routes on all nics", nics: nicsSingleGateway, routes: routes, want: `[
			{"name": "net0", "type": "physical", "mtu": 1500, "mac_address": "90:b8:d0:d8:82:b4",
			 "subnets": [{"address": "8.12.42.26/24", "gateway": "8.12.42.1", "type": "static", "routes": ` + twoRoutes + `}]},
			{"name": "net1", "type": "physical", "mtu": 1500, "mac_address": "90:b8:d0:0a:51:31",
			 "subnets": [{"address": "10.210.1.27/24", "type": "static", "routes": ` + twoRoutes + `}]}]`},
		{name: "addrconf", nics: nicsAddrconf, want: `[
			{"name": "net0", "type": "physical", "mac_address": "e2:7f:c1:50:eb:99",
			 "subnets": [{"address": "10.64.1.130/26", "gateway": "10.64.1.129", "type": "static"}, {"type": "dhcp6"}]}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dec := func(s string) any {
				if s == "" {
					return nil
				}
				var v any
				if err := json.Unmarshal([]byte(s), &v); err != nil {
					t.Fatalf("%s: %v", s, err)
				}
				return v
			}
			got, err := ConvertNetwork(dec(tc.nics), dec(tc.dns), dec(tc.domain), dec(tc.routes))
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]any{"version": 1, "config": dec(tc.want)}
			// Compare as JSON: numbers from the input are float64.
			gj, _ := json.Marshal(got)
			wj, _ := json.Marshal(want)
			var g, w any
			json.Unmarshal(gj, &g)
			json.Unmarshal(wj, &w)
			if diff := cmp.Diff(w, g); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestConvertNetworkErrors(t *testing.T) {
	for _, tc := range []struct{ nics, routes, want string }{
		{`{}`, ``, "sdc:nics: expected a list, got an object"},
		{`["net0"]`, ``, "sdc:nics[0]: expected an object"},
		{`[{"ips": []}]`, ``, "sdc:nics[0]: no interface"},
		{`[{"interface": "net0", "ips": "10.0.0.1/24"}]`, ``, "sdc:nics[0].ips: expected a list"},
		{`[{"interface": "net0", "ips": [1]}]`, ``, "sdc:nics[0].ips[0]: expected a string"},
		{`[]`, `{"dst": "x"}`, "sdc:routes: expected a list"},
		{`[]`, `[{"gateway": "x"}]`, "sdc:routes[0]: no dst"},
		{`[]`, `["x"]`, "sdc:routes[0]: expected an object"},
	} {
		var nics, routes any
		json.Unmarshal([]byte(tc.nics), &nics)
		if tc.routes != "" {
			json.Unmarshal([]byte(tc.routes), &routes)
		}
		_, err := ConvertNetwork(nics, nil, nil, routes)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %s: err = %v, want %q", tc.nics, tc.routes, err, tc.want)
		}
	}
}

// TestBuild covers cloud-init's hostname fallbacks, default vendor-data,
// script files and the per-mode configuration.
func TestBuild(t *testing.T) {
	base := func(extra map[string]string) Input {
		v := map[string]string{"sdc:uuid": "iid-1"}
		for k, e := range extra {
			v[k] = e
		}
		return Input{Mode: ModeLX, Values: v}
	}
	for _, tc := range []struct {
		name     string
		in       Input
		hostname string
		check    func(t *testing.T, md map[string]any, files map[string][]byte, cfg map[string]any)
	}{
		{name: "hostname", in: base(map[string]string{"hostname": " h1\n", "sdc:hostname": "h2"}), hostname: "h1"},
		{name: "sdc:hostname", in: base(map[string]string{"sdc:hostname": "h2"}), hostname: "h2"},
		{name: "uuid", in: base(nil), hostname: "iid-1"},
		{name: "blank hostname", in: base(map[string]string{"hostname": "  "}), hostname: "iid-1"},
		{name: "vendor-data given", in: base(map[string]string{"sdc:vendor-data": "VENDOR_DATA\n"}), hostname: "iid-1",
			check: func(t *testing.T, md map[string]any, _ map[string][]byte, _ map[string]any) {
				if md["vendor-data"] != "VENDOR_DATA\n" {
					t.Errorf("vendor-data %q", md["vendor-data"])
				}
			}},
		{name: "scripts", in: base(map[string]string{"user-script": "/bin/true\n", "sdc:operator-script": "bin/true\n", "user-data": "something\n"}), hostname: "iid-1",
			check: func(t *testing.T, md map[string]any, files map[string][]byte, _ map[string]any) {
				want := map[string][]byte{
					"/var/lib/cloud/instances/iid-1/data/user-script":     []byte("#!/bin/bash\n/bin/true\n"),
					"/var/lib/cloud/instances/iid-1/data/operator-script": []byte("bin/true\n"),
					"/var/db/mdata-user-data":                             []byte("something\n"),
				}
				if diff := cmp.Diff(want, files); diff != "" {
					t.Errorf("files (-want +got):\n%s", diff)
				}
				if md["user-script"] != "/bin/true\n" || md["legacy-user-data"] != "something\n" {
					t.Errorf("meta-data %v", md)
				}
				for p := range files {
					if FileModes()[filepath.Base(p)] == 0 {
						t.Errorf("no mode for %s", p)
					}
				}
			}},
		{name: "kvm config", in: Input{Mode: ModeKVM, Values: map[string]string{"sdc:uuid": "iid-1"}, CloudDir: "/srv/cloud"}, hostname: "iid-1",
			check: func(t *testing.T, md map[string]any, _ map[string][]byte, cfg map[string]any) {
				if cfg["disk_setup"] == nil || cfg["fs_setup"] == nil || cfg["device_aliases"] != nil {
					t.Errorf("config %v", cfg)
				}
				if vd := md["vendor-data"].(string); !strings.HasPrefix(vd, "#cloud-boothook\n") || !strings.Contains(vd, "/srv/cloud/scripts/per-boot/"+PerBootVendorScript) || !strings.Contains(vd, "/srv/cloud/instances/iid-1/data/user-script") {
					t.Errorf("default vendor-data %q", vd)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Build(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if d.LocalHostname() != tc.hostname || d.InstanceID() != "iid-1" {
				t.Errorf("hostname %q, instance-id %q", d.LocalHostname(), d.InstanceID())
			}
			for _, a := range append(append([]Attribute{}, Attributes...), JSONAttributes...) {
				if _, ok := d.MetaData[a.Name]; !ok {
					t.Errorf("meta-data has no %s", a.Name)
				}
			}
			if d.UserData != nil || d.NetworkConfig != nil {
				t.Errorf("user-data %q, network %v", d.UserData, d.NetworkConfig)
			}
			if tc.check != nil {
				tc.check(t, d.MetaData, d.Files, d.Config)
			}
		})
	}
}

func TestShebang(t *testing.T) {
	for in, want := range map[string]string{
		"":                      "",
		"#!/usr/bin/perl\nx\n":  "#!/usr/bin/perl\nx\n",
		"echo hi\n":             "#!/bin/bash\necho hi\n",
		"\x7fELF\x00\x01binary": "\x7fELF\x00\x01binary",
		"\xff\xfe not utf-8":    "\xff\xfe not utf-8",
	} {
		if got := string(Shebang([]byte(in))); got != want {
			t.Errorf("Shebang(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestIsTrue(t *testing.T) {
	for s, want := range map[string]bool{"true": true, " YES\n": true, "1": true, "On": true, "false": false, "": false, "2": false, "no": false} {
		if IsTrue(s) != want {
			t.Errorf("IsTrue(%q) != %v", s, want)
		}
	}
}

// FuzzParseReply: no line panics; a parsed reply formats back to a line
// that parses to the same reply.
func FuzzParseReply(f *testing.F) {
	f.Add("V2 25 b5a9ff00 abcdef12 SUCCESS dmFsdWU=")
	f.Add("V2 16 14e563ba abcdef12 SUCCESS")
	f.Add("V2 17 " + Checksum("abcdef12 NOTFOUND") + " abcdef12 NOTFOUND")
	f.Add("invalid command")
	f.Add("V2 3 00000000 a b\r")
	f.Fuzz(func(t *testing.T, line string) {
		r, err := ParseReply(line)
		if err != nil {
			return
		}
		again, err := ParseReply(strings.TrimSuffix(FormatReply(r.RequestID, r.Status, r.Payload), "\n"))
		if err != nil {
			t.Fatalf("%q: formatted reply does not parse: %v", line, err)
		}
		if diff := cmp.Diff(r, again); diff != "" {
			t.Fatalf("%q: round trip (-first +second):\n%s", line, diff)
		}
	})
}

// FuzzBuild: arbitrary values of the JSON keys and hostnames never panic;
// what builds has the instance id and, with sdc:nics, a v1 config.
func FuzzBuild(f *testing.F) {
	cases, _ := filepath.Glob("testdata/*/metadata.json")
	for _, c := range cases {
		var v map[string]string
		b, _ := os.ReadFile(c)
		if json.Unmarshal(b, &v) == nil {
			f.Add(v["sdc:nics"], v["sdc:resolvers"], v["sdc:routes"], v["sdc:dns_domain"], v["hostname"], v["user-script"])
		}
	}
	f.Add(nicsBoth, `"1.1.1.1"`, `[{"dst": 1}]`, "", "", "\x00")
	f.Fuzz(func(t *testing.T, nics, resolvers, routes, domain, hostname, script string) {
		v := map[string]string{"sdc:uuid": "iid"}
		for k, s := range map[string]string{"sdc:nics": nics, "sdc:resolvers": resolvers, "sdc:routes": routes, "sdc:dns_domain": domain, "hostname": hostname, "user-script": script} {
			if s != "" {
				v[k] = s
			}
		}
		d, err := Build(Input{Mode: ModeKVM, Values: v})
		if err != nil {
			return
		}
		if d.InstanceID() != "iid" || d.LocalHostname() == "" {
			t.Fatalf("instance-id %q hostname %q", d.InstanceID(), d.LocalHostname())
		}
		if d.MetaData["network-data"] != nil && d.NetworkConfig["version"] != 1 {
			t.Fatalf("network config %v", d.NetworkConfig)
		}
		if _, err := json.Marshal(d.NetworkConfig); err != nil {
			t.Fatal(err)
		}
	})
}
