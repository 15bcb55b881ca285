package users

import (
	"strings"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/modules/internal/famtest"
)

// FuzzAuthorizedKeys: authorized_keys lines as ssh_util parses them. A
// parsed line prints back to a line that parses the same; merging keys
// into a file is idempotent (a second merge of the same keys changes
// nothing) and keeps every line that holds no key as it was.
func FuzzAuthorizedKeys(f *testing.F) {
	f.Fuzz(func(t *testing.T, file, key, options string, withOptions bool) {
		var opts *string
		if withOptions {
			opts = &options
		}
		k := parseAuthKeyLine(key, opts)
		if k.valid() && opts == nil {
			again := parseAuthKeyLine(k.String(), nil)
			if again != (authKeyLine{line: k.String(), options: k.options, keytype: k.keytype, base64: k.base64, comment: k.comment}) {
				t.Fatalf("%q printed as %q parses as %+v, was %+v", key, k.String(), again, k)
			}
		}
		parse := func(s string) []authKeyLine {
			var l []authKeyLine
			for _, line := range splitKeepLines(s) {
				l = append(l, parseAuthKeyLine(line, nil))
			}
			return l
		}
		old := parse(file)
		once := updateAuthorizedKeys(parse(file), []authKeyLine{k})
		twice := updateAuthorizedKeys(parse(once), []authKeyLine{k})
		// Options given in the config (disable_root_opts) are written as
		// they are, as cloud-init does; options with an unquoted blank or
		// an unbalanced quote make a line neither sshd nor the next run
		// can read, so the key is added again then (found by this target;
		// cloud-init's behaviour too).
		if withOptions && parseAuthKeyLine(k.String(), nil).base64 != k.base64 {
			return
		}
		if once != twice {
			t.Fatalf("not idempotent:\nonce:\n%s\ntwice:\n%s", once, twice)
		}
		got := splitKeepLines(once)
		for i, o := range old {
			if !o.valid() && (i >= len(got) || got[i] != o.line) {
				t.Fatalf("line %d %q not kept: %q", i, o.line, got)
			}
		}
	})
}

// FuzzSSHDConfig: sshd_config keyword lines. Setting a keyword twice
// changes the file once; a line set is one sshd reads back with that
// value; comments and other keywords are untouched; the setting lands
// before the first Match block.
func FuzzSSHDConfig(f *testing.F) {
	f.Fuzz(func(t *testing.T, config, key, value string) {
		k, v := sshdKV(config)
		if l := strings.TrimSpace(config); l != "" && !strings.HasPrefix(l, "#") && !strings.HasPrefix(l, k) {
			t.Fatalf("keyword %q is not the start of %q", k, l)
		}
		_ = v
		// Only a setting that reads back as itself can be checked.
		if k, v := sshdKV(key + " " + value); k != key || v != value || strings.ContainsAny(key+value, "\r\n") || strings.EqualFold(key, "Match") {
			return
		}
		c, _, _ := famtest.NewContext(t, nil, map[string]string{"etc/ssh/sshd_config": config}, nil)
		changed, err := updateSSHDConfig(c, key, value)
		if err != nil {
			t.Fatal(err)
		}
		// sshd_config, or the drop-in when it includes sshd_config.d.
		fn, err := sshdConfigTarget(c)
		if err != nil {
			t.Fatal(err)
		}
		if fn == SSHDConfig && !changed && famtest.ReadFile(t, c, fn) != config {
			t.Fatal("file rewritten without a change")
		}
		if fn != SSHDConfig {
			if famtest.ReadFile(t, c, SSHDConfig) != config {
				t.Fatal("sshd_config changed though it includes the drop-in")
			}
			config = famtest.ReadFile(t, c, fn)
		}
		first := famtest.ReadFile(t, c, fn)
		changed2, err := updateSSHDConfig(c, key, value)
		if err != nil {
			t.Fatal(err)
		}
		if changed2 || famtest.ReadFile(t, c, fn) != first {
			t.Fatalf("second update changed %q", first)
		}
		seen := false
		inMatch := false
		for _, l := range splitKeepLines(first) {
			lk, lv := sshdKV(l)
			if strings.EqualFold(lk, "Match") {
				inMatch = true
			}
			if strings.EqualFold(lk, key) {
				if lv != value {
					t.Fatalf("line %q after setting %s %s", l, key, value)
				}
				seen = seen || !inMatch
			}
		}
		if !seen && !strings.Contains(strings.ToLower(config), "match") {
			t.Fatalf("%s not set outside a Match block:\n%s", key, first)
		}
	})
}
