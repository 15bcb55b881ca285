package netup

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/cloudroot/cloudroot/pkg/internal/dnsname"
)

// sanitize drops the names a DHCP server sent that are not valid: the
// search lists (option 119, DHCPv6 option 24), the domain name (15) and
// the host name (12) must be RFC 1123 names (letters, digits and hyphens
// in labels of at most 63, at most 253 in all); the NIS domain, root path
// and boot file name (40, 17, 67) must hold no control character. These
// values come from the network, untrusted: they reach the initramfs's
// resolv.conf, the klibc state files the INITRAMFS network source reads,
// and from there the rendered network config of the target. Each refused
// value is named in l.Dropped.
func (l *Lease) sanitize() {
	drop := func(what, v string) {
		why := "is not a valid name"
		if strings.Contains(what, "option 17") || strings.Contains(what, "option 40") || strings.Contains(what, "option 67") {
			why = "holds a control character"
		}
		src := "DHCP "
		if l.Proto == ProtoStatic {
			src = ""
		}
		l.Dropped = append(l.Dropped, fmt.Sprintf("%s%s %q %s; dropped", src, what, v, why))
	}
	l.Search = l.validNames("search domain (option 119)", l.Search, drop)
	l.Search6 = l.validNames("search domain (DHCPv6 option 24)", l.Search6, drop)
	if l.Domain != "" && !dnsname.Valid(l.Domain, true) {
		drop("domain name (option 15)", l.Domain)
		l.Domain = ""
	}
	if l.Hostname != "" && !dnsname.Valid(l.Hostname, true) {
		what := "host name (option 12)"
		if l.Proto == ProtoStatic {
			what = "host name (ip= field 5)"
		}
		drop(what, l.Hostname)
		l.Hostname = ""
	}
	for _, f := range []struct {
		what string
		v    *string
	}{{"NIS domain (option 40)", &l.NISDomain}, {"root path (option 17)", &l.RootPath}, {"boot file name (option 67)", &l.BootFile}} {
		if strings.ContainsFunc(*f.v, unicode.IsControl) {
			drop(f.what, *f.v)
			*f.v = ""
		}
	}
}

func (l *Lease) validNames(what string, names []string, drop func(string, string)) []string {
	var out []string
	for _, n := range names {
		if dnsname.Valid(n, true) {
			out = append(out, n)
			continue
		}
		drop(what, n)
	}
	return out
}
