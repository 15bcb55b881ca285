package cloudsigma

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestHostname follows cloud-init's get_hostname tests.
func TestHostname(t *testing.T) {
	const uuid = "65b2fb23-8c03-4187-a3ba-8b7c919e8890"
	for name, want := range map[string]string{
		"test_server":              "test_server",
		"":                         "65b2fb23",
		"тест":                     "65b2fb23",
		"Web #1 (PROD)":            "Web #1 (PROD)",
		"tab\there":                "65b2fb23",
		"lower{brace}":             "65b2fb23",
		strings.Repeat("a", 70):    strings.Repeat("a", 61),
		"back\\slash and [square]": "back\\slash and [square]",
	} {
		if got := Hostname(name, uuid); got != want {
			t.Errorf("Hostname(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestDSMode(t *testing.T) {
	for in, want := range map[any]string{nil: "net", "local": "local", "net": "net", "pass": "pass", "bogus": "net", 3.0: "net"} {
		got, err := DSMode(in)
		if err != nil || got != want {
			t.Errorf("DSMode(%v) = %q %v, want %q", in, got, err, want)
		}
	}
	if _, err := DSMode("disabled"); err == nil {
		t.Error("disabled accepted")
	}
}

// TestParse follows cloud-init's DataSourceCloudSigma tests.
func TestParse(t *testing.T) {
	ctx := `{"cpu": 1000, "meta": {"ssh_public_key": "ssh-rsa AAAAB3NzaC1yc2E.../hQ5D5 john@doe", "cloudinit-user-data": "#cloud-config\n\n..."},
		"name": "test_server", "uuid": "65b2fb23-8c03-4187-a3ba-8b7c919e8890", "vnc_password": "9e84d6cb49e46379",
		"vendor_data": {"location": "zrh", "cloudinit": "#cloud-config\n\n..."}}`
	d, err := Parse([]byte(ctx), "/dev/ttyS1")
	if err != nil {
		t.Fatal(err)
	}
	if d.InstanceID() != "65b2fb23-8c03-4187-a3ba-8b7c919e8890" || d.LocalHostname() != "test_server" || d.Mode != "net" {
		t.Errorf("instance-id %q hostname %q mode %q", d.InstanceID(), d.LocalHostname(), d.Mode)
	}
	if d.CloudName != "cloudsigma" || d.Platform != "cloudsigma" || d.Subplatform != "cepko (/dev/ttyS1)" {
		t.Errorf("platform %q %q %q", d.CloudName, d.Platform, d.Subplatform)
	}
	if string(d.UserData) != "#cloud-config\n\n..." || string(d.VendorData) != "#cloud-config\n\n..." {
		t.Errorf("user-data %q vendor-data %q", d.UserData, d.VendorData)
	}
	if diff := cmp.Diff([]string{"ssh-rsa AAAAB3NzaC1yc2E.../hQ5D5 john@doe"}, d.PublicKeys); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}
	if d.MetaData["vnc_password"] != "9e84d6cb49e46379" || d.MetaData["cpu"] != 1000.0 {
		t.Errorf("meta-data is not the server context: %v", d.MetaData)
	}

	enc := `{"uuid": "u", "meta": {"base64_fields": "cloudinit-user-data", "cloudinit-user-data": "aGkgd29ybGQK"}}`
	if d, err := Parse([]byte(enc), "x"); err != nil || string(d.UserData) != "hi world\n" {
		t.Errorf("encoded user-data: %q %v", d.UserData, err)
	}
	for _, noVendor := range []string{`{"uuid": "u", "meta": {}}`, `{"uuid": "u", "meta": {}, "vendor_data": {"location": "zrh"}}`, `{"uuid": "u", "meta": {}, "vendor_data": "cloudinit"}`} {
		d, err := Parse([]byte(noVendor), "x")
		if err != nil || d.VendorData != nil || d.UserData == nil || len(d.UserData) != 0 || d.PublicKeys != nil {
			t.Errorf("%s: vendor-data %q user-data %q keys %q err %v", noVendor, d.VendorData, d.UserData, d.PublicKeys, err)
		}
	}
	for doc, want := range map[string]string{
		`{"uuid": "u", "meta": {"cloudinit-user-data": 5}}`:           "cloudinit-user-data: expected a string",
		`{"uuid": "u", "meta": {}, "vendor_data": {"cloudinit": []}}`: "vendor_data: cloudinit: expected a string",
		`[]`:                             "expected a JSON object, got a list",
		`{"uuid": 5, "meta": {}}`:        "no uuid",
		`{"uuid": "u", "meta": "x"}`:     "meta: expected an object, got a string",
		"{\"uuid\": \"u\", \"meta\": {}": "not JSON",
	} {
		if _, err := Parse([]byte(doc), "x"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", doc, err, want)
		}
	}
}

// FuzzParse: no reply panics; what parses has the uuid as instance-id and
// a hostname of at most 61 bytes.
func FuzzParse(f *testing.F) {
	replies, _ := filepath.Glob("testdata/*/reply")
	for _, r := range replies {
		if b, err := os.ReadFile(r); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"uuid": "a-b", "name": "", "meta": {"base64_fields": "cloudinit-user-data", "cloudinit-user-data": "=="}}`))
	f.Add([]byte("\x04\n"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		d, err := Parse(raw, "fuzz")
		if err != nil {
			return
		}
		if d.InstanceID() == "" || d.InstanceID() != d.MetaData["uuid"] {
			t.Fatalf("instance-id %q, uuid %v", d.InstanceID(), d.MetaData["uuid"])
		}
		if len(d.Hostname) > 61 {
			t.Fatalf("hostname %q", d.Hostname)
		}
	})
}
