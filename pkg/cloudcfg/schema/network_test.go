package schema

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The CLI goldens of pkg/cli/testdata/schema/net-* hold upstream's answers
// for whole documents; these cases pin ValidateNetwork's own contract.
func TestValidateNetwork(t *testing.T) {
	tests := []struct {
		name      string
		doc       string
		performed bool
		want      []string // "path: message" of the errors, sorted
	}{
		{"v1 bare", "version: 1\nconfig:\n  - {type: physical, name: eth0}\n", true, nil},
		{"v2 wrapped", "network:\n  version: 2\n  ethernets: {eth0: {dhcp4: yes}}\n", true, nil},
		{"empty", "{}\n", false, nil},
		{"empty network", "network:\n", false, nil},
		{"v1 mtu", "version: 1\nconfig:\n  - {type: physical, name: eth0, mtu: x}\n", true,
			[]string{"config.0.mtu: 'x' is not of type 'integer', 'null'"}},
		{"v1 known type reports its own errors", "version: 1\nconfig:\n  - {type: vlan, name: v1}\n", true,
			[]string{"config.0: 'vlan_id' is a required property", "config.0: 'vlan_link' is a required property",
				"config.0: {'type': 'vlan', 'name': 'v1'} is not valid under any of the given schemas"}},
		{"v1 route without gateway passes", "version: 1\nconfig:\n  - {type: route, network: 10.0.0.0/8}\n", true, nil},
		{"true is version 1", "version: true\nconfig: []\n", true, []string{"version: True is not of type 'integer'", "version: True is not one of [1]"}},
		{"unknown version checks v2", "version: 7\n", true, []string{"version: 7 is not one of [2]"}},
		{"v2 extra device key is accepted", "version: 2\nethernets: {eth0: {colour: blue}}\n", true, nil},
		{"v2 unknown top key: both forms' errors", "version: 2\nwifis: {}\n", true,
			[]string{": 'network' is a required property",
				": Additional properties are not allowed ('version', 'wifis' were unexpected)",
				": Additional properties are not allowed ('wifis' was unexpected)"}},
		{"not a mapping", "- 1\n", true, []string{": Network-config is not a YAML dict."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, performed := ValidateNetwork([]byte(tt.doc), "net.yaml")
			if performed != tt.performed {
				t.Errorf("performed = %v, want %v", performed, tt.performed)
			}
			var got []string
			for _, f := range r.Of(Error) {
				got = append(got, f.Path+": "+f.Message)
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// FuzzValidateNetwork: any input gives findings that are errors placed
// inside the document, never a panic.
func FuzzValidateNetwork(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("..", "..", "cli", "testdata", "schema", "net-*", "net.yaml"))
	for _, p := range seeds {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("network: [1]\n"))
	f.Add([]byte("version: 1\nconfig: [{type: [1]}, 5, {type: route}]\n"))
	f.Fuzz(func(t *testing.T, doc []byte) {
		r, _ := ValidateNetwork(doc, "fuzz")
		nlines := strings.Count(string(doc), "\n") + 1
		for _, fd := range r.Findings {
			if fd.Severity != Error {
				t.Fatalf("finding %+v is not an error", fd)
			}
			if fd.Line < 0 || fd.Line > nlines+1 {
				t.Fatalf("finding %+v outside a %d-line document", fd, nlines)
			}
		}
		_ = Annotate(doc, r)
	})
}
