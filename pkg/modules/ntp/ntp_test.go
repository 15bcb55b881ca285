package ntp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/cloudroot/cloudroot/pkg/modules/internal/famtest"
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
// wording) with the parameters scripts/goldens/ntp-template.py gave
// upstream's, and requires the same configuration lines for every template
// name cc_ntp can ask for on the distros cloudroot supports.
func TestNTPTemplatesUpstream(t *testing.T) {
	files, _ := filepath.Glob("testdata/ntp-upstream/*.conf*")
	if len(files) == 0 {
		t.Fatal("no upstream renderings (scripts/goldens/ntp-template.py)")
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

// upstreamNTP is one case of testdata/ntp-upstream.json
// (scripts/goldens/ntp.py: upstream's cc_ntp.handle on the same golden
// cases, with recorders for its distro calls).
type upstreamNTP struct {
	Files     map[string]string `json:"files"`
	Renamed   [][2]string       `json:"renamed"`
	Installed []string          `json:"installed"`
	Services  [][]string        `json:"services"`
	Error     string            `json:"error"`
}

// TestNTPUpstream runs ntp on every golden case and requires upstream's
// decisions: the client's configuration file (the same directives; the
// same text from a user's or the image's template), the .dist rename, the
// packages installed, the service reload on a booted system (cloudroot
// reloads nothing in the initramfs) and the error.
func TestNTPUpstream(t *testing.T) {
	b, err := os.ReadFile("testdata/ntp-upstream.json")
	if err != nil {
		t.Fatal(err)
	}
	var up map[string]upstreamNTP
	if err := json.Unmarshal(b, &up); err != nil {
		t.Fatal(err)
	}
	for name, want := range up {
		t.Run(name, func(t *testing.T) {
			g := famtest.Setup(t, filepath.Join("testdata/modgolden/ntp", name))
			runErr := NTP.Run(t.Context(), g.C)
			got := ""
			if runErr != nil {
				got = runErr.Error()
			}
			if got != want.Error {
				t.Errorf("error %q, upstream %q", got, want.Error)
			}
			for p, content := range want.Files {
				if diff := cmp.Diff(directives(content), directives(famtest.ReadFile(t, g.C, p))); diff != "" {
					t.Errorf("%s (-upstream +cloudroot):\n%s", p, diff)
				}
			}
			for _, r := range want.Renamed {
				if !g.C.Root.Exists(r[1]) {
					t.Errorf("%s was not renamed to %s", r[0], r[1])
				}
			}
			var installed []string
			for _, l := range g.Runner.Log {
				if f := strings.Fields(l); len(f) > len(want.Installed) && slices.Contains(f, "install") {
					installed = f[len(f)-len(want.Installed):]
				}
			}
			if diff := cmp.Diff(want.Installed, installed, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("installed (-upstream +cloudroot):\n%s", diff)
			}
			var wantSvc, gotSvc []string
			if g.C.Booted {
				for _, s := range want.Services {
					cmd, err := g.C.Facts().Services().Command(s[0], s[1], s[2:]...)
					if err != nil {
						t.Fatal(err)
					}
					wantSvc = append(wantSvc, strings.Join(cmd.Argv, " "))
				}
			}
			for _, l := range g.Runner.Log {
				if strings.Contains(l, "reload") || strings.Contains(l, "restart") {
					gotSvc = append(gotSvc, l)
				}
			}
			if diff := cmp.Diff(wantSvc, gotSvc, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("services (-upstream +cloudroot):\n%s", diff)
			}
		})
	}
}

func TestModuleGolden(t *testing.T) {
	for _, m := range Modules() {
		t.Run(m.Name, func(t *testing.T) { famtest.Golden(t, m) })
	}
}
