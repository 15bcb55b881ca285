package cm

// mcollective (cloud-init cc_mcollective, final stage, per-instance, all
// distros, activated by the `mcollective` key), as cloud-init 26.x does it:
//
//  1. the mcollective package is installed;
//  2. with mcollective.conf, /etc/mcollective/server.cfg is read (as
//     configobj reads it; a missing file is an empty one) and conf's keys
//     applied: public-cert and private-cert are written to
//     /etc/mcollective/ssl/server-{public,private}.pem (0644 and 0600) and
//     point plugin.ssl_server_{public,private} at them with
//     securityprovider = ssl; a mapping becomes a [section] (keys added or
//     replaced); any other value is set in the main section as Python's
//     str(). The old file is copied to server.cfg.old and the new one
//     written as configobj writes it (comments and order of existing keys
//     kept; new keys after them, new sections at the end);
//  3. `service mcollective restart`.
//
// conf's keys are applied in sorted order (the decoded config does not
// keep YAML's order), so new keys appear in the file sorted.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
	"github.com/cloudroot/cloudroot/pkg/modules"
	"github.com/cloudroot/cloudroot/pkg/modules/internal/configobj"
	"github.com/cloudroot/cloudroot/pkg/state"
)

// Mcollective is cc_mcollective.
var Mcollective = modules.Module{
	Name:       "mcollective",
	Frequency:  state.PerInstance,
	Keys:       []string{"mcollective"},
	ActivateBy: []string{"mcollective"},
	Run:        modules.Typed(runMcollective),
}

// mcollective's files.
const (
	McollectiveServerCfg = "/etc/mcollective/server.cfg"
	McollectivePubCert   = "/etc/mcollective/ssl/server-public.pem"
	McollectivePriCert   = "/etc/mcollective/ssl/server-private.pem"
)

// mcollectiveKeys is the module's key: whether mcollective is given and,
// when it is a mapping, whether it has conf and conf's contents (nil when
// not a mapping), passed through: every key is written to server.cfg.
type mcollectiveKeys struct {
	Present     bool `cfg:"mcollective,present"`
	Mcollective struct {
		HasConf bool           `cfg:"conf,present"`
		Conf    map[string]any `cfg:"conf,loose"`
	} `cfg:"mcollective,loose"`
}

func runMcollective(ctx context.Context, c *modules.Context, cfg mcollectiveKeys) error {
	if !cfg.Present {
		return nil
	}
	m := cfg.Mcollective
	if err := c.InstallPackages(ctx, c.Facts(), []string{"mcollective"}); err != nil {
		return err
	}
	if m.HasConf {
		if err := configureMcollective(c, m.Conf); err != nil {
			return err
		}
	}
	_, err := cmCmd{Argv: []string{"service", "mcollective", "restart"}}.run(ctx, c)
	return err
}

func configureMcollective(c *modules.Context, conf map[string]any) error {
	old, err := c.Root.ReadFile(McollectiveServerCfg)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("mcollective: %w", err)
	}
	cfg := parseConfigObj(string(old))
	keys := make([]string, 0, len(conf))
	for k := range conf {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := conf[k]
		switch {
		case k == "public-cert":
			if err := c.Root.WriteFile(McollectivePubCert, []byte(pyval.Str(v)), 0o644); err != nil {
				return fmt.Errorf("mcollective: %w", err)
			}
			cfg.main.set("plugin.ssl_server_public", McollectivePubCert)
			cfg.main.set("securityprovider", "ssl")
		case k == "private-cert":
			if err := c.Root.WriteFile(McollectivePriCert, []byte(pyval.Str(v)), 0o600); err != nil {
				return fmt.Errorf("mcollective: %w", err)
			}
			cfg.main.set("plugin.ssl_server_private", McollectivePriCert)
			cfg.main.set("securityprovider", "ssl")
		default:
			switch sm := v.(type) {
			case map[string]any:
				sec := cfg.section(k)
				sk := make([]string, 0, len(sm))
				for o := range sm {
					sk = append(sk, o)
				}
				slices.Sort(sk)
				for _, o := range sk {
					sec.set(o, pyval.Str(sm[o]))
				}
				continue
			}
			cfg.main.set(k, pyval.Str(v))
		}
	}
	if old != nil {
		if err := c.Root.WriteFile(McollectiveServerCfg+".old", old, 0o644); err != nil {
			return fmt.Errorf("mcollective: %w", err)
		}
	}
	out, err := cfg.String()
	if err != nil {
		return fmt.Errorf("mcollective: %w", err)
	}
	if err := c.Root.WriteFile(McollectiveServerCfg, []byte(out), 0o644); err != nil {
		return fmt.Errorf("mcollective: %w", err)
	}
	return nil
}

// configObj is the part of a configobj file cloud-init edits: the main
// section's entries and one level of [sections], each entry with the
// comment lines before it and its inline comment.
type configObj struct {
	initial, final []string
	main           *coSection
	sections       []*coSection
	// indent is configobj's indent_type: the first indentation seen.
	indent string
}

