package modules

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cloudroot/cloudroot/templates"
)

// directives are a configuration's lines without comments (whole-line or
// trailing) and blank lines, their words separated by one space.
func directives(s string) []string {
	var out []string
	for l := range strings.SplitSeq(s, "\n") {
		if i := strings.Index(l, "#"); i == 0 || (i > 0 && (l[i-1] == ' ' || l[i-1] == '\t')) {
			l = l[:i]
		}
		if f := strings.Fields(l); len(f) > 0 {
			out = append(out, strings.Join(f, " "))
		}
	}
	return out
}

// TestNTPTemplatesUpstream renders cloudroot's NTP templates (its own
// wording) with the parameters scripts/ntp-template-goldens.sh gave
// upstream's, and requires the same configuration lines for every template
// name cc_ntp can ask for on the distros cloudroot supports.
func TestNTPTemplatesUpstream(t *testing.T) {
	files, _ := filepath.Glob("testdata/ntp-upstream/*.conf*")
	if len(files) == 0 {
		t.Fatal("no upstream renderings (scripts/ntp-template-goldens.sh)")
	}
	params := map[string][]string{
		"servers": {"ntp1.example.com", "192.0.2.1"},
		"pools":   {"0.example.pool.ntp.org", "1.example.pool.ntp.org"},
		"peers":   {"peer1.example.com"},
		"allow":   {"192.0.2.0/24"},
	}
	for _, fn := range files {
		name := filepath.Base(fn)
		t.Run(name, func(t *testing.T) {
			want, err := os.ReadFile(fn)
			if err != nil {
				t.Fatal(err)
			}
			tmpl, ok := templates.NTP(name)
			if !ok {
				switch name {
				case "chrony.conf.cos", "chrony.conf.freebsd", "ntp.conf.freebsd":
					t.Skipf("cloudroot does not support %s's distro", name)
				}
				t.Fatalf("no cloudroot template for %s", name)
			}
			got, err := renderNTPTemplate(string(tmpl), params)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(directives(string(want)), directives(got)); diff != "" {
				t.Errorf("%s (-upstream +cloudroot):\n%s", name, diff)
			}
		})
	}
}

func TestNTPVerifiedDistros(t *testing.T) {
	for id, want := range map[string]bool{"debian": true, "ubuntu": true, "rhel": true, "alpine": true, "arch": false, "gentoo": false} {
		c, _, _ := testContext(t, Config{}, map[string]string{"/etc/os-release": "ID=" + id + "\n"})
		if got := verifiedOn(c, NTP); got != want {
			t.Errorf("%s: verifiedOn = %v, want %v", id, got, want)
		}
		if id == "arch" {
			c.Config = Config{"unverified_modules": []any{"ntp"}}
			if !verifiedOn(c, NTP) {
				t.Errorf("arch with unverified_modules: [ntp] is still skipped")
			}
		}
	}
}
