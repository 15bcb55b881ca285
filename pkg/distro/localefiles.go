package distro

// What applying a locale writes and runs, as the distro classes'
// apply_locale decide it (Facts.SetLocale lists the steps; LocalePlan adds
// the file contents and Debian's skip rules).

import (
	"bufio"
	"bytes"
	"regexp"
	"strings"
	"sync"
)

// FileWrite is a file to write in full.
type FileWrite struct {
	Path    string
	Content string
}

// LocalePlan is what apply_locale does for one locale.
type LocalePlan struct {
	Writes []FileWrite
	Cmds   []Cmd
	// Requires maps a command to the package that provides it, installed
	// first when the command is missing (Debian's "locales").
	Requires map[string]string
	// Warning is cloud-init's warning, if any (e.g. an ignored
	// locale_configfile).
	Warning string
	// Unsupported is set where cloud-init cannot set the locale (the BSDs).
	Unsupported bool
}

// SupportedLocales is the glibc list Debian's class looks locales up in.
const SupportedLocales = "/usr/share/i18n/SUPPORTED"

// SystemLocale is the locale the target is configured with ("" if none):
// the Key of Locale.File (Debian's /etc/default/locale, RHEL/SUSE's
// locale.conf...).
func (f Facts) SystemLocale(read ReadFile) string {
	if f.Locale.File == "" || f.Locale.Key == "" {
		return ""
	}
	b, err := read(f.Locale.File)
	if err != nil {
		return ""
	}
	return shellValue(b, f.Locale.Key)
}

// DefaultLocale is cloud.get_locale(): the system locale where the class
// reads one (Debian, RHEL), else the class's default.
func (f Facts) DefaultLocale(read ReadFile) string {
	switch f.Family {
	case "debian", "redhat":
		if s := f.SystemLocale(read); s != "" {
			return s
		}
	}
	return f.Locale.Default
}

// LocalePlan is apply_locale(locale, outFn) on this distro; header is
// cloud-init's "# Created by cloud-init ..." line for new files.
func (f Facts) LocalePlan(locale, outFn string, read ReadFile, header string) LocalePlan {
	var p LocalePlan
	writes, cmds := f.SetLocale(locale)
	switch f.Family {
	case "debian":
		file := f.Locale.File
		if outFn != "" {
			file = outFn
		}
		sys := f.SystemLocale(read)
		current := sys
		if current == "" {
			current = f.Locale.Default
		}
		_, err := read(file)
		exists := err == nil
		regen := !strings.EqualFold(locale, current) || !exists || sys == ""
		p.Requires = map[string]string{"locale-gen": "locales", "update-locale": "locales"}
		for _, w := range writes {
			if w == f.Locale.Gen && regen {
				old, _ := read(f.Locale.Gen)
				sup, _ := read(SupportedLocales)
				p.Writes = append(p.Writes, FileWrite{w, debianLocaleGen(old, sup, locale)})
			}
		}
		for _, c := range cmds {
			switch c.Argv[0] {
			case "locale-gen":
				if regen {
					p.Cmds = append(p.Cmds, c)
				}
			case "update-locale":
				c.Argv[1] = "--locale-file=" + file
				p.Cmds = append(p.Cmds, c) // needed whenever regen is, or the file is missing
			default:
				p.Cmds = append(p.Cmds, c)
			}
		}
		if !regen {
			p.Cmds = nil
		}
		return p
	case "arch":
		if outFn != "" && outFn != "/etc/locale.conf" {
			p.Warning = "Invalid locale_configfile " + outFn + ", only supported value is /etc/locale.conf"
		}
		p.Writes = []FileWrite{{f.Locale.Gen, header + "\n" + locale + " UTF-8\n"}}
		p.Cmds = cmds
		return p
	case "alpine":
		file := f.Locale.File
		if outFn != "" {
			file = outFn
		}
		p.Writes = []FileWrite{{file, "#\n# This file is created by cloud-init once per new instance boot\n#\n" +
			"export CHARSET=UTF-8\nexport LANG=" + locale + "\nexport LC_COLLATE=C\n"}}
		return p
	case "freebsd", "netbsd", "openbsd", "dragonfly":
		p.Unsupported = true
		return p
	case "gentoo":
		// Gentoo's class ignores the requested locale.
		p.Writes = []FileWrite{{f.Locale.Gen, "C.UTF8 UTF-8\nen_US.UTF-8 UTF-8"}}
		p.Cmds = cmds
		return p
	}
	// RHEL-family and SUSE: KEY=locale in a shell-variable file.
	file := f.Locale.File
	if outFn != "" {
		file = outFn
	}
	old, err := read(file)
	if err != nil {
		old = nil
		if header != "" {
			old = []byte(header + "\n")
		}
	}
	p.Writes = []FileWrite{{file, SetShellVar(old, f.Locale.Key, locale)}}
	p.Cmds = cmds
	return p
}

