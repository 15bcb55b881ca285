package userdata

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestMakeMIMEShape: every part utf-8 and base64, ASCII included, as
// cloud-init 26.x's MIMEText(content, type, "utf-8") writes it.
func TestMakeMIMEShape(t *testing.T) {
	b, err := MakeMIME([]Attachment{
		{"config.yaml", "cloud-config", []byte("#cloud-config\nhostname: h\n")},
		{"script.sh", "text/x-shellscript", []byte("#!/bin/sh\necho hi\n")},
	})
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`^Content-Type: multipart/mixed; boundary="(={15}\d{19}==)"\nMIME-Version: 1.0\n\n`)
	m := re.FindStringSubmatch(string(b))
	if m == nil {
		t.Fatalf("header shape:\n%s", b)
	}
	got := strings.ReplaceAll(string(b), m[1], "BOUNDARY")
	want := `Content-Type: multipart/mixed; boundary="BOUNDARY"
MIME-Version: 1.0

--BOUNDARY
Content-Type: text/cloud-config; charset="utf-8"
MIME-Version: 1.0
Content-Transfer-Encoding: base64
Content-Disposition: attachment; filename="config.yaml"

I2Nsb3VkLWNvbmZpZwpob3N0bmFtZTogaAo=

--BOUNDARY
Content-Type: text/x-shellscript; charset="utf-8"
MIME-Version: 1.0
Content-Transfer-Encoding: base64
Content-Disposition: attachment; filename="script.sh"

IyEvYmluL3NoCmVjaG8gaGkK

--BOUNDARY--
`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestMakeMIMERoundTrip: make-mime output processes back into its parts.
func TestMakeMIMERoundTrip(t *testing.T) {
	atts := []Attachment{
		{"a.yaml", "cloud-config", []byte("#cloud-config\nhostname: ü\n")},
		{"b.sh", "x-shellscript-per-boot", []byte("#!/bin/sh\necho per-boot\n")},
		{"c", "cloud-boothook", []byte("#cloud-boothook\necho hook\n")},
	}
	b, err := MakeMIME(atts)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Process(context.Background(), "user-data", b, Options{})
	if err != nil || len(res.Errors) > 0 {
		t.Fatalf("%v %v", err, res.Errors)
	}
	if len(res.Parts) != len(atts) {
		t.Fatalf("parts = %d", len(res.Parts))
	}
	for i, a := range atts {
		p := res.Parts[i]
		if p.Filename != a.Filename || p.Type != "text/"+a.Type || string(p.Content) != string(a.Content) {
			t.Errorf("part %d = %s %s %q", i, p.Filename, p.Type, p.Content)
		}
	}
	if res.CloudConfigs[0].Config["hostname"] != "ü" {
		t.Errorf("utf-8 content lost: %v", res.CloudConfigs[0].Config)
	}
}

func TestMakeMIMEUnknownType(t *testing.T) {
	b, err := MakeMIME([]Attachment{{"x", "bogus", []byte("x")}})
	if !errors.Is(err, ErrUnknownType) || !strings.Contains(err.Error(), "'text/bogus' for attachment 1 may be incorrect") {
		t.Errorf("err = %v", err)
	}
	if len(b) == 0 {
		t.Error("the message is still returned (for --force)")
	}
}

func TestListTypes(t *testing.T) {
	want := []string{"cloud-boothook", "cloud-config", "cloud-config-archive", "cloud-config-jsonp", "jinja2",
		"part-handler", "x-include-once-url", "x-include-url", "x-shellscript",
		"x-shellscript-per-boot", "x-shellscript-per-instance", "x-shellscript-per-once"}
	if diff := cmp.Diff(want, ListTypes()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
