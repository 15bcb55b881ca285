package cloudcfg

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cloudroot/cloudroot/pkg/yaml11"
)

// Kernel command line cloud-config (cloud-init's util.read_cc_from_cmdline):
//
//	... cc: ssh_import_id: [smoser]\nruncmd: [ [ ls, -l ] ] end_cc ...
//	... cc:ssh_import_id: %5Bsmoser%5D end_cc cc:runcmd: [ [ ls, -l ] ] end_cc
//
// A segment starts at "cc:" preceded by a space (or at the start of the
// line) and runs to the next "end_cc" or the end of the line. Each segment
// has its leading white space removed, %XX escapes decoded (a malformed
// escape stays as written, as Python's urllib.parse.unquote leaves it), then
// the two characters `\n` turned into newlines; segments are joined with
// newlines and the result is read as one YAML mapping.

const (
	ccBegin = " cc:"
	ccEnd   = "end_cc"
)

// CmdlineCCText returns the YAML text carried by cc: ... end_cc segments of
// cmdline, "" when there are none.
func CmdlineCCText(cmdline string) string {
	cmdline = " " + cmdline
	var tokens []string
	begin := strings.Index(cmdline, ccBegin)
	for begin >= 0 {
		start := begin + len(ccBegin)
		end := strings.Index(cmdline[start:], ccEnd)
		if end < 0 {
			end = len(cmdline)
		} else {
			end += start
		}
		seg := strings.TrimLeftFunc(cmdline[start:end], unicode.IsSpace)
		tokens = append(tokens, strings.ReplaceAll(unquote(seg), `\n`, "\n"))
		next := end + len(ccEnd)
		if next >= len(cmdline) {
			break
		}
		begin = strings.Index(cmdline[next:], ccBegin)
		if begin >= 0 {
			begin += next
		}
	}
	return strings.Join(tokens, "\n")
}

// ParseCmdlineCC returns the cloud-config of cmdline's cc: segments; nil
// (and no error) when there is none or it is empty YAML.
func ParseCmdlineCC(cmdline string) (map[string]any, error) {
	text := CmdlineCCText(cmdline)
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	m, _, err := yaml11.LoadMap("", []byte(text))
	if err != nil {
		return nil, fmt.Errorf("kernel command line cc: %w", err)
	}
	if len(m) == 0 {
		return nil, nil
	}
	return m, nil
}

// unquote decodes %XX escapes like Python's urllib.parse.unquote: invalid
// escapes are kept, '+' stays '+', invalid UTF-8 becomes U+FFFD.
func unquote(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			b.WriteByte(unhex(s[i+1])<<4 | unhex(s[i+2]))
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	out := b.String()
	if !utf8.ValidString(out) {
		out = strings.ToValidUTF8(out, "\uFFFD")
	}
	return out
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}
