package identify

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func FuzzParsePolicy(f *testing.F) {
	for _, s := range []string{
		DefaultPolicyString, "disabled", "enabled", "report,notfound=enabled",
		"search,found=first,maybe=all", "found=bogus,maybe=,notfound=x=y", ",,", "search=1,found",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, warns := ParsePolicy(s, DefaultPolicy())
		switch p.Mode {
		case ModeDisabled, ModeEnabled, ModeSearch, ModeReport:
		default:
			t.Fatalf("mode %q", p.Mode)
		}
		if p.Found != FoundAll && p.Found != FoundFirst || p.Maybe != MaybeAll && p.Maybe != MaybeNone ||
			p.NotFound != NotFoundEnabled && p.NotFound != NotFoundDisabled {
			t.Fatalf("invalid policy %+v from %q", p, s)
		}
		// The rendered policy parses back to itself, silently.
		q, w := ParsePolicy(p.String(), Policy{})
		if q != p || len(w) != 0 {
			t.Fatalf("%q → %+v → %q → %+v %v", s, p, p.String(), q, w)
		}
		for _, w := range warns {
			if !strings.HasPrefix(w, "WARN: invalid value") {
				t.Fatalf("warning %q", w)
			}
		}
	})
}

func FuzzParseDatasourceList(f *testing.F) {
	for _, s := range []string{
		"[ NoCloud, ConfigDrive, None ]", `["NoCloud"]`, "['Ec2', \"None\"]", "NoCloud, Ec2", "", "[]", "[ a b , 'c d' ]", "[[x]]",
	} {
		f.Add(s)
	}
	if b, err := os.ReadFile(filepath.Join("testdata", "golden", "nocloud-seed", "inputs.yaml")); err == nil {
		f.Add(string(b))
	}
	f.Fuzz(func(t *testing.T, s string) {
		list := ParseDatasourceList(s)
		for _, e := range list {
			if e == "" || strings.ContainsAny(e, " \t\n") {
				t.Fatalf("entry %q from %q", e, s)
			}
		}
		// What ds-identify writes reads back as the same list, through the
		// line reader too — unless an entry carries syntax (',', '#',
		// brackets or quotes) that a flow sequence cannot hold bare.
		for _, e := range list {
			if strings.ContainsAny(e, ",#[]'\"") || strings.ContainsFunc(e, func(r rune) bool { return r < ' ' || r == 0x7f }) {
				return
			}
		}
		line := FormatList(list)
		v, ok := ConfigLine(line+"\n", "datasource_list")
		if len(list) > 0 && !ok {
			t.Fatalf("ConfigLine lost %q", line)
		}
		if got := ParseDatasourceList(v); strings.Join(got, " ") != strings.Join(list, " ") {
			t.Fatalf("%q → %q → %q", s, line, got)
		}
	})
}

func FuzzParseDIConfig(f *testing.F) {
	f.Add("policy: search,found=first\ndatasource: Ec2\n")
	f.Add("# comment\n  policy : 'enabled' # trailing\n")
	f.Add("ci.datasource.ec2.strict_id: warn,10\n")
	f.Fuzz(func(t *testing.T, s string) {
		c := ParseDIConfig(s)
		if strings.Contains(c.Policy, "#") || strings.Contains(c.Datasource, "#") || strings.ContainsAny(c.Policy+c.Datasource, "\n") {
			t.Fatalf("%q → %+v", s, c)
		}
	})
}
