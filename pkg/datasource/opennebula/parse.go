package opennebula

// Pure parsing: context.sh read without a shell, and the Data built from
// its variables.

import (
	"encoding/base64"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/datasource"
)

// DefaultInstanceID is cloud-init's instance-id for a context without
// VMID (DEFAULT_IID).
const DefaultInstanceID = "iid-dsopennebula"

// ParseContext reads context.sh as OpenNebula writes it, without running a
// shell: assignments NAME=value, one or more a line (optionally after
// `export`), with values made of single-quoted parts (`'\”` embeds a
// quote, newlines are kept), double-quoted parts (backslash escapes \" \\
// \$ \` and line continuations), and bare characters (backslash escapes
// the next one). Comments (#) and blank lines are skipped; a later
// assignment replaces an earlier one. Anything that needs a shell
// (expansions, command substitution, commands, redirections) is an error
// naming the line.
func ParseContext(b []byte) (map[string]string, error) {
	p := &ctxParser{s: string(b), line: 1}
	out := map[string]string{}
	for {
		p.skipBlank()
		if p.eof() {
			return out, nil
		}
		c := p.s[p.i]
		if c == '#' {
			for !p.eof() && p.s[p.i] != '\n' {
				p.i++
			}
			continue
		}
		if c == ';' {
			p.i++
			continue
		}
		// One simple command: assignments only.
		start := p.line
		name := p.name()
		if name == "export" && (p.eof() || strings.IndexByte(" \t\r\n;", p.s[p.i]) >= 0) {
			p.skipSpace()
			if p.eof() || p.s[p.i] == '\n' || p.s[p.i] == ';' || p.s[p.i] == '#' {
				continue
			}
			name = p.name()
		}
		if name == "" || p.eof() || p.s[p.i] != '=' {
			return nil, fmt.Errorf("context.sh line %d: not a variable assignment (only NAME='value' lines are read without a shell)", start)
		}
		p.i++
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		out[name] = v
		p.skipSpace()
		if !p.eof() && p.s[p.i] != '\n' && p.s[p.i] != ';' && p.s[p.i] != '#' {
			// Another assignment on the same line is fine; a command is not.
			save, saveLine := p.i, p.line
			n := p.name()
			if n == "" || p.eof() || p.s[p.i] != '=' {
				return nil, fmt.Errorf("context.sh line %d: a command after an assignment needs a shell", p.line)
			}
			p.i, p.line = save, saveLine
		}
	}
}

type ctxParser struct {
	s    string
	i    int
	line int
}

func (p *ctxParser) eof() bool { return p.i >= len(p.s) }

func (p *ctxParser) skipSpace() {
	for !p.eof() && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\r') {
		p.i++
	}
}

func (p *ctxParser) skipBlank() {
	for !p.eof() {
		switch p.s[p.i] {
		case '\n':
			p.line++
		case ' ', '\t', '\r':
		default:
			return
		}
		p.i++
	}
}

// name reads a shell variable name ([A-Za-z_][A-Za-z0-9_]*), or "".
func (p *ctxParser) name() string {
	j := p.i
	for j < len(p.s) {
		c := p.s[j]
		if c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || j > p.i && c >= '0' && c <= '9' {
			j++
			continue
		}
		break
	}
	n := p.s[p.i:j]
	p.i = j
	return n
}

func (p *ctxParser) value() (string, error) {
	var b strings.Builder
	for !p.eof() {
		c := p.s[p.i]
		switch c {
		case ' ', '\t', '\r', '\n', ';':
			return b.String(), nil
		case '\'':
			start := p.line
			j := strings.IndexByte(p.s[p.i+1:], '\'')
			if j < 0 {
				return "", fmt.Errorf("context.sh line %d: unterminated single quote", start)
			}
			part := p.s[p.i+1 : p.i+1+j]
			p.line += strings.Count(part, "\n")
			b.WriteString(part)
			p.i += j + 2
		case '"':
			start := p.line
			p.i++
			for {
				if p.eof() {
					return "", fmt.Errorf("context.sh line %d: unterminated double quote", start)
				}
				c := p.s[p.i]
				if c == '"' {
					p.i++
					break
				}
				switch c {
				case '\\':
					if p.i+1 < len(p.s) {
						switch n := p.s[p.i+1]; n {
						case '$', '`', '"', '\\':
							b.WriteByte(n)
							p.i += 2
							continue
						case '\n':
							p.line++
							p.i += 2
							continue
						}
					}
					b.WriteByte(c)
				case '$', '`':
					if c == '$' && (p.i+1 >= len(p.s) || p.s[p.i+1] == '"') {
						b.WriteByte(c)
						break
					}
					return "", fmt.Errorf("context.sh line %d: %q expansion needs a shell", p.line, c)
				case '\n':
					p.line++
					b.WriteByte(c)
				default:
					b.WriteByte(c)
				}
				p.i++
			}
		case '\\':
			if p.i+1 >= len(p.s) {
				return "", fmt.Errorf("context.sh line %d: backslash at end of file", p.line)
			}
			if n := p.s[p.i+1]; n == '\n' {
				p.line++
			} else {
				b.WriteByte(n)
			}
			p.i += 2
		case '$', '`', '(', ')', '|', '&', '<', '>':
			if c == '$' && (p.i+1 >= len(p.s) || strings.IndexByte(" \t\r\n;", p.s[p.i+1]) >= 0) {
				b.WriteByte(c)
				p.i++
				continue
			}
			return "", fmt.Errorf("context.sh line %d: %q needs a shell", p.line, c)
		default:
			b.WriteByte(c)
			p.i++
		}
	}
	return b.String(), nil
}

