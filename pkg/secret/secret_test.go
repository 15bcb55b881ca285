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
		// Issue 25 item 7: the pattern set (whole words, any case).
		{"api-key", "ds/meta_data/api-key", true},
		{"API_KEY", "", true},
		{"apiKey", "", true},
		{"db_pass", "", true},
		{"pwd", "", true},
		{"root_pass", "", true},
		{"adminPass", "", true},
		{"auth_key", "", true},
		{"SecretAccessKey", "", true},
		{"Token", "", true},
		{"oauth-credentials", "", true},
		{"ssh-passphrase", "", true},
		{"bypass", "", false},
		{"passive", "", false},
		{"compass", "", false},
		{"passthrough", "", false},
		{"tokenizer", "", false},
		{"ssh_pwauth", "", false},
		{"public_keys", "", false},
		{"ssh-keys", "", false},
		{"keys", "", false},
		{"AccessKeyId", "", false},
	} {
		if got := Key(tc.name, tc.path); got != tc.want {
			t.Errorf("Key(%q, %q) = %v, want %v", tc.name, tc.path, got, tc.want)
		}
	}
}

func TestWords(t *testing.T) {
	for in, want := range map[string]string{
		"db_pass": "db pass", "api-key": "api key", "adminPass": "admin pass", "APIKey": "api key",
		"SecretAccessKey": "secret access key", "db.password": "db password", "ed25519_private": "ed25519 private",
		"disablePasswordAuthentication": "disable password authentication",
	} {
		if got := strings.Join(words(in), " "); got != want {
			t.Errorf("words(%q) = %q, want %q", in, got, want)
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
	w := &Writer{W: &b, Known: k}
	w.Write([]byte("before hunter22\n"))
	k.Set([]string{"hunter22"})
	if n, err := w.Write([]byte("after hunter22\n")); err != nil || n != len("after hunter22\n") {
		t.Fatalf("Write = %d, %v", n, err)
	}
	if got, want := b.String(), "before hunter22\nafter <redacted>\n"; got != want {
		t.Errorf("written %q, want %q", got, want)
	}
}

// TestWriterSplit: values split across writes are still scrubbed;
// complete lines go out at once, the rest on Flush.
func TestWriterSplit(t *testing.T) {
	vals := []string{"hunter22", "s3cr3t-t0ken-value", "ab"}
	for _, tc := range []struct {
		name    string
		maxLine int
		writes  []string
		// early is what is written before Flush; want after it.
		early, want string
	}{
		{"split in two", 0, []string{"pw hun", "ter22 ok\n"}, "pw <redacted> ok\n", "pw <redacted> ok\n"},
		{"byte by byte", 0, strings.Split("token s3cr3t-t0ken-value end\n", ""), "token <redacted> end\n", "token <redacted> end\n"},
		{"held until flush", 0, []string{"last hunt", "er22"}, "", "last <redacted>"},
		{"progress line ends at CR", 0, []string{"10%\r20%\r30"}, "10%\r20%\r", "10%\r20%\r30"},
		{"short value after its key, split", 0, []string{"pass", "word: a", "b\n"}, "password: <redacted>\n", "password: <redacted>\n"},
		{"short value elsewhere kept", 0, []string{"tab ab\n"}, "tab ab\n", "tab ab\n"},
		{"over MaxLine: cut before the value", 8, []string{"xxxxxxxxxxhunt", "er22yy"}, "xxx", "xxxxxxxxxx<redacted>yy"},
		{"over MaxLine: long value across the cut", 4, []string{"0123456789s3cr3t-t0ken-", "value tail"}, "0123456789", "0123456789<redacted> tail"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			k := &Known{}
			k.Set(vals)
			w := &Writer{W: &b, Known: k, MaxLine: tc.maxLine}
			for _, s := range tc.writes {
				if n, err := w.Write([]byte(s)); err != nil || n != len(s) {
					t.Fatalf("Write(%q) = %d, %v", s, n, err)
				}
			}
			if got := b.String(); !strings.HasPrefix(got, tc.early) || strings.Contains(got, "hunter22") {
				t.Errorf("before Flush: %q, want at least %q", got, tc.early)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if got := b.String(); got != tc.want {
				t.Errorf("written %q, want %q", got, tc.want)
			}
		})
	}
}

// TestScrubShort: a value shorter than MinScrub is replaced only as the
// value of a credential key.
func TestScrubShort(t *testing.T) {
	vals := []string{"ab1"}
	for _, tc := range []struct{ in, want string }{
		{"password: ab1", "password: <redacted>"},
		{"password=ab1 user=ann", "password=<redacted> user=ann"},
		{`{"plain_text_passwd": "ab1", "name": "ab1"}`, `{"plain_text_passwd": "<redacted>", "name": "ab1"}`},
		{"users.0.passwd=ab1", "users.0.passwd=<redacted>"},
		{"map[token:ab1]", "map[token:<redacted>]"},
		{"admin_pass = 'ab1';", "admin_pass = '<redacted>';"},
		{"ab1 ab1 tab1 ab12", "ab1 ab1 tab1 ab12"},
		{"hostname: ab1", "hostname: ab1"},
		{"password: ab12", "password: ab12"},
		{"password: xab1", "password: xab1"},
		{"password:\nab1", "password:\nab1"},
	} {
		if got := Scrub(tc.in, vals); got != tc.want {
			t.Errorf("Scrub(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	// Values keeps short credentials (for this rule) and numbers.
	got := Values(map[string]any{"password": "ab1", "pin": map[string]any{"token": 7}, "name": "ann"})
	if diff := cmp.Diff([]string{"ab1", "7"}, got); diff != "" {
		t.Errorf("Values (-want +got):\n%s", diff)
	}
}

// FuzzWriterSplit: a value split across two writes, at every offset, or
// written a byte at a time, is scrubbed exactly as the whole text is; a
// value of MinScrub or more never survives, even past MaxLine.
func FuzzWriterSplit(f *testing.F) {
	f.Add("pw ", "hunter22", " ok\n")
	f.Add("password: ", "ab", "\n")
	f.Add("", "s3cr3t-t0ken", "")
	f.Add("line1\nx=", "token-value", "\rmore")
	f.Add("aaa", "aaaa", "aaaaa")
	f.Fuzz(func(t *testing.T, prefix, value, suffix string) {
		if value == "" || len(prefix)+len(value)+len(suffix) > 512 {
			return
		}
		vals := []string{value}
		stream := prefix + value + suffix
		want := Scrub(stream, vals)
		k := &Known{}
		k.Set(vals)
		write := func(maxLine int, parts ...string) string {
			var b strings.Builder
			w := &Writer{W: &b, Known: k, MaxLine: maxLine}
			for _, p := range parts {
				if _, err := w.Write([]byte(p)); err != nil {
					t.Fatal(err)
				}
			}
			w.Close()
			return b.String()
		}
		leaks := len(value) >= MinScrub && !strings.Contains(Placeholder, value)
		for i := 0; i <= len(stream); i++ {
			if got := write(0, stream[:i], stream[i:]); got != want {
				t.Fatalf("split at %d: %q, want %q", i, got, want)
			}
			if got := write(3, stream[:i], stream[i:]); leaks && strings.Contains(got, value) {
				t.Fatalf("split at %d past MaxLine: %q leaks %q", i, got, value)
			}
		}
		if got := write(0, strings.Split(stream, "")...); got != want {
			t.Fatalf("byte by byte: %q, want %q", got, want)
		}
	})
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
			if strings.Contains(Placeholder, v) {
				continue // "<redacted>" holds it
			}
			if len(v) < MinScrub {
				in := "password: " + v + "\n"
				if got := Scrub(in, []string{v}); got != "password: "+Placeholder+"\n" {
					t.Fatalf("Scrub(%q) = %q, want the short value redacted", in, got)
				}
				continue
			}
			if strings.Contains(Scrub("x "+v+" y", Values(m)), v) {
				t.Fatalf("Scrub left %q", v)
			}
		}
	})
}
