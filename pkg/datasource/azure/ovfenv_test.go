package azure

import (
	"encoding/xml"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// doc wraps a LinuxProvisioningConfigurationSet body and PlatformSettings
// body in an ovf-env.xml using the wa: prefix.
func doc(linux, platform string) string {
	return `<?xml version="1.0" encoding="utf-8"?>
<Environment xmlns="` + OVFNamespace + `" xmlns:wa="` + WANamespace + `">
 <wa:ProvisioningSection><wa:Version>1.0</wa:Version>
  <wa:LinuxProvisioningConfigurationSet>` + linux + `</wa:LinuxProvisioningConfigurationSet>
 </wa:ProvisioningSection>
 <wa:PlatformSettingsSection><wa:PlatformSettings>` + platform + `</wa:PlatformSettings></wa:PlatformSettingsSection>
</Environment>`
}

const minimal = `<wa:UserName>u</wa:UserName><wa:HostName>h</wa:HostName>`

func TestParseOVFEnv(t *testing.T) {
	for _, tc := range []struct {
		name string
		doc  string
		want *OVFEnv
	}{
		{"minimal", doc(minimal, ""), &OVFEnv{UserName: "u", HostName: "h"}},
		{"everything", doc(minimal+`
			<wa:UserPassword>pw</wa:UserPassword>
			<wa:CustomData>
			  I2Nsb3VkLWNv
			  bmZpZwo=
			</wa:CustomData>
			<wa:DisableSshPasswordAuthentication> Yes </wa:DisableSshPasswordAuthentication>
			<wa:SSH><wa:PublicKeys>
			  <wa:PublicKey><wa:Fingerprint>FP</wa:Fingerprint><wa:Path>/p</wa:Path></wa:PublicKey>
			  <wa:PublicKey><wa:Value>ssh-rsa AAA k</wa:Value></wa:PublicKey>
			</wa:PublicKeys></wa:SSH>`,
			`<wa:PreprovisionedVm>true</wa:PreprovisionedVm><wa:PreprovisionedVMType>Savable</wa:PreprovisionedVMType><wa:ProvisionGuestProxyAgent>TRUE</wa:ProvisionGuestProxyAgent>`),
			&OVFEnv{UserName: "u", HostName: "h", Password: "pw", CustomData: []byte("#cloud-config\n"), DisableSSHPasswordAuth: true,
				PublicKeys:       []PublicKey{{Fingerprint: "FP", Path: "/p"}, {Value: "ssh-rsa AAA k"}},
				PreprovisionedVM: true, PreprovisionedVMType: "Savable", ProvisionGuestProxyAgent: true}},
		{"empty values are None", doc(`<wa:UserName/><wa:HostName></wa:HostName><wa:CustomData/><wa:UserPassword/>`, ""), &OVFEnv{}},
		{"other namespaces ignored", doc(minimal+`<UserPassword>x</UserPassword><o:UserPassword xmlns:o="urn:other">y</o:UserPassword>`, ""), &OVFEnv{UserName: "u", HostName: "h"}},
		{"bool words", doc(minimal+`<wa:DisableSshPasswordAuthentication>false</wa:DisableSshPasswordAuthentication>`, `<wa:PreprovisionedVm>0</wa:PreprovisionedVm>`), &OVFEnv{UserName: "u", HostName: "h"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseOVFEnv([]byte(tc.doc))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("-want +got:\n%s", diff)
			}
		})
	}
}

