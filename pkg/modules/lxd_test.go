package modules

import (
	"strings"
	"testing"
)

// TestLXDShapes: the lxd keys' odd shapes give cc_lxd's messages (after
// snap seeding, before any lxd command), a falsy lxd skips the module, and
// the bridge keys' presence (null included) decides as bridge_to_cmd's
// `in` tests do.
func TestLXDShapes(t *testing.T) {
	for _, tc := range []struct {
		name    string
		lxd     any
		wantErr string
		want    string // a command line that must run
	}{
		{"falsy string", "", "", ""},
		{"empty mapping", map[string]any{}, "", ""},
		{"not a mapping", []any{1}, "lxd config must be a dictionary. found a 'list'", ""},
		{"init null", map[string]any{"init": nil}, "lxd.init config must be a dictionary. found a 'NoneType'", ""},
		{"bridge list, preseed int", map[string]any{"bridge": []any{}, "preseed": 3},
			"lxd.bridge config must be a dictionary. found a 'list'. lxd.preseed config must be a string. found a 'int'", ""},
		{"preseed with init", map[string]any{"preseed": "x: 1", "init": map[string]any{"unknown": 1}},
			"Unable to configure LXD. lxd.preseed config can not be provided with key(s): lxd.init", ""},
		{"init unknown key only", map[string]any{"init": map[string]any{"unknown": 1}}, "", "lxd init --auto"},
		{"init falsy options dropped", map[string]any{"init": map[string]any{"network_port": 0, "storage_backend": "dir", "trust_password": nil}},
			"", "lxd init --auto --storage-backend=dir"},
		{"bridge mode null", map[string]any{"bridge": map[string]any{"mode": nil}}, `invalid bridge mode "None"`, ""},
		{"bridge mode absent", map[string]any{"bridge": map[string]any{"name": "br"}}, `invalid bridge mode "None"`, ""},
		{"bridge new, nat null, mtu -1", map[string]any{"bridge": map[string]any{"mode": "new", "name": nil,
			"ipv4_address": "10.0.0.1", "ipv4_netmask": 24, "ipv4_nat": nil, "mtu": -1}}, "",
			"lxc network create None ipv4.address=10.0.0.1/24 ipv6.address=none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, rr, _ := testContext(t, Config{"lxd": tc.lxd}, nil)
			err := LXD.Run(t.Context(), c)
			if got := errString(err); got != tc.wantErr {
				t.Fatalf("error %q, want %q", got, tc.wantErr)
			}
			var cmds []string
			for _, a := range rr.Calls {
				cmds = append(cmds, strings.Join(a, " "))
			}
			if tc.want != "" && !strings.Contains(strings.Join(cmds, "\n"), tc.want) {
				t.Errorf("commands %q lack %q", cmds, tc.want)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
