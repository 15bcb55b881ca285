package distro

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestParseOSRelease(t *testing.T) {
	for _, tc := range []struct {
		in                      string
		id, family, version     string
		wantUser                string
		wantHostsTemplateFamily string
	}{
		{"ID=debian\nVERSION_ID=\"12\"\n", "debian", "debian", "12", "debian", "debian"},
		{"NAME=\"Ubuntu\"\nID=ubuntu\nID_LIKE=debian\nVERSION_ID=\"24.04\"\n", "ubuntu", "debian", "24.04", "ubuntu", "debian"},
		{"ID=\"rocky\"\nID_LIKE=\"rhel centos fedora\"\nVERSION_ID=\"9.4\"\n", "rocky", "redhat", "9.4", "rocky", "redhat"},
		{"ID=fedora\nVERSION_ID=40\n", "fedora", "redhat", "40", "fedora", "redhat"},
		{"ID=opensuse-leap\nID_LIKE=\"suse opensuse\"\n", "opensuse-leap", "suse", "", "suse", "suse"},
		{"ID=alpine\nVERSION_ID=3.20.0\n", "alpine", "alpine", "3.20.0", "alpine", "alpine"},
		{"ID=mycorp\nID_LIKE=debian\n", "mycorp", "debian", "", "debian", "debian"},
		{"# comment only\n\nGARBAGE\n", "linux", "debian", "", "ubuntu", "debian"},
		{"ID='amzn'\n", "amzn", "redhat", "", "ec2-user", "redhat"},
	} {
		in := ParseOSRelease([]byte(tc.in))
		if in.ID != tc.id || in.Family != tc.family || in.VersionID != tc.version {
			t.Errorf("ParseOSRelease(%q) = %+v, want id=%s family=%s version=%s", tc.in, in, tc.id, tc.family, tc.version)
		}
		if got := in.DefaultUser()["name"]; got != tc.wantUser {
			t.Errorf("%s: default user = %v, want %s", tc.id, got, tc.wantUser)
		}
		if got := in.HostsTemplateName(); got != tc.wantHostsTemplateFamily {
			t.Errorf("%s: hosts template = %s, want %s", tc.id, got, tc.wantHostsTemplateFamily)
		}
	}
}

func TestDetectFallbacks(t *testing.T) {
	files := map[string]string{"/usr/lib/os-release": "ID=arch\n"}
	read := func(p string) ([]byte, error) {
		if s, ok := files[p]; ok {
			return []byte(s), nil
		}
		return nil, errors.New("missing")
	}
	if got := Detect(read).ID; got != "arch" {
		t.Errorf("Detect via /usr/lib/os-release = %q", got)
	}
	files = nil
	if got := Detect(read); got.ID != "unknown" || got.Family != "debian" {
		t.Errorf("Detect with nothing = %+v", got)
	}
}

func FuzzParseOSRelease(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/facts/*/os-release")
	for _, p := range seeds {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("ID=debian\nVERSION_ID=\"12\"\n"))
	f.Add([]byte("ID=\"a\\\"b\"\nID_LIKE='x y'\n"))
	f.Add([]byte("=\n\"\n"))
	known := map[string]bool{}
	for _, v := range Variants {
		known[v] = true
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		in := ParseOSRelease(b)
		if in.ID == "" || in.Family == "" {
			t.Fatalf("empty ID or family: %+v", in)
		}
		if in.DefaultUser()["name"] == "" {
			t.Fatal("empty default user name")
		}
		if v := in.Variant(); !known[v] {
			t.Fatalf("variant %q is not one of cloud-init's", v)
		}
		fa := in.Facts()
		if fa.Family != in.Family || fa.Services() == nil {
			t.Fatalf("facts disagree with the parse: %+v vs %+v", fa, in)
		}
		if _, err := json.Marshal(fa); err != nil {
			t.Fatal(err)
		}
	})
}
