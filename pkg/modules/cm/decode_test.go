package cm

import (
	"path/filepath"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
	"github.com/cloudroot/cloudroot/pkg/modules/internal/famtest"
)

// TestPuppetKeys: puppet's keys read as get_cfg_option_bool/_str read
// them (absent: the default; null: false / "None"), conf of the wrong
// shape given but empty.
func TestPuppetKeys(t *testing.T) {
	for _, tc := range []struct {
		name  string
		in    map[string]any
		check func(puppetConfig) bool
	}{
		{"absent flags default", map[string]any{}, func(p puppetConfig) bool {
			return p.Install && p.Cleanup && !p.Exec && p.StartService && p.InstallType == "packages" && p.AIOURL == PuppetAIOInstallURL
		}},
		{"null flag is false", map[string]any{"install": nil, "start_service": "off"}, func(p puppetConfig) bool { return !p.Install && !p.StartService }},
		{"null path is None", map[string]any{"conf_file": nil}, func(p puppetConfig) bool { return p.ConfFile != nil && *p.ConfFile == "None" && p.SSLDir == nil }},
		{"version null given", map[string]any{"version": nil}, func(p puppetConfig) bool { return p.HasVersion && p.Version == "None" }},
		{"conf not a mapping", map[string]any{"conf": 3}, func(p puppetConfig) bool { return p.HasConf && p.Conf == nil }},
		{"exec_args given", map[string]any{"exec_args": []any{"--test"}}, func(p puppetConfig) bool { return p.HasExecArgs && p.ExecArgs != nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var k puppetKeys
			if err := (&pyval.Decoder{}).Decode(map[string]any{"puppet": tc.in}, &k); err != nil {
				t.Fatal(err)
			}
			if p := decodePuppet(k.Puppet); !tc.check(p) {
				t.Errorf("%+v", p)
			}
		})
	}
}

// TestSaltKeys: salt_minion of the wrong shape fails with the module's
// message; null is an empty mapping; the keys need both halves.
func TestSaltKeys(t *testing.T) {
	g := famtest.Setup(t, filepath.Join("testdata/modgolden/salt_minion", "example1-masterless-debian"))
	for _, tc := range []struct {
		name    string
		in      any
		wantErr string
		check   func(saltConfig) bool
	}{
		{"not a mapping", 3, "salt_minion: expected a mapping, found int", nil},
		{"null", nil, "", func(s saltConfig) bool { return s.Package == "salt-minion" && !s.HasConf && !s.HasKeys }},
		{"one key only", map[string]any{"public_key": "p"}, "", func(s saltConfig) bool { return !s.HasKeys }},
		{"keys and pki_dir null", map[string]any{"public_key": "p", "private_key": 1, "pki_dir": nil}, "",
			func(s saltConfig) bool { return s.HasKeys && s.PrivateKey == "1" && s.PKIDir == "None" }},
		{"masterless", map[string]any{"conf": map[string]any{"file_client": "local"}, "pkg_name": nil}, "",
			func(s saltConfig) bool { return s.Local && s.HasConf && s.Package == "None" }},
		{"conf a list", map[string]any{"conf": []any{"file_client"}}, "", func(s saltConfig) bool { return !s.Local && s.HasConf }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var k saltKeys
			err := (&pyval.Decoder{}).Decode(map[string]any{"salt_minion": tc.in}, &k)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.wantErr {
				t.Fatalf("error %q, want %q", got, tc.wantErr)
			}
			if tc.check != nil {
				if s := decodeSalt(g.C, k.Salt); !tc.check(s) {
					t.Errorf("%+v", s)
				}
			}
		})
	}
}

// TestAnsibleShapes: validate_config's messages for ansible's odd shapes,
// in cloud-init's order (required keys first, then pull, then the
// controller, then the install method).
func TestAnsibleShapes(t *testing.T) {
	base := func(kv ...any) map[string]any {
		m := map[string]any{"install_method": "distro", "package_name": "ansible"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	for _, tc := range []struct {
		name    string
		in      any
		wantErr string
		pulls   int
	}{
		{"not a mapping", []any{1}, "", 0},
		{"missing package_name before a bad pull", map[string]any{"install_method": "pip", "pull": 3},
			"Missing required key 'package_name' from {'install_method': 'pip', 'pull': 3}", 0},
		{"pull item not a dict", base("pull", []any{map[string]any{"url": "u", "playbook_name": "p"}, "x"}),
			"Invalid value of ansible.pull. Expected dict but found 'x'", 0},
		{"pull scalar", base("pull", 3), "Invalid value ansible.pull. Expected either dict of list of dicts but found 3", 0},
		{"pull falsy scalar", base("pull", 0), "", 0},
		{"pull both playbook keys", base("pull", map[string]any{"url": "u", "playbook_name": "a", "playbook_names": []any{"b"}}),
			"Key 'ansible.pull.playbook_name' and 'ansible.pull.playbook_names' are mutually exclusive. Please use 'playbook_names' in {'playbook_name': 'a', 'playbook_names': ['b'], 'url': 'u'}", 0},
		{"pull one dict", base("pull", map[string]any{"url": "u", "playbook_names": []any{"b"}}), "", 1},
		{"controller without work", base("setup_controller", map[string]any{"repositories": []any{}}),
			"Missing required key from {'repositories': []}", 0},
		{"bad method after pull", map[string]any{"install_method": "snap", "package_name": "a"}, "Invalid install method {install}", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var k ansibleKeys
			if err := (&pyval.Decoder{}).Decode(map[string]any{"ansible": tc.in}, &k); err != nil {
				t.Fatal(err)
			}
			a, err := decodeAnsible(k.Ansible)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.wantErr {
				t.Fatalf("error %q, want %q", got, tc.wantErr)
			}
			if err == nil && len(a.Pulls) != tc.pulls {
				t.Errorf("pulls %d, want %d", len(a.Pulls), tc.pulls)
			}
		})
	}
}
