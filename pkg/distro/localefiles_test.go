package distro

import (
	"io/fs"
	"strings"
	"testing"
)

func TestSupportedLine(t *testing.T) {
	sup := []byte("fi_FI.UTF-8 UTF-8\nfi_FI ISO-8859-1\nfi_FI@euro ISO-8859-15\nde_DE ISO-8859-1\nde_DE@euro ISO-8859-15\n")
	for req, want := range map[string]string{
		"fi_FI":            "fi_FI.UTF-8 UTF-8",
		"fi_FI.ISO-8859-1": "fi_FI.UTF-8 UTF-8", // no "fi_FI.ISO-8859-1" line: UTF-8 preferred, as upstream
		"de_DE":            "de_DE ISO-8859-1",
		"de_DE@euro":       "de_DE@euro ISO-8859-15",
		"ar_AE":            "ar_AE.UTF-8 UTF-8",
		"ja_JP.EUC-JP":     "ja_JP.EUC-JP EUC-JP",
	} {
		if got := supportedLine(sup, req); got != want {
			t.Errorf("supportedLine(%q) = %q, want %q", req, got, want)
		}
	}
}

func TestDebianLocaleGen(t *testing.T) {
	for _, tt := range []struct{ old, want string }{
		{"", "de_DE.UTF-8 UTF-8\n"},
		{"# de_DE.UTF-8 UTF-8\nen_US.UTF-8 UTF-8\n", "de_DE.UTF-8 UTF-8\nen_US.UTF-8 UTF-8\n"},
		{"en_US.UTF-8 UTF-8\n\n\n", "en_US.UTF-8 UTF-8\n\n\nde_DE.UTF-8 UTF-8\n"},
		{"de_DE.UTF-8 UTF-8\n", "de_DE.UTF-8 UTF-8\n"},
	} {
		if got := debianLocaleGen([]byte(tt.old), nil, "de_DE.UTF-8"); got != tt.want {
			t.Errorf("debianLocaleGen(%q) = %q, want %q", tt.old, got, tt.want)
		}
	}
}

func TestSetShellVar(t *testing.T) {
	for _, tt := range []struct{ old, key, val, want string }{
		{"", "LANG", "C", "LANG=C\n"},
		{"LANG=\"en_US.UTF-8\"\nLC_TIME=C\n", "LANG", "de_DE.UTF-8", "LANG=de_DE.UTF-8\nLC_TIME=C\n"},
		{"# c\n", "ZONE", "America/New York", "# c\nZONE='America/New York'\n"},
	} {
		if got := SetShellVar([]byte(tt.old), tt.key, tt.val); got != tt.want {
			t.Errorf("SetShellVar(%q) = %q, want %q", tt.old, got, tt.want)
		}
	}
}

// FuzzLocalePlan feeds arbitrary locale files, locale.gen and SUPPORTED
// lists to every family's plan: no panic, and Debian's locale.gen always
// ends with one newline and keeps the requested entry enabled.
func FuzzLocalePlan(f *testing.F) {
	f.Add("de_DE.UTF-8", "LANG=en_US.UTF-8\n", "# de_DE.UTF-8 UTF-8\n", "de_DE.UTF-8 UTF-8\n")
	f.Add("fi_FI@euro", "", "", "fi_FI@euro ISO-8859-15\n")
	f.Add("x.(", "LANG='a b'\n", "\n\n#\n", "((\n")
	f.Fuzz(func(t *testing.T, locale, conf, gen, sup string) {
		files := map[string]string{"/etc/default/locale": conf, "/etc/locale.conf": conf, "/etc/locale.gen": gen, SupportedLocales: sup}
		read := func(p string) ([]byte, error) {
			if s, ok := files[p]; ok {
				return []byte(s), nil
			}
			return nil, fs.ErrNotExist
		}
		for _, id := range []string{"debian", "rhel", "opensuse-leap", "arch", "alpine"} {
			p := ParseOSRelease([]byte("ID="+id+"\n")).Facts().LocalePlan(locale, "", read, "# h")
			for _, w := range p.Writes {
				if !strings.HasSuffix(w.Content, "\n") && id != "gentoo" {
					t.Errorf("%s: %s content %q lacks a final newline", id, w.Path, w.Content)
				}
			}
		}
	})
}
