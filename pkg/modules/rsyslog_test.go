package modules

import (
	"strings"
	"testing"
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
