package maas

// The parsing side of OAuth headers, which only the tests need: they check
// every request the fake MAAS sees the way oauthlib's server would.

import (
	"errors"
	"fmt"
	"strings"
)

// Unescape undoes Escape (any %XX is decoded; a malformed escape is an
// error). "+" stays "+", as in oauthlib's unquote.
func Unescape(s string) (string, error) {
	if !strings.Contains(s, "%") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		if i+2 >= len(s) {
			return "", fmt.Errorf("truncated escape in %q", s)
		}
		hi, ok1 := unhex(s[i+1])
		lo, ok2 := unhex(s[i+2])
		if !ok1 || !ok2 {
			return "", fmt.Errorf("bad escape %q in %q", s[i:i+3], s)
		}
		b.WriteByte(hi<<4 | lo)
		i += 2
	}
	return b.String(), nil
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// ErrMalformedHeader is returned by ParseHeader for text that is not an
// OAuth Authorization header.
var ErrMalformedHeader = errors.New("malformed OAuth authorization header")

// ParseHeader parses an OAuth Authorization header value as oauthlib's
// parse_authorization_header does (the "OAuth " scheme, case-insensitive;
// a comma-separated list whose quoted strings may hold commas; name=value
// items with the quotes removed) and unescapes names and values. A realm
// is returned as written. Duplicate names are an error.
func ParseHeader(h string) ([]Param, error) {
	const scheme = "oauth "
	if len(h) < len(scheme) || !strings.EqualFold(h[:len(scheme)], scheme) {
		return nil, fmt.Errorf("%w: no OAuth scheme", ErrMalformedHeader)
	}
	var out []Param
	seen := map[string]bool{}
	for _, item := range splitList(h[len(scheme):]) {
		name, value, ok := strings.Cut(item, "=")
		if !ok {
			return nil, fmt.Errorf("%w: item %q has no '='", ErrMalformedHeader, item)
		}
		switch {
		case value == "":
			return nil, fmt.Errorf("%w: item %q has no value", ErrMalformedHeader, item)
		case value == `"`:
			value = ""
		case value[0] == '"' && value[len(value)-1] == '"':
			value = value[1 : len(value)-1]
		}
		n, err := Unescape(name)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrMalformedHeader, err)
		}
		if n != "realm" {
			if value, err = Unescape(value); err != nil {
				return nil, fmt.Errorf("%w: %s: %w", ErrMalformedHeader, n, err)
			}
		}
		if seen[n] {
			return nil, fmt.Errorf("%w: %s given twice", ErrMalformedHeader, n)
		}
		seen[n] = true
		out = append(out, Param{n, value})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no parameters", ErrMalformedHeader)
	}
	return out, nil
}

// splitList is urllib's parse_http_list: split at commas outside double
// quotes (a backslash escapes the next character inside quotes), trim
// each part, drop a trailing empty one.
func splitList(s string) []string {
	var out []string
	var part strings.Builder
	escape, quote := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case escape:
			part.WriteByte(c)
			escape = false
			continue
		case quote:
			if c == '\\' {
				escape = true
				continue
			}
			if c == '"' {
				quote = false
			}
			part.WriteByte(c)
			continue
		case c == ',':
			out = append(out, part.String())
			part.Reset()
			continue
		case c == '"':
			quote = true
		}
		part.WriteByte(c)
	}
	if part.Len() > 0 {
		out = append(out, part.String())
	}
	for i := range out {
		out[i] = strings.TrimSpace(out[i])
	}
	return out
}

// Lookup returns the value of the parameter name in ps.
func Lookup(ps []Param, name string) (string, bool) {
	for _, p := range ps {
		if p.Name == name {
			return p.Value, true
		}
	}
	return "", false
}
