package modules

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// Cases from cloud-init's own rsyslog remote-line tests, by behaviour.
func TestParseSyslogRemote(t *testing.T) {
	for _, tt := range []struct{ line, name, want, err string }{
		{"10.0.4.1", "juju", "*.* @10.0.4.1 # juju", ""},
		{"@@192.168.1.1:514", "", "*.* @@192.168.1.1:514", ""},
		{"kern.* @10.1.1.1 # kernel log", "", "kern.* @10.1.1.1 # kernel log", ""},
		{"[2001:db8::1]:10514", "v6", "*.* @[2001:db8::1]:10514 # v6", ""},
		{"@@2001:db8::1", "", "", "Invalid host specification"},
		{"a b c", "", "", "multiple spaces"},
		{"*.* @:514", "", "", "address is required"},
		{"x:0", "", "*.* @x", ""},
	} {
		r, err := ParseSyslogRemote(tt.line, tt.name)
		switch {
		case tt.err != "":
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: err = %v, want %q", tt.line, err, tt.err)
			}
		case err != nil:
			t.Errorf("%q: %v", tt.line, err)
		case r.String() != tt.want:
			t.Errorf("%q = %q, want %q", tt.line, r.String(), tt.want)
		}
	}
}

// FuzzParseSyslogRemote: no panic; a parsed rule prints a line that parses
// to the same rule, for addresses without blanks, brackets or "#" (which
// cloud-init passes through verbatim).
func FuzzParseSyslogRemote(f *testing.F) {
	for _, s := range []string{"10.0.4.1", "@@[::1]:514", "kern.* @h:1 # c", "a b c", "##", "[x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		r, err := ParseSyslogRemote(line, "")
		if f := strings.Fields(r.Addr); err != nil || len(f) != 1 || f[0] != r.Addr || strings.ContainsAny(r.Addr, "#[]@") {
			return // cloud-init keeps such addresses verbatim; they need not round-trip
		}
		r2, err := ParseSyslogRemote(r.String(), "")
		if err != nil {
			t.Fatalf("%q → %q does not parse: %v", line, r.String(), err)
		}
		if strings.Join(strings.Fields(r2.String()), " ") != strings.Join(strings.Fields(r.String()), " ") {
			t.Fatalf("%q → %q → %q", line, r.String(), r2.String())
		}
	})
}

// upstreamRsyslog is one case of testdata/rsyslog-upstream.json
// (scripts/goldens/rsyslog.py: upstream's cc_rsyslog.handle on the same
// golden cases).
type upstreamRsyslog struct {
	Files     map[string]string `json:"files"`
	Installed []string          `json:"installed"`
	Reload    [][]string        `json:"reload"`
	Error     string            `json:"error"`
}

// sortRemotes sorts the lines between "# begin remotes" and "# end
// remotes": cloudroot writes remotes by name, cloud-init in YAML order.
func sortRemotes(s string) string {
	lines := strings.Split(s, "\n")
	start := -1
	for i, l := range lines {
		switch l {
		case "# begin remotes":
			start = i + 1
		case "# end remotes":
			if start >= 0 {
				slices.Sort(lines[start:i])
				start = -1
			}
		}
	}
	return strings.Join(lines, "\n")
}

// TestRsyslogUpstream runs rsyslog on every golden case and requires
// upstream's files (remotes compared as a set), packages, reload on a
// booted system, and error message.
func TestRsyslogUpstream(t *testing.T) {
	b, err := os.ReadFile("testdata/rsyslog-upstream.json")
	if err != nil {
		t.Fatal(err)
	}
	var up map[string]upstreamRsyslog
	if err := json.Unmarshal(b, &up); err != nil {
		t.Fatal(err)
	}
	for name, want := range up {
		t.Run(name, func(t *testing.T) {
			g := goldenSetup(t, filepath.Join("testdata/modgolden/rsyslog", name))
			runErr := Rsyslog.Run(t.Context(), g.c)
			got := ""
			if runErr != nil {
				got = runErr.Error()
			}
			if got != want.Error {
				t.Errorf("error %q, upstream %q", got, want.Error)
			}
			for p, content := range want.Files {
				if got := readFile(t, g.c, p); sortRemotes(got) != sortRemotes(content) {
					t.Errorf("%s (-upstream +cloudroot):\n%s", p, cmp.Diff(content, got))
				}
			}
			var installed []string
			var reload []string
			for _, l := range g.Runner.Log {
				f := strings.Fields(l)
				if slices.Contains(f, "install") && len(f) > len(want.Installed) {
					installed = f[len(f)-len(want.Installed):]
				} else {
					reload = append(reload, l)
				}
			}
			if diff := cmp.Diff(want.Installed, installed, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("installed (-upstream +cloudroot):\n%s", diff)
			}
			var wantReload []string
			if g.c.Booted {
				for _, r := range want.Reload {
					if r[0] == "command" {
						wantReload = append(wantReload, strings.Join(r[1:], " "))
						continue
					}
					cmd, err := g.c.Facts().Services().Command(r[0], r[1], r[2:]...)
					if err != nil {
						t.Fatal(err)
					}
					wantReload = append(wantReload, strings.Join(cmd.Argv, " "))
				}
			}
			if diff := cmp.Diff(wantReload, reload, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("reload (-upstream +cloudroot):\n%s", diff)
			}
		})
	}
}
