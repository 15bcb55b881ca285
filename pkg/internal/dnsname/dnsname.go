// Package dnsname checks DNS names as the files cloudroot writes take them
// (resolv.conf search lists, network config search domains, host names):
// the one rule shared by the network config parsers, the DHCP client and
// the hostname modules.
package dnsname

import "strings"

// Valid reports whether s is a DNS domain name: dot-separated labels of 1
// to 63 letters, digits, hyphens and (unless strict) underscores, not
// starting or ending with a hyphen, at most 253 characters, an optional
// final dot. Strict is RFC 1123's host name syntax, for names that come
// from the network (DHCP).
func Valid(s string, strict bool) bool {
	s = strings.TrimSuffix(s, ".")
	if s == "" || len(s) > 253 {
		return false
	}
	for _, l := range strings.Split(s, ".") {
		if !ValidLabel(l, strict) {
			return false
		}
	}
	return true
}

// ValidLabel reports whether l is one label of a name Valid accepts.
func ValidLabel(l string, strict bool) bool {
	if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
		return false
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-':
		case c == '_' && !strict:
		default:
			return false
		}
	}
	return true
}
