package modules

import (
	"context"
	"strings"
	"testing"
)

// TestHostileHostname: a local-hostname, hostname or fqdn with a newline,
// a control character or shell syntax adds no line to /etc/hostname or
// /etc/hosts (it is ignored with a warning, as if unset).
func TestHostileHostname(t *testing.T) {
	for _, tc := range []struct {
		name, cfg, local string
		wantHost         string
	}{
		{"local-hostname newline", "manage_etc_hosts: true", "vm1\n10.6.6.6 pwn.example", ""},
		{"local-hostname command", "manage_etc_hosts: true", "vm1$(touch /pwn)", ""},
		{"hostname newline", "manage_etc_hosts: true\nhostname: \"vm1\\n10.6.6.6 pwn\"", "meta-host", "meta-host"},
		{"fqdn newline", "manage_etc_hosts: true\nfqdn: \"vm1.example\\n10.6.6.6 pwn.example\"", "meta-host", "meta-host"},
		{"fqdn quote", "manage_etc_hosts: localhost\nfqdn: \"vm1.example\\\" pwn\"", "meta-host", "meta-host"},
		{"local-hostname tab", "manage_etc_hosts: localhost", "vm1\t10.6.6.6\tpwn", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _, _ := testContext(t, yamlCfg(t, tc.cfg), baseFiles)
			c.Meta["local-hostname"] = tc.local
			var live string
			c.SetLiveHostname = func(n string) error { live = n; return nil }
			for _, m := range []Module{SetHostname, UpdateHostname, UpdateEtcHosts} {
				if err := m.Run(context.Background(), c); err != nil {
					t.Fatalf("%s: %v", m.Name, err)
				}
			}
			for _, p := range []string{"/etc/hostname", "/etc/hosts"} {
				if c.Root.Exists(p) {
					if got := readFile(t, c, p); strings.Contains(got, "pwn") {
						t.Errorf("%s holds the hostile value:\n%s", p, got)
					}
				}
			}
			if strings.Contains(live, "pwn") {
				t.Errorf("live hostname set to %q", live)
			}
			if tc.wantHost != "" && live != tc.wantHost {
				t.Errorf("live hostname = %q, want %q (the valid source)", live, tc.wantHost)
			}
		})
	}
}

// TestHostileResolvConf: resolv_conf values with a newline add no line to
// resolv.conf; the clean ones are written.
func TestHostileResolvConf(t *testing.T) {
	cfg := yamlCfg(t, `manage_resolv_conf: true
resolv_conf:
  nameservers: [192.0.2.1, "192.0.2.2\nnameserver 10.6.6.6"]
  searchdomains: [good.example, "a\nsearch pwn.example"]
  domain: "example.com\noptions pwn"
  options: {rotate: true, "timeout:1\nnameserver pwn": true}
`)
	files := map[string]string{"etc/os-release": "ID=fedora\nVERSION_ID=\"40\"\n"}
	c, _, _ := testContext(t, cfg, files)
	if err := Typed(runResolvConf)(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	got := readFile(t, c, "/etc/resolv.conf")
	for _, bad := range []string{"pwn", "10.6.6.6"} {
		if strings.Contains(got, bad) {
			t.Errorf("resolv.conf holds %q:\n%s", bad, got)
		}
	}
	for _, want := range []string{"nameserver 192.0.2.1\n", "good.example", "rotate"} {
		if !strings.Contains(got, want) {
			t.Errorf("resolv.conf lacks %q:\n%s", want, got)
		}
	}
}