type coSection struct {
	name     string
	comments []string
	entries  []*coEntry
}

type coEntry struct {
	key      string
	value    string
	list     []string // a comma list when not nil
	comments []string
	inline   string
}

func (s *coSection) set(k, v string) {
	for _, e := range s.entries {
		if e.key == k {
			e.value, e.list = v, nil
			return
		}
	}
	s.entries = append(s.entries, &coEntry{key: k, value: v})
}

func (o *configObj) section(name string) *coSection {
	for _, s := range o.sections {
		if s.name == name {
			return s
		}
	}
	s := &coSection{name: name}
	o.sections = append(o.sections, s)
	return s
}

// parseConfigObj reads key = value lines, [section] markers, comments and
// blank lines; quoted values lose their quotes, unquoted ones with commas
// are lists.
func parseConfigObj(text string) *configObj {
	o := &configObj{main: &coSection{}}
	cur := o.main
	var pending []string
	seenEntry := false
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if text == "" {
		lines = nil
	}
	for _, raw := range lines {
		line := strings.TrimSpace(raw)
		if line == "" || strings.HasPrefix(line, "#") {
			pending = append(pending, line)
			continue
		}
		if ind := raw[:len(raw)-len(strings.TrimLeft(raw, " \t"))]; ind != "" && o.indent == "" {
			o.indent = ind
		}
		if !seenEntry {
			o.initial, pending = trimInitial(pending)
			seenEntry = true
		}
		if strings.HasPrefix(line, "[") {
			name := strings.Trim(line, "[] \t")
			cur = o.section(name)
			cur.comments, pending = pending, nil
			continue
		}
		k, v, _ := strings.Cut(line, "=")
		key := strings.TrimSpace(k)
		if len(key) >= 2 && (key[0] == '"' || key[0] == '\'') && key[len(key)-1] == key[0] {
			key = key[1 : len(key)-1]
		}
		e := &coEntry{key: key, comments: pending}
		pending = nil
		e.value, e.list, e.inline = parseCOValue(strings.TrimSpace(v))
		cur.entries = append(cur.entries, e)
	}
	if !seenEntry {
		o.initial = pending
	} else {
		o.final = pending
	}
	return o
}

// trimInitial splits the comments before the first entry the way
// configobj does: up to the last blank line they are the file's initial
// comment, the rest belong to the entry.
func trimInitial(c []string) ([]string, []string) {
	for i := len(c) - 1; i >= 0; i-- {
		if c[i] == "" {
			return c[:i+1], c[i+1:]
		}
	}
	return c, nil
}

func parseCOValue(v string) (string, []string, string) {
	if v != "" && (v[0] == '"' || v[0] == '\'') {
		q := v[:1]
		if end := strings.Index(v[1:], q); end >= 0 {
			rest := strings.TrimSpace(v[end+2:])
			return v[1 : end+1], nil, rest
		}
	}
	val, comment, _ := strings.Cut(v, "#")
	if comment != "" || strings.Contains(v, "#") {
		comment = "#" + comment
	}
	val = strings.TrimSpace(val)
	if strings.Contains(val, ",") {
		var list []string
		for _, it := range strings.Split(val, ",") {
			if it = strings.TrimSpace(it); it != "" {
				list = append(list, it)
			}
		}
		if list == nil {
			list = []string{}
		}
		return val, list, comment
	}
	return val, nil, comment
}

// String writes the file as configobj's write() does.
func (o *configObj) String() (string, error) {
	var out []string
	out = append(out, o.initial...)
	write := func(s *coSection, depth int) error {
		for _, e := range s.entries {
			out = append(out, e.comments...)
			k, err := configobj.Quote(e.key, false)
			if err != nil {
				return err
			}
			var v string
			if e.list != nil {
				switch len(e.list) {
				case 0:
					v = ","
				case 1:
					q, err := configobj.Quote(e.list[0], false)
					if err != nil {
						return err
					}
					v = q + ","
				default:
					var qs []string
					for _, it := range e.list {
						q, err := configobj.Quote(it, false)
						if err != nil {
							return err
						}
						qs = append(qs, q)
					}
					v = strings.Join(qs, ", ")
				}
			} else if v, err = configobj.Quote(e.value, true); err != nil {
				return err
			}
			line := strings.Repeat(o.indent, depth) + k + " = " + v
			if e.inline != "" {
				line += o.indent + e.inline
			}
			out = append(out, line)
		}
		return nil
	}
	if err := write(o.main, 0); err != nil {
		return "", err
	}
	for _, s := range o.sections {
		out = append(out, s.comments...)
		out = append(out, "["+s.name+"]")
		if err := write(s, 1); err != nil {
			return "", err
		}
	}
	out = append(out, o.final...)
	return strings.Join(out, "\n") + "\n", nil
}