var ethIP = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^ETH\d+_IP`) })

// Parse builds Data from a parsed context found at source (a device path
// or the seed directory) and read at subplatform; dsmode is the
// configured datasource dsmode ("" for none). A context whose DSMODE is
// disabled is ErrNotFound, as in cloud-init.
func Parse(ctx map[string]string, source, subplatform, dsmode string) (*datasource.Data, error) {
	md := map[string]any{}
	for k, v := range ctx {
		md[k] = v
	}
	// SSH_KEY wins over SSH_PUBLIC_KEY; comment and empty lines are dropped.
	for _, k := range []string{"SSH_KEY", "SSH_PUBLIC_KEY"} {
		if v, ok := ctx[k]; ok {
			keys := []any{}
			for _, l := range strings.Split(strings.ReplaceAll(v, "\r\n", "\n"), "\n") {
				if l != "" && !strings.HasPrefix(l, "#") {
					keys = append(keys, l)
				}
			}
			md["public-keys"] = keys
			break
		}
	}
	for _, k := range []string{"SET_HOSTNAME", "HOSTNAME", "PUBLIC_IP", "IP_PUBLIC", "ETH0_IP"} {
		if v, ok := ctx[k]; ok {
			md["local-hostname"] = v
			break
		}
	}
	// cloud-init's instance-id is the constant DEFAULT_IID (a shell
	// variable cannot be called instance-id); the VM's ID is better.
	md["instance-id"] = DefaultInstanceID
	if v := strings.TrimSpace(ctx["VMID"]); v != "" {
		md["instance-id"] = v
	}

	d := &datasource.Data{Name: "OpenNebula", Platform: "opennebula", CloudName: "opennebula",
		Subplatform: subplatform, MetaData: md}
	ud, haveUD := ctx["USER_DATA"]
	if !haveUD {
		ud, haveUD = ctx["USERDATA"]
	}
	if haveUD {
		enc, ok := ctx["USERDATA_ENCODING"]
		if !ok {
			enc = ctx["USER_DATA_ENCODING"]
		}
		if enc == "base64" {
			b, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(ud), ""))
			if err != nil {
				return nil, fmt.Errorf("%s: context.sh: USER_DATA is not base64: %w", source, err)
			}
			d.UserData = b
		} else {
			d.UserData = []byte(ud)
		}
	}
	if pk, ok := md["public-keys"].([]any); ok {
		d.PublicKeys = datasource.NormalizePubKeys(pk)
	}

	mode := "net"
	for _, m := range []string{ctx["DSMODE"], dsmode} {
		if m != "" {
			mode = m
			break
		}
	}
	switch mode {
	case "local", "net":
	case "disabled":
		return nil, fmt.Errorf("%s: dsmode is disabled: %w", source, datasource.ErrNotFound)
	default:
		return nil, fmt.Errorf("%s: context.sh: DSMODE %q is not local, net or disabled", source, mode)
	}
	d.Mode = mode

	// As cloud-init: a network configuration when any ETH<n>_IP* is set.
	for k := range ctx {
		if ethIP().MatchString(k) {
			d.NetworkConfig = NetworkConfig(ctx)
			break
		}
	}
	return d, nil
}

// Candidates are the devices that may hold a context disk, in cloud-init's
// order: labelled CONTEXT, then CDROM, then any other ISO9660 volume.
func Candidates(devs []bootenv.Device) []bootenv.Device {
	var out []bootenv.Device
	seen := map[string]bool{}
	add := func(ok func(bootenv.Device) bool) {
		var batch []bootenv.Device
		for _, d := range devs {
			if !seen[d.Path] && ok(d) {
				seen[d.Path] = true
				batch = append(batch, d)
			}
		}
		sort.SliceStable(batch, func(i, j int) bool { return batch[i].Path < batch[j].Path })
		out = append(out, batch...)
	}
	for _, l := range Labels() {
		add(func(d bootenv.Device) bool { return d.FS.Label == l })
	}
	add(func(d bootenv.Device) bool { return d.FS.Type == "iso9660" })
	return out
}

// Labels are the filesystem labels of a context disk.
func Labels() []string { return []string{"CONTEXT", "CDROM"} }
