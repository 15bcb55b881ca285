package ugutil

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/cloudroot/cloudroot/pkg/distro"
	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
	"github.com/cloudroot/cloudroot/pkg/yaml11"
)

// bcfg is cloud-init's test default user (test_user_data_normalize.py).
var bcfg = map[string]any{
	"name": "bob", "plain_text_passwd": "ubuntu", "shell": "/bin/bash",
	"lock_passwd": true, "gecos": "Ubuntu", "groups": []any{"foo"},
}

// normCase is a config to normalise and its distro's default user.
type normCase struct {
	cfg      map[string]any
	distro   map[string]any
	warnings *[]string
}

func normCtx(t testing.TB, cfgYAML string, defUser map[string]any) *normCase {
	t.Helper()
	cfg, _, err := yaml11.LoadMap("test", []byte(cfgYAML))
	if err != nil {
		t.Fatal(err)
	}
	if cfg == nil {
		cfg = map[string]any{}
	}
	if defUser != nil {
		cfg["system_info"] = map[string]any{"default_user": pyval.DeepCopy(defUser)}
	}
	return &normCase{cfg: cfg, distro: distro.Info{ID: "ubuntu", Family: "debian"}.DefaultUser(), warnings: &[]string{}}
}

// normalize decodes c's config as the modules do and normalises it.
func (c *normCase) normalize(t testing.TB) ([]User, *User, []Group, error) {
	t.Helper()
	var k Keys
	d := &pyval.Decoder{Warn: func(m string) { *c.warnings = append(*c.warnings, m) }}
	if err := d.Decode(c.cfg, &k); err != nil {
		return nil, nil, nil, err
	}
	return Normalize(k, c.distro, func(f string, a ...any) { *c.warnings = append(*c.warnings, fmt.Sprintf(f, a...)) })
}

func names(us []User) []string {
	var out []string
	for _, u := range us {
		out = append(out, u.Name)
	}
	return out
}

