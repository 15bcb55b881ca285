package identify

import (
	"io/fs"
	"path"
	"slices"
	"strings"
)

// This file reads configuration the way ds-identify's shell does: line by
// line, never as YAML. A key is recognised at any indentation, the last
// occurrence wins, and list values must be a single-line flow sequence.

// ParseDatasourceList parses a datasource_list value as ds-identify's
// parse_yaml_array does: one leading '[' and one trailing ']' are dropped,
// the rest split at commas, each item trimmed and unquoted (one pair of
// matching ' or "), and the result split again at white space. It accepts
// `[ A, B ]`, `['A', "B"]` and `A, B`; it never fails.
func ParseDatasourceList(v string) []string {
	v = strings.TrimSpace(v)
	v = strings.TrimPrefix(v, "[")
	v = strings.TrimSuffix(v, "]")
	var out []string
	for _, tok := range strings.Split(v, ",") {
		tok = unquote(strings.Join(strings.Fields(tok), " "))
		out = append(out, strings.Fields(tok)...)
	}
	return out
}

// unquote removes one pair of matching surrounding quotes.
func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}

// ConfigLine looks for key in text the way check_config does: each line
// cut at the first '#' and trimmed; a line `key: value` or exactly `key:`
// matches, at any indentation. It returns the value of the last match
// (after "key:" and one optional space, trimmed).
func ConfigLine(text, key string) (string, bool) {
	var val string
	var ok bool
	for _, line := range strings.Split(text, "\n") {
		line, _, _ = strings.Cut(line, "#")
		line = strings.TrimSpace(line)
		if line == key+":" {
			val, ok = "", true
		} else if rest, found := strings.CutPrefix(line, key+": "); found {
			val, ok = strings.TrimSpace(rest), true
		}
	}
	return val, ok
}

// configFiles lists /etc/cloud/cloud.cfg and cloud.cfg.d/*.cfg (in glob
// order) that exist as regular files, or only the cloud.cfg.d files whose
// name matches glob when glob is not "".
func configFiles(fsys fs.FS, glob string) []string {
	var files []string
	if glob == "" {
		glob = "*.cfg"
	}
	files = append(files, PathCloudCfg)
	if ents, err := fs.ReadDir(fsys, PathCloudCfgD); err == nil {
		var names []string
		for _, e := range ents {
			if ok, _ := path.Match(glob, e.Name()); ok {
				names = append(names, e.Name())
			}
		}
		slices.Sort(names)
		for _, n := range names {
			files = append(files, PathCloudCfgD+"/"+n)
		}
	}
	return files
}

// checkConfig is check_config over files: the last match across them and
// the file it came from.
func checkConfig(fsys fs.FS, key string, files []string) (val, file string, ok bool) {
	for _, name := range files {
		if !isRegular(fsys, name) {
			continue
		}
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			continue
		}
		if v, found := ConfigLine(string(b), key); found {
			val, file, ok = v, name, true
		}
	}
	return val, file, ok
}

// DIConfig is what /etc/cloud/ds-identify.cfg says.
type DIConfig struct {
	Datasource string // datasource:
	Policy     string // policy:
}

// ParseDIConfig reads ds-identify.cfg as _read_config does: each line cut
// at '#'; lines without ':' skipped; key and value trimmed and the value
// unquoted; the last `datasource:` and `policy:` win.
func ParseDIConfig(text string) DIConfig {
	var c DIConfig
	for _, line := range strings.Split(text, "\n") {
		line, _, _ = strings.Cut(line, "#")
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		val = unquote(strings.Join(strings.Fields(val), " "))
		switch strings.Join(strings.Fields(key), " ") {
		case "datasource":
			c.Datasource = val
		case "policy":
			c.Policy = val
		}
	}
	return c
}

// diConfigValue is _read_config with a key name: the first line whose
// trimmed key is key.
func diConfigValue(text, key string) (string, bool) {
	for _, line := range strings.Split(text, "\n") {
		line, _, _ = strings.Cut(line, "#")
		k, val, ok := strings.Cut(line, ":")
		if !ok || strings.Join(strings.Fields(k), " ") != key {
			continue
		}
		return unquote(strings.Join(strings.Fields(val), " ")), true
	}
	return "", false
}

// cmdlineCCList extracts a datasource_list from `cc: … end_cc` on the
// command line the way read_datasource_list does: the text after the last
// "datasource_list", up to the next ']', after the last '['.
func cmdlineCCList(cmdline string) (string, bool) {
	i := strings.Index(cmdline, "cc:")
	if i < 0 || !strings.Contains(cmdline[i:], "datasource_list") {
		return "", false
	}
	t := cmdline[strings.LastIndex(cmdline, "datasource_list")+len("datasource_list"):]
	if j := strings.Index(t, "]"); j >= 0 {
		t = t[:j]
	}
	if j := strings.LastIndex(t, "["); j >= 0 {
		t = t[j+1:]
	}
	return t, true
}