// SetShellVar sets KEY=value in shell-variable text (rhel_util's
// update_sysconfig_file), replacing the key's lines or appending one.
// Values with whitespace are single-quoted.
func SetShellVar(b []byte, key, value string) string {
	if strings.ContainsAny(value, " \t\r\n") {
		value = "'" + strings.ReplaceAll(value, "'", `'"'"'`) + "'"
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(b) == 0 {
		lines = nil
	}
	done := false
	for i, l := range lines {
		k, _, ok := strings.Cut(strings.TrimSpace(l), "=")
		if ok && strings.TrimSpace(k) == key {
			lines[i] = key + "=" + value
			done = true
		}
	}
	if !done {
		lines = append(lines, key+"="+value)
	}
	return strings.Join(lines, "\n") + "\n"
}

// shellValue is the value of key in shell-variable text (quotes removed).
func shellValue(b []byte, key string) string {
	val := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		l = strings.TrimPrefix(l, "export ")
		k, v, ok := strings.Cut(l, "=")
		if !ok || strings.TrimSpace(k) != key {
			continue
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		val = v
	}
	return val
}

var localeRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^([A-Za-z_]+)(?:\.([A-Za-z0-9\-]+))?(?:@([A-Za-z0-9_\-]+))?$`)
})

// supportedLine is Debian's _lookup_supported_i18n_value: the line of
// SUPPORTED for the requested locale (UTF-8 preferred when no charset is
// asked for), else "<locale>.<charset> <charset>" built from the request.
func supportedLine(supported []byte, requested string) string {
	prefix, charset := requested, ""
	if m := localeRE().FindStringSubmatch(requested); m != nil {
		prefix, charset = m[1], m[2]
		if m[3] != "" {
			prefix += "@" + m[3]
		}
	}
	var cands []string
	// A request that is not valid UTF-8 cannot be a regexp: no candidates.
	if rx, err := regexp.Compile(`^\s*` + regexp.QuoteMeta(prefix) + `(?:\.[^\s@]+)?(?:@[^\s]+)?\s+[^\s]+$`); err == nil {
		for l := range strings.SplitSeq(string(supported), "\n") {
			if rx.MatchString(l) {
				cands = append(cands, strings.TrimSpace(l))
			}
		}
	}
	if len(cands) == 0 {
		if charset == "" {
			charset = "UTF-8"
		}
		return prefix + "." + charset + " " + charset
	}
	if charset != "" {
		exact := regexp.MustCompile(`^\s*` + regexp.QuoteMeta(prefix) + `\.` + regexp.QuoteMeta(charset) + `(?:@[^\s]+)?\s+`)
		for _, l := range cands { // (cands is empty unless prefix compiled above)
			if exact.MatchString(l) {
				return l
			}
		}
	}
	utf8 := regexp.MustCompile(`(?i)\sUTF-8$`)
	for _, l := range cands {
		if utf8.MatchString(l) {
			return l
		}
	}
	return cands[0]
}

// debianLocaleGen enables the locale's line in locale.gen (uncommenting
// it, or appending it), keeping every other line.
func debianLocaleGen(existing, supported []byte, locale string) string {
	line := supportedLine(supported, locale)
	// target is upstream's ^#?\s*LINE\s*$, without a regexp.
	target := func(s string) bool {
		s = strings.TrimPrefix(s, "#")
		return strings.TrimRight(strings.TrimLeft(s, " \t\r\n\f\v"), " \t\r\n\f\v") == line
	}
	var out []string
	found := false
	var lines []string
	if len(existing) > 0 {
		lines = strings.Split(strings.TrimSuffix(string(existing), "\n"), "\n")
	}
	for _, raw := range lines {
		s := strings.TrimSpace(raw)
		if s == "" {
			out = append(out, raw)
			continue
		}
		if target(strings.TrimLeft(s, "# ")) {
			out = append(out, line)
			found = true
			continue
		}
		out = append(out, raw)
	}
	if !found {
		out = append(out, line)
	}
	return strings.TrimRight(strings.Join(out, "\n"), " \t\r\n") + "\n"
}