func TestParseOVFEnvErrors(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		is        error
		want      string
	}{
		{"not XML", "hello", nil, "XML syntax error on line 1"},
		{"unclosed", "<a>\n<b>\n</a>", nil, "line 3"},
		{"no provisioning section", `<Environment xmlns="` + OVFNamespace + `"><PropertySection/></Environment>`, ErrNotAzureOVF, ""},
		{"empty provisioning section", `<E xmlns:wa="` + WANamespace + `"><wa:ProvisioningSection/></E>`, ErrNotAzureOVF, ""},
		{"wrong namespace", `<E><ProvisioningSection><X/></ProvisioningSection></E>`, ErrNotAzureOVF, ""},
		{"no linux set", `<E xmlns:wa="` + WANamespace + `">
<wa:ProvisioningSection><wa:Version/></wa:ProvisioningSection></E>`, nil, `line 2: missing configuration for "LinuxProvisioningConfigurationSet"`},
		{"no hostname", doc(`<wa:UserName>u</wa:UserName>`, ""), nil, `missing configuration for "HostName"`},
		{"no platform settings", strings.Replace(doc(minimal, ""), "<wa:PlatformSettings></wa:PlatformSettings>", "", 1), nil, `missing configuration for "PlatformSettings"`},
		{"two users", doc(minimal+"\n<wa:UserName>v</wa:UserName>", ""), nil, `line 5: multiple configuration matches for "UserName" (2)`},
		{"two SSH", doc(minimal+"<wa:SSH/><wa:SSH/>", ""), nil, `multiple configuration matches for "SSH"`},
		{"bad base64", doc(minimal+"<wa:CustomData>abc</wa:CustomData>", ""), nil, "CustomData is not base64"},
		{"two roots", "<a/><b/>", nil, "more than one root element"},
		{"deep", strings.Repeat("<a>", 100) + strings.Repeat("</a>", 100), nil, "nested deeper"},
		{"empty", "", nil, "no root element"},
		{"xml version", "\n<?xml version=\"0\"?><a/>", nil, `XML syntax error on line 2: unsupported version "0"`},
		{"encoding", `<?xml version="1.0" encoding="ebcdic"?><a/>`, nil, "XML syntax error on line 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseOVFEnv([]byte(tc.doc))
			switch {
			case err == nil:
				t.Fatal("no error")
			case tc.is != nil && !errors.Is(err, tc.is):
				t.Errorf("err = %v, want %v", err, tc.is)
			case tc.is == nil && errors.Is(err, ErrNotAzureOVF):
				t.Errorf("err = %v: a broken document is not a foreign one", err)
			case !strings.Contains(err.Error(), tc.want):
				t.Errorf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestRedactPassword(t *testing.T) {
	in := doc(minimal+`<wa:UserPassword>s3cret&amp;more</wa:UserPassword>`, "")
	got, err := RedactPassword([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(in, "s3cret&amp;more", PasswordRedaction, 1)
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	env, err := ParseOVFEnv(got)
	if err != nil || env.Password != PasswordRedaction {
		t.Errorf("redacted document: %v, password %q", err, string(env.Password))
	}
	if same, err := RedactPassword([]byte(doc(minimal, ""))); err != nil || string(same) != doc(minimal, "") {
		t.Errorf("no password: %q, %v", same, err)
	}
	if _, err := RedactPassword([]byte("<a>")); err == nil {
		t.Error("no error for broken XML")
	}
}

func TestMinimalOVF(t *testing.T) {
	b := MinimalOVF("ops & co", "host", "True")
	env, err := ParseOVFEnv(b)
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if env.UserName != "ops & co" || env.HostName != "host" || !env.DisableSSHPasswordAuth {
		t.Errorf("%+v", env)
	}
}

func FuzzParseOVFEnv(f *testing.F) {
	for _, p := range []string{"ovf-media/ovf-env.xml", "seed-dir/ovf-env.xml"} {
		b, err := os.ReadFile(filepath.Join("testdata", p))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(doc(minimal, "")))
	f.Add(MinimalOVF("u", "h", "None"))
	f.Fuzz(func(t *testing.T, b []byte) {
		env, err := ParseOVFEnv(b)
		if err != nil {
			var se *xml.SyntaxError
			var oe *OVFError
			if !errors.Is(err, ErrNotAzureOVF) && !errors.As(err, &se) && !errors.As(err, &oe) {
				t.Fatalf("unexpected error type %T: %v", err, err)
			}
			return
		}
		// A document that parses redacts, and the redacted one parses to
		// the same but for the password.
		red, err := RedactPassword(b)
		if err != nil {
			t.Fatalf("redacting a valid document: %v", err)
		}
		env2, err := ParseOVFEnv(red)
		if err != nil {
			t.Fatalf("redacted document: %v", err)
		}
		if env.Password != "" && env2.Password != PasswordRedaction {
			t.Fatalf("password not redacted: %q", string(env2.Password))
		}
		env2.Password = env.Password
		if diff := cmp.Diff(env, env2); diff != "" {
			t.Fatalf("redaction changed more than the password:\n%s", diff)
		}
	})
}