func TestNormalizeUsers(t *testing.T) {
	tests := []struct {
		name      string
		cfg       string
		defUser   map[string]any
		wantUsers []string
		wantDef   string
		check     func(t *testing.T, us []User)
	}{
		{name: "absent means default (distro)", cfg: "", wantUsers: []string{"ubuntu"}, wantDef: "ubuntu",
			check: func(t *testing.T, us []User) {
				want := User{Name: "ubuntu", Default: true, Gecos: "Ubuntu", Shell: "/bin/bash",
					Groups: []string{"adm", "cdrom", "dip", "lxd", "sudo"}, Sudo: []string{"ALL=(ALL) NOPASSWD:ALL"},
					LockPasswd: true, CreateGroups: true, Keys: []string{"gecos", "groups", "lock_passwd", "shell", "sudo"}}
				if diff := cmp.Diff(want, us[0]); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
			}},
		{name: "empty list", cfg: "users: []", wantUsers: nil},
		{name: "simple dict true", cfg: "users: {default: true}", defUser: bcfg, wantUsers: []string{"bob"}, wantDef: "bob"},
		{name: "simple dict yes", cfg: "users: {default: 'yes'}", defUser: bcfg, wantUsers: []string{"bob"}, wantDef: "bob"},
		{name: "simple dict 1", cfg: "users: {default: '1'}", defUser: bcfg, wantUsers: []string{"bob"}, wantDef: "bob"},
		{name: "simple dict false", cfg: "users: {default: false}", defUser: bcfg, wantUsers: nil},
		{name: "simple dict no", cfg: "users: {default: 'no'}", defUser: bcfg, wantUsers: nil},
		{name: "csv", cfg: "users: joe,bob", wantUsers: []string{"bob", "joe"}},
		{name: "list of names", cfg: "users: [joe, bob]", wantUsers: []string{"joe", "bob"}},
		{name: "old user string", cfg: "user: zetta\nusers: default", defUser: bcfg, wantUsers: []string{"zetta"}, wantDef: "zetta"},
		{name: "old user + csv", cfg: "user: zetta\nusers: default, joe", defUser: bcfg, wantUsers: []string{"joe", "zetta"}, wantDef: "zetta"},
		{name: "old user + list", cfg: "user: zetta\nusers: [bob, joe]", defUser: bcfg, wantUsers: []string{"bob", "joe", "zetta"}, wantDef: "zetta"},
		{name: "old user + dict", cfg: "user: zetta\nusers: {bob: true, joe: true}", defUser: bcfg, wantUsers: []string{"bob", "joe", "zetta"}, wantDef: "zetta"},
		{name: "old user alone", cfg: "user: zetta", defUser: bcfg, wantUsers: []string{"zetta"}, wantDef: "zetta"},
		{name: "old user dict overrides", cfg: "user: {name: zetta, shell: /bin/zsh}", defUser: bcfg, wantUsers: []string{"zetta"}, wantDef: "zetta",
			check: func(t *testing.T, us []User) {
				if us[0].Shell != "/bin/zsh" || us[0].Gecos != "Ubuntu" {
					t.Errorf("zetta = %+v", us[0])
				}
			}},
		{name: "default with extra keys", cfg: "users: [{name: default, blah: true, no-create-home: true}]", defUser: bcfg, wantUsers: []string{"bob"}, wantDef: "bob",
			check: func(t *testing.T, us []User) {
				if !cmp.Equal(us[0].Groups, []string{"foo"}) || !us[0].NoCreateHome {
					t.Errorf("bob = %+v", us[0])
				}
				if !cmp.Equal(us[0].Keys, []string{"blah", "gecos", "groups", "lock_passwd", "no_create_home", "plain_text_passwd", "shell"}) {
					t.Errorf("keys = %v", us[0].Keys)
				}
			}},
		{name: "override default attribute by real name", cfg: "users: [default, {name: bob, lock_passwd: false, groups: [bar]}]", defUser: bcfg,
			wantUsers: []string{"bob"}, wantDef: "bob",
			check: func(t *testing.T, us []User) {
				if us[0].LockPasswd || us[0].Shell != "/bin/bash" || string(us[0].PlainTextPasswd) != "ubuntu" {
					t.Errorf("bob = %+v", us[0])
				}
				if !cmp.Equal(us[0].Groups, []string{"bar", "foo"}) {
					t.Errorf("groups = %v", us[0].Groups)
				}
			}},
		{name: "default created last", cfg: "users: [default, alice, {name: carol}]", wantUsers: []string{"alice", "carol", "ubuntu"}, wantDef: "ubuntu"},
		{name: "dict without name is default", cfg: "users: [{shell: /bin/zsh}]", wantUsers: []string{"ubuntu"}, wantDef: "ubuntu",
			check: func(t *testing.T, us []User) {
				if us[0].Shell != "/bin/zsh" {
					t.Errorf("shell = %q", us[0].Shell)
				}
			}},
		{name: "duplicate name keeps first value", cfg: "users: [{name: a, shell: /bin/a}, {name: a, shell: /bin/b, gecos: G}]", wantUsers: []string{"a"},
			check: func(t *testing.T, us []User) {
				if us[0].Shell != "/bin/a" || us[0].Gecos != "G" {
					t.Errorf("a = %+v", us[0])
				}
			}},
		{name: "no default user configured", cfg: "system_info: {default_user: null}\nusers: [default, x]", wantUsers: []string{"x"}},
		{name: "system_info default user", cfg: "system_info: {default_user: {name: admin, groups: [wheel]}}", wantUsers: []string{"admin"}, wantDef: "admin",
			check: func(t *testing.T, us []User) {
				if !cmp.Equal(us[0].Groups, []string{"wheel"}) || us[0].Sudo != nil || !us[0].LockPasswd {
					t.Errorf("admin = %+v", us[0])
				}
			}},
		{name: "field forms", cfg: `users:
  - name: f
    groups: "a, b ,a"
    sudo: "ALL=(ALL) ALL"
    uid: "1500"
    inactive: 5
    expiredate: 2030-01-02
    ssh_authorized_keys: {k2: "key2", k1: "key1"}
    create_groups: false
    lock_passwd: "false"
    hashed_passwd: "$6$x$y"
    ssh_redirect_user: default`, wantUsers: []string{"f"},
			check: func(t *testing.T, us []User) {
				u := us[0]
				if !cmp.Equal(u.Groups, []string{"a", "b"}) || !cmp.Equal(u.Sudo, []string{"ALL=(ALL) ALL"}) || *u.UID != 1500 ||
					*u.Inactive != 5 || u.ExpireDate != "2030-01-02" || !cmp.Equal(u.SSHAuthorizedKeys, []string{"key1", "key2"}) ||
					u.CreateGroups || u.LockPasswd || u.HashedPasswd != "$6$x$y" || !u.SSHRedirectUser {
					t.Errorf("f = %+v", u)
				}
				if u.HashedPasswd.String() != "REDACTED" {
					t.Errorf("secret prints as %q", u.HashedPasswd.String())
				}
			}},
		{name: "sudo false and null", cfg: "users: [{name: a, sudo: false}, {name: b, sudo: null}]", wantUsers: []string{"a", "b"},
			check: func(t *testing.T, us []User) {
				if us[0].Sudo != nil || us[1].Sudo != nil {
					t.Errorf("sudo = %v %v", us[0].Sudo, us[1].Sudo)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := normCtx(t, tt.cfg, tt.defUser)
			warnings := c.warnings
			orig := pyval.DeepCopy(c.cfg)
			us, def, _, err := c.normalize(t)
			if err != nil {
				t.Fatalf("err = %v", err)
			}
			if diff := cmp.Diff(tt.wantUsers, names(us)); diff != "" {
				t.Errorf("users (-want +got):\n%s", diff)
			}
			gotDef := ""
			if def != nil {
				gotDef = def.Name
			}
			if gotDef != tt.wantDef {
				t.Errorf("default = %q, want %q", gotDef, tt.wantDef)
			}
			for _, u := range us {
				if u.Default != (u.Name == tt.wantDef) {
					t.Errorf("%s.Default = %v", u.Name, u.Default)
				}
			}
			if tt.check != nil && len(us) > 0 {
				tt.check(t, us)
			}
			if !cmp.Equal(orig, c.cfg) {
				t.Error("Normalize modified the config")
			}
			if len(*warnings) > 0 {
				t.Errorf("warnings: %v", *warnings)
			}
		})
	}
}

func TestNormalizeGroups(t *testing.T) {
	tests := []struct {
		cfg  string
		want []Group
	}{
		{"groups: [{ubuntu: [foo, bar], bob: users}, cloud-users, {bob: users2}]", []Group{
			{"bob", []string{"users", "users2"}}, {"ubuntu", []string{"bar", "foo"}}, {"cloud-users", []string{}}}},
		{"groups: [bob]", []Group{{"bob", []string{}}}},
		{"groups: bob,joe, steve", []Group{{"bob", []string{}}, {"joe", []string{}}, {"steve", []string{}}}},
		{"groups: {bob: [s], joe: [], steve: null, ann: 'x, y'}", []Group{
			{"ann", []string{"x", "y"}}, {"bob", []string{"s"}}, {"joe", []string{}}, {"steve", []string{}}}},
	}
	for _, tt := range tests {
		t.Run(tt.cfg, func(t *testing.T) {
			us, _, gs, err := normCtx(t, tt.cfg+"\nusers: []", nil).normalize(t)
			if err != nil || len(us) != 0 {
				t.Fatalf("users %v err %v", us, err)
			}
			if diff := cmp.Diff(tt.want, gs, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("groups (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNormalizeUsersErrors(t *testing.T) {
	tests := []struct {
		name, cfg string
		users     []string
		warn      bool
	}{
		{"users wrong type", "users: 5", nil, true},
		{"user wrong type", "user: [a]\nusers: []", nil, true},
		{"bad entry type", "users: [a, 5, b]", []string{"a", "b"}, false},
		{"bad dict value", "users: {a: [1], b: true}", []string{"b"}, false},
		{"bad uid drops user", "users: [{name: a, uid: x}, b]", []string{"b"}, false},
		{"bad sudo keeps user", "users: [{name: a, sudo: true}]", []string{"a"}, false},
		{"groups wrong type", "groups: 5\nusers: [a]", []string{"a"}, false},
		{"bad member type", "groups: [{g: {x: 1}}]\nusers: [a]", []string{"a"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := normCtx(t, tt.cfg, nil)
			warnings := c.warnings
			us, _, _, err := c.normalize(t)
			if (len(*warnings) > 0) != tt.warn {
				t.Errorf("warnings = %v", *warnings)
			}
			if !tt.warn && err == nil {
				t.Error("no error")
			}
			if diff := cmp.Diff(tt.users, names(us)); diff != "" {
				t.Errorf("users (-want +got):\n%s", diff)
			}
		})
	}
}

// FuzzNormalizeUsers feeds arbitrary YAML through Normalize: it must
// not panic, must not modify the config, and every user it returns must
// have a name.
func FuzzNormalizeUsers(f *testing.F) {
	files, _ := filepath.Glob("../../testdata/accounts/*/cloud-config.yaml")
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("users: {a: {b: {c: 1}}, default: yes}\nuser: {name: ''}"))
	f.Add([]byte("groups: [[a], {b: [[c]]}]\nusers: [[a, [b]], {name: [x]}]"))
	f.Fuzz(func(t *testing.T, b []byte) {
		cfg, _, err := yaml11.LoadMap("fuzz", b)
		if err != nil || cfg == nil {
			return
		}
		orig := pyval.DeepCopy(cfg)
		c := &normCase{cfg: cfg, distro: distro.Info{ID: "debian", Family: "debian"}.DefaultUser(), warnings: &[]string{}}
		us, def, _, _ := c.normalize(t)
		for _, u := range us {
			if u.Name == "" {
				t.Fatalf("user without a name: %+v", u)
			}
		}
		if def != nil && !def.Default {
			t.Fatal("default user not marked default")
		}
		if !cmp.Equal(orig, cfg) {
			t.Fatal("config modified")
		}
	})
}

// TestDecodeShapes: the shapes users, user and groups accept, decoded by
// pyval's decoder into Keys and normalised as ug_util does.
func TestDecodeShapes(t *testing.T) {
	tests := []struct {
		name  string
		cfg   string
		users []string
		def   string
		check func(t *testing.T, us []User, gs []Group)
	}{
		{name: "users: default", cfg: "users: default", users: []string{"ubuntu"}, def: "ubuntu"},
		{name: "comma string, sorted", cfg: "users: 'b, a,default'", users: []string{"a", "b", "ubuntu"}, def: "ubuntu"},
		{name: "dict name to config", cfg: "users: {carol: false, alice: true, bob: {shell: /bin/zsh, name: ignored}}", users: []string{"alice", "bob"},
			check: func(t *testing.T, us []User, _ []Group) {
				if us[1].Shell != "/bin/zsh" || !cmp.Equal(us[1].Keys, []string{"shell"}) {
					t.Errorf("bob = %+v", us[1])
				}
			}},
		{name: "old user string joins the list", cfg: "user: zetta\nusers: [a]", users: []string{"a", "zetta"}, def: "zetta"},
		{name: "dict with default false keeps user: out", cfg: "user: zetta\nusers: {default: false, a: 1}", users: []string{"a"}},
		{name: "groups dict with member list and string", cfg: "users: []\ngroups: {admins: [b, a, a], ops: 'c, d', none: null}",
			check: func(t *testing.T, _ []User, gs []Group) {
				want := []Group{{"admins", []string{"a", "b"}}, {"none", []string{}}, {"ops", []string{"c", "d"}}}
				if diff := cmp.Diff(want, gs, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("groups (-want +got):\n%s", diff)
				}
			}},
		{name: "sudo false", cfg: "users: [{name: a, sudo: false}]", users: []string{"a"},
			check: func(t *testing.T, us []User, _ []Group) {
				if us[0].Sudo != nil {
					t.Errorf("sudo = %q", us[0].Sudo)
				}
			}},
		{name: "lock-passwd in a users entry is lock_passwd", cfg: "users: [{name: a, lock-passwd: false, no-create-home: true}]", users: []string{"a"},
			check: func(t *testing.T, us []User, _ []Group) {
				if us[0].LockPasswd || !us[0].NoCreateHome || !cmp.Equal(us[0].Keys, []string{"lock_passwd", "no_create_home"}) {
					t.Errorf("a = %+v", us[0])
				}
			}},
		{name: "lock-passwd in default_user is not read (ug_util cleans only users entries)",
			cfg: "system_info: {default_user: {name: d, lock-passwd: false}}", users: []string{"d"}, def: "d",
			check: func(t *testing.T, us []User, _ []Group) {
				if !us[0].LockPasswd || !cmp.Equal(us[0].Keys, []string{"groups", "lock-passwd"}) {
					t.Errorf("d = %+v", us[0])
				}
			}},
		{name: "ssh_authorized_keys as a string", cfg: "users: [{name: a, ssh_authorized_keys: ssh-ed25519 AAAA a@b}]", users: []string{"a"},
			check: func(t *testing.T, us []User, _ []Group) {
				if !us[0].SSHAuthorizedKeysSet || !cmp.Equal(us[0].SSHAuthorizedKeys, []string{"ssh-ed25519 AAAA a@b"}) {
					t.Errorf("a = %+v", us[0])
				}
			}},
		{name: "mappings merged for a name given twice", cfg: "users: [{name: a, groups: {x: 1}, ssh_authorized_keys: {k1: one}}, {name: a, groups: {w: 1}, ssh_authorized_keys: {k1: other, k0: zero}}]",
			users: []string{"a"},
			check: func(t *testing.T, us []User, _ []Group) {
				if !cmp.Equal(us[0].Groups, []string{"w", "x"}) || !cmp.Equal(us[0].SSHAuthorizedKeys, []string{"zero", "one"}) {
					t.Errorf("a = %+v", us[0])
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := normCtx(t, tt.cfg, nil)
			us, def, gs, err := c.normalize(t)
			if err != nil || len(*c.warnings) > 0 {
				t.Fatalf("err %v, warnings %q", err, *c.warnings)
			}
			if diff := cmp.Diff(tt.users, names(us)); diff != "" {
				t.Errorf("users (-want +got):\n%s", diff)
			}
			if got := ""; def != nil && def.Name != tt.def || def == nil && tt.def != got {
				t.Errorf("default = %v, want %q", def, tt.def)
			}
			if tt.check != nil {
				tt.check(t, us, gs)
			}
		})
	}
}
