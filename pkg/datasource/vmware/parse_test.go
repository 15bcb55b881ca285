package vmware

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func gz(t testing.TB, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	w.Close()
	return b.Bytes()
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func TestValue(t *testing.T) {
	for in, want := range map[string]string{
		"":          "",
		"---":       "",
		"---\n":     "",
		"  \n\t":    "",
		"x\n":       "x",
		" x ":       " x",
		"--- \nx\n": "--- \nx",
		"----":      "----",
	} {
		if got := Value(in); got != want {
			t.Errorf("Value(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDecode(t *testing.T) {
	text := "#cloud-config\nhostname: h\n"
	for _, tc := range []struct {
		name, enc, data, want, err string
	}{
		{"plain", "", text, text, ""},
		{"unknown encoding is plain", "rot13", text, text, ""},
		{"encoding case matters", "BASE64", "aGk=", "aGk=", ""},
		{"base64", "base64", b64([]byte(text)), text, ""},
		{"b64 with line breaks", "b64", "I2Nsb3Vk\nLWNvbmZp\r\nZwpob3N0\nbmFtZTogaAo=", text, ""},
		{"base64 with junk", "base64", "aG*k=", "hi", ""},
		{"gzip+base64", "gzip+base64", b64(gz(t, text)), text, ""},
		{"gz+b64", "gz+b64", b64(gz(t, text)), text, ""},
		{"gz+b64 without gzip inside", "gz+b64", b64([]byte(text)), text, ""},
		{"bad padding", "base64", "aGk", "", "k (base64): invalid base64"},
		{"nothing in the alphabet", "base64", "@@!", "", ""},
		{"padding inside", "base64", "aG=k", "", "invalid base64"},
		{"truncated gzip", "gzip+base64", b64(gz(t, text)[:20]), "", "k (gzip+base64): invalid gzip data"},
		{"bad gzip header", "gz+b64", b64([]byte{0x1f, 0x8b, 0, 0}), "", "invalid gzip data"},
		{"bad base64 under gzip", "gz+b64", "%%%=", "", "k (gz+b64): invalid base64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Decode("k", tc.enc, tc.data)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestParseMetadata(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     map[string]any
		err      string
	}{
		{"empty", "", map[string]any{}, ""},
		{"spaces", " \n", map[string]any{}, ""},
		{"json numbers", `{"i": 3, "f": 1.5, "e": 1e3, "big": 12345678901234567890, "l": [1, {"n": 2}]}`,
			map[string]any{"i": 3, "f": 1.5, "e": 1000.0, "big": 1.2345678901234567e19, "l": []any{1, map[string]any{"n": 2}}}, ""},
		{"yaml (a plain yes key is the boolean true, as PyYAML reads it)", "instance-id: i\nnum: 7\nyes: true\n", map[string]any{"instance-id": "i", "num": 7, "true": true}, ""},
		{"yaml document marker", "---\nlocal-hostname: h\n", map[string]any{"local-hostname": "h"}, ""},
		{"json array", "[1]", nil, "key: expected a mapping, got JSON array"},
		{"json string", `"x"`, nil, "key: expected a mapping, got JSON string"},
		{"yaml scalar", "just text", nil, "key: neither JSON nor a YAML mapping"},
		{"yaml broken", "a: [", nil, "key: neither JSON nor a YAML mapping"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseMetadata("key", []byte(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestProcessMetadata(t *testing.T) {
	v2 := map[string]any{"version": 2, "ethernets": map[string]any{"e": map[string]any{"dhcp4": true}}}
	v2yaml := "version: 2\nethernets:\n  e:\n    dhcp4: true\n"
	for _, tc := range []struct {
		name string
		md   map[string]any
		want map[string]any // network config
		err  string
	}{
		{"none", map[string]any{"a": 1}, nil, ""},
		{"mapping", map[string]any{"network": v2}, v2, ""},
		{"plain yaml string", map[string]any{"network": v2yaml}, v2, ""},
		{"base64", map[string]any{"network": b64([]byte(v2yaml)), "network.encoding": "base64"}, v2, ""},
		{"gzip+base64 json", map[string]any{"network": b64(gz(t, `{"version": 2, "ethernets": {"e": {"dhcp4": true}}}`)), "network.encoding": "gzip+base64"}, v2, ""},
		{"empty string dropped", map[string]any{"network": "", "network.encoding": "base64"}, nil, ""},
		{"empty mapping dropped", map[string]any{"network": map[string]any{}}, nil, ""},
		{"decodes to nothing", map[string]any{"network": "   "}, nil, ""},
		{"a number", map[string]any{"network": 5}, nil, "md: network must be a mapping or an encoded string, not int"},
		{"bad encoding", map[string]any{"network": "YWJ", "network.encoding": "b64"}, nil, "md network (b64): invalid base64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ProcessMetadata("md", tc.md)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if _, ok := tc.md["network.encoding"]; ok {
				t.Error("network.encoding left in meta-data")
			}
			n, ok := tc.md["network"].(map[string]any)
			switch {
			case got != nil && (!ok || cmp.Diff(map[string]any{"config": got}, n) != ""):
				t.Errorf("meta-data network = %v, want {config: ...}", tc.md["network"])
			case got == nil && ok && len(n["config"].(map[string]any)) != 0:
				t.Errorf("meta-data network = %v", n)
			}
		})
	}
}

func TestBuildDefaults(t *testing.T) {
	d, err := Build(Input{Method: MethodGuestinfo, MetaDataKey: GuestinfoMetadata, MetaData: map[string]any{
		"cloud-name": 7, "availability_zone": "az", "public_keys": []any{"k1", "k2"}, "public-keys": "ignored"},
		ProductUUID: " ABC-DEF\n"})
	if err != nil {
		t.Fatal(err)
	}
	if d.InstanceID() != "abc-def" || d.CloudName != "vmware" || d.AvailabilityZone != "az" || d.Region != "" {
		t.Errorf("got %+v", d)
	}
	if diff := cmp.Diff([]string{"ignored"}, d.PublicKeys); diff != "" {
		t.Errorf("public-keys is found before public_keys (-want +got):\n%s", diff)
	}
	if _, err := Build(Input{Method: MethodEnvvar, MetaDataKey: "VMX_GUESTINFO_METADATA"}); !errors.Is(err, ErrNoInstanceID) {
		t.Errorf("err = %v, want ErrNoInstanceID", err)
	}
	if Subplatform("x") != "unknown" {
		t.Error("unknown method")
	}
}

func TestRedactKeys(t *testing.T) {
	for _, tc := range []struct {
		md        map[string]any
		keys, bad []string
	}{
		{map[string]any{}, nil, nil},
		{map[string]any{"redact": "userdata"}, []string{"userdata"}, nil},
		{map[string]any{"redact": []any{"userdata", "vendordata", "two words", "", 5, "x\ny"}}, []string{"userdata", "vendordata"}, []string{"two words", "", "5", "x\ny"}},
		{map[string]any{"cleanup-guestinfo": []any{"metadata"}}, []string{"metadata"}, nil},
		{map[string]any{"redact": []any{"a"}, "cleanup-guestinfo": []any{"b"}}, []string{"a"}, nil},
		{map[string]any{"redact": true}, nil, []string{"true"}},
	} {
		keys, bad := RedactKeys(tc.md)
		if diff := cmp.Diff(tc.keys, keys); diff != "" {
			t.Errorf("%v keys (-want +got):\n%s", tc.md, diff)
		}
		if diff := cmp.Diff(tc.bad, bad); diff != "" {
			t.Errorf("%v bad (-want +got):\n%s", tc.md, diff)
		}
	}
}

// FuzzDecode: decoding never panics; base64 and gzip+base64 of any bytes
// decode back to them.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{"", "hello", "#cloud-config\n", "\x1f\x8b\x08"} {
		f.Add([]byte(s), "base64")
	}
	f.Add(gz(f, "#cloud-config\n"), "gz+b64")
	f.Fuzz(func(t *testing.T, data []byte, enc string) {
		if _, err := Decode("k", enc, string(data)); err != nil && !strings.HasPrefix(err.Error(), "k (") {
			t.Fatalf("error without the key: %v", err)
		}
		got, err := Decode("k", "b64", b64(data))
		if err != nil {
			t.Fatal(err)
		}
		if len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b {
			return // gzip-looking data is not passed through
		}
		if !bytes.Equal(got, data) {
			t.Fatalf("base64 round trip: %q → %q", data, got)
		}
		got, err = Decode("k", "gzip+base64", b64(gz(t, string(data))))
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("gzip round trip: %q → %q, %v", data, got, err)
		}
	})
}

// FuzzParseMetadata: any document either fails with an error naming its
// key or builds Data with an instance-id.
func FuzzParseMetadata(f *testing.F) {
	for _, c := range []string{"guestinfo-json", "guestinfo-product-uuid", "backdoor"} {
		b, err := os.ReadFile(filepath.Join("testdata", c, "guestinfo", "metadata"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("network: " + b64([]byte("version: 1\nconfig: []\n")) + "\nnetwork.encoding: base64\n"))
	f.Add([]byte("redact: [userdata]\npublic-keys: {a: [k1, k2], b: k3}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		md, err := ParseMetadata("md", b)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "md") {
				t.Fatalf("error without the key: %v", err)
			}
			return
		}
		d, err := Build(Input{Method: MethodGuestinfo, MetaDataKey: "md", MetaData: md, ProductUUID: "uuid"})
		if err != nil {
			if !strings.HasPrefix(err.Error(), "md") {
				t.Fatalf("error without the key: %v", err)
			}
			return
		}
		if d.Name != "VMware" || d.InstanceID() == "" {
			t.Fatalf("bad data %+v", d)
		}
		RedactKeys(d.MetaData)
	})
}
