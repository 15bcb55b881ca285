package secret

import (
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestKey(t *testing.T) {
	for _, tc := range []struct {
		name, path string
		want       bool
	}{
		{"merged_cfg", "merged_cfg", true},
		{"user-data", "ds/meta_data/user-data", true},
		{"vendor_data", "ds/vendor_data", true},
		{"vendor_data", "v1/vendor_data", false},
		{"security-credentials", "ds/meta_data/iam/security-credentials", true},
		{"admin_pass", "ds/meta_data/admin_pass", true},
		{"Admin_Pass", "", true},
		{"plain_text_passwd", "", true},
		{"hashed_passwd", "", true},
		{"password", "", true},
		{"root_password", "", true},
		{"client_secret", "", true},
		{"token", "", true},
		{"ssh_private_key", "", true},
		{"ed25519_private", "merged_cfg/ssh_keys/ed25519_private", true},
		{"ed25519_public", "", false},
		{"instance-id", "ds/meta_data/instance-id", false},
		{"public-keys", "ds/meta_data/public-keys", false},
		{"sensitive_keys", "sensitive_keys", false},
		{"hostname", "", false},
	} {
		if got := Key(tc.name, tc.path); got != tc.want {
			t.Errorf("Key(%q, %q) = %v, want %v", tc.name, tc.path, got, tc.want)
		}
	}
}

func TestPath(t *testing.T) {
	for _, tc := range []struct {
		loc  string
		want bool
	}{
		{"users.0.plain_text_passwd", true},
		{"chpasswd.users.1.password", true},
		{"chpasswd", false},
		{"chpasswd.list", true},
		{"chpasswd.expire", false},
		{"users.0.name", false},
		{"write_files.0.content", false},
		{"", false},
	} {
		var elems []string
		if tc.loc != "" {
			elems = strings.Split(tc.loc, ".")
		}
		if got := Path(elems); got != tc.want {
			t.Errorf("Path(%q) = %v, want %v", tc.loc, got, tc.want)
		}
	}
}

// TestMap: OpenStack's admin_pass and EC2's security-credentials are
// redacted at any depth, inside lists too; the input is left alone.
func TestMap(t *testing.T) {
	in := map[string]any{
		"ds": map[string]any{
			"meta_data": map[string]any{
				"admin_pass":  "s3cret-admin",
				"instance-id": "i-1",
				"iam":         map[string]any{"security-credentials": map[string]any{"role": map[string]any{"Token": "tok"}}},
				"items":       []any{map[string]any{"password": "pw", "name": "x"}},
			},
			"vendor_data": "#cloud-config\n",
		},
		"sensitive_keys": []any{"merged_cfg"},
		"userdata":       "#cloud-config\n",
	}
	want := map[string]any{
		"ds": map[string]any{
			"meta_data": map[string]any{
				"admin_pass":  Redacted,
				"instance-id": "i-1",
				"iam":         map[string]any{"security-credentials": Redacted},
				"items":       []any{map[string]any{"password": Redacted, "name": "x"}},
			},
			"vendor_data": Redacted,
		},
		"sensitive_keys": []any{"merged_cfg"},
		"userdata":       Redacted,
	}
	if diff := cmp.Diff(want, Map(in)); diff != "" {
		t.Errorf("Map (-want +got):\n%s", diff)
	}
	if in["ds"].(map[string]any)["meta_data"].(map[string]any)["admin_pass"] != "s3cret-admin" {
		t.Error("Map changed its input")
	}
}

func TestScrub(t *testing.T) {
	cfg := map[string]any{
		"users":     []any{map[string]any{"name": "ann", "plain_text_passwd": "hunter22"}},
		"chpasswd":  map[string]any{"list": "root:rootpw1\nann:annpw12\n"},
		"hostname":  "host1",
		"user-data": "#cloud-config\n",
		"password":  12345678,
	}
	vals := Values(cfg)
	got := Scrub("users.0.plain_text_passwd hunter22; chpasswd root:rootpw1; host host1; #cloud-config; pw 12345678", vals)
	want := "users.0.plain_text_passwd <redacted>; chpasswd <redacted>; host host1; #cloud-config; pw <redacted>"
	if got != want {
		t.Errorf("Scrub = %q, want %q (values %q)", got, want, vals)
	}
}

func TestContains(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want bool
	}{
		{map[string]any{"name": "a"}, false},
		{map[string]any{"name": "a", "password": "x"}, true},
		{[]any{map[string]any{"users": []any{map[string]any{"plain_text_passwd": "x"}}}}, true},
		{map[string]any{"password": nil}, false},
		{"password", false},
	} {
		if got := Contains(tc.v); got != tc.want {
			t.Errorf("Contains(%v) = %v, want %v", tc.v, got, tc.want)
		}
	}
}

func TestWriter(t *testing.T) {
	var b strings.Builder
	k := &Known{}
	w := Writer{W: &b, Known: k}
	w.Write([]byte("before hunter22\n"))
	k.Set([]string{"hunter22"})
	if n, err := w.Write([]byte("after hunter22\n")); err != nil || n != len("after hunter22\n") {
		t.Fatalf("Write = %d, %v", n, err)
	}
	if got, want := b.String(), "before hunter22\nafter <redacted>\n"; got != want {
		t.Errorf("written %q, want %q", got, want)
	}
}

func TestHandler(t *testing.T) {
	var b strings.Builder
	k := &Known{}
	log := slog.New(NewHandler(slog.NewTextHandler(&b, nil), k)).With("static", "x")
	k.Set([]string{"hunter22"})
	log.Info("password hunter22 set", "err", errors.New("chpasswd: hunter22"), "user", "ann", slog.Group("g", "pw", "hunter22"))
	if strings.Contains(b.String(), "hunter22") || !strings.Contains(b.String(), "user=ann") {
		t.Errorf("logged %q", b.String())
	}
}

// FuzzMap: for any JSON document, Map never panics and leaves no string
// under a credential key, and Scrub removes every value Values finds.
func FuzzMap(f *testing.F) {
	for _, s := range []string{
		`{"ds": {"meta_data": {"admin_pass": "x1234", "items": [{"password": "p1234"}]}}}`,
		`{"users": [{"name": "a", "plain_text_passwd": ["hunter22"]}], "chpasswd": {"list": "root:pw12\n"}}`,
		`{"a": {"b": {"token": 5}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var m map[string]any
		if json.Unmarshal(b, &m) != nil {
			return
		}
		var check func(v any, p string)
		check = func(v any, p string) {
			switch t2 := v.(type) {
			case map[string]any:
				for k, e := range t2 {
					kp := k
					if p != "" {
						kp = p + "/" + k
					}
					if k != "sensitive_keys" && Key(k, kp) && e != Redacted {
						t.Fatalf("%s kept %v", kp, e)
					}
					check(e, kp)
				}
			case []any:
				for _, e := range t2 {
					check(e, p)
				}
			}
		}
		check(Map(m), "")
		for _, v := range Values(m) {
			if strings.Contains(Scrub("x "+v+" y", Values(m)), v) {
				t.Fatalf("Scrub left %q", v)
			}
		}
	})
}
