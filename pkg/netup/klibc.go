package netup

import (
	"bytes"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// KlibcStatePath returns the path klibc ipconfig uses for iface under dir
// (normally DefaultKlibcDir): <dir>/net-<iface>.conf.
func KlibcStatePath(dir, iface string) string {
	return filepath.Join(dir, "net-"+iface+".conf")
}

// KlibcState6Path returns the path of the IPv6 state file for iface under
// dir: <dir>/net6-<iface>.conf.
func KlibcState6Path(dir, iface string) string {
	return filepath.Join(dir, "net6-"+iface+".conf")
}

// klibcQuote writes k='v' the way klibc does, ' and ! escaped.
func klibcQuote(b *bytes.Buffer, k, v string) {
	b.WriteString(k)
	b.WriteString("='")
	for _, r := range []byte(v) {
		if r == '\'' || r == '!' {
			b.WriteString(`'\`)
			b.WriteByte(r)
			b.WriteByte('\'')
			continue
		}
		b.WriteByte(r)
	}
	b.WriteString("'\n")
}

// FormatKlibc renders l the way klibc ipconfig's dump_device_config writes
// /run/net-<iface>.conf: shell assignments in a fixed order, every value in
// single quotes with ' and ! escaped as '\” and '\!', unset addresses as
// 0.0.0.0. With classless static routes, IPV4ROUTE<n>SUBNET/GATEWAY pairs
// replace IPV4GATEWAY, as in klibc. cloud-init reads these files as its
// INITRAMFS network source (cloudinit/net/cmdline.py).
func FormatKlibc(l *Lease) []byte {
	var b bytes.Buffer
	opt := func(k, v string) { klibcQuote(&b, k, v) }
	ip := func(a netip.Addr) string {
		if !a.IsValid() || !a.Is4() {
			return "0.0.0.0"
		}
		return a.String()
	}
	proto := l.Proto
	if proto == "" {
		proto = ProtoDHCP
	}
	bcast := l.Broadcast
	if !bcast.IsValid() {
		bcast = broadcastOf(l.Addr)
	}
	opt("DEVICE", l.Iface)
	opt("PROTO", proto)
	opt("IPV4ADDR", ip(l.Addr.Addr()))
	opt("IPV4BROADCAST", ip(bcast))
	opt("IPV4NETMASK", ip(l.Netmask()))
	if len(l.Routes) > 0 {
		for i, r := range l.Routes {
			opt(fmt.Sprintf("IPV4ROUTE%dSUBNET", i), fmt.Sprintf("%s/%d", ip(r.Dst.Addr()), r.Dst.Bits()))
			opt(fmt.Sprintf("IPV4ROUTE%dGATEWAY", i), ip(r.Gateway))
		}
	} else {
		opt("IPV4GATEWAY", ip(l.Router))
	}
	var dns [2]netip.Addr
	copy(dns[:], l.DNS)
	opt("IPV4DNS0", ip(dns[0]))
	opt("IPV4DNS1", ip(dns[1]))
	opt("HOSTNAME", l.Hostname)
	opt("DNSDOMAIN", l.Domain)
	opt("NISDOMAIN", l.NISDomain)
	opt("ROOTSERVER", ip(l.NextServer))
	opt("ROOTPATH", l.RootPath)
	opt("filename", l.BootFile)
	opt("UPTIME", strconv.FormatInt(int64(l.Uptime.Seconds()), 10))
	opt("DHCPLEASETIME", strconv.FormatUint(uint64(max(l.LeaseTime.Seconds(), 0)), 10))
	opt("DOMAINSEARCH", strings.Join(l.Search, " "))
	return b.Bytes()
}

// FormatKlibc6 renders the DHCPv6 part of l as /run/net6-<iface>.conf, with
// the variables Ubuntu's initramfs DHCPv6 hook writes and cloud-init's
// cmdline.py reads (DEVICE6, IPV6PROTO, IPV6ADDR, IPV6NETMASK, IPV6DNS0,
// IPV6DOMAINSEARCH), quoted as FormatKlibc quotes. IPV6NETMASK is a prefix
// length (128 for an IA_NA address). Only the first DNS server fits.
func FormatKlibc6(l *Lease) []byte {
	var b bytes.Buffer
	opt := func(k, v string) { klibcQuote(&b, k, v) }
	addr := ""
	mask := ""
	if l.Addr6.IsValid() {
		addr = l.Addr6.Addr().String()
		mask = strconv.Itoa(l.Addr6.Bits())
	}
	dns := ""
	if len(l.DNS6) > 0 {
		dns = l.DNS6[0].String()
	}
	opt("DEVICE6", l.Iface)
	opt("IPV6PROTO", ProtoDHCP6)
	opt("IPV6ADDR", addr)
	opt("IPV6NETMASK", mask)
	opt("IPV6DNS0", dns)
	opt("IPV6DOMAINSEARCH", strings.Join(l.Search6, " "))
	return b.Bytes()
}

// WriteKlibcState writes the state files of l atomically under dir
// (normally DefaultKlibcDir): FormatKlibc(l) to net-<iface>.conf unless the
// lease is DHCPv6-only, and FormatKlibc6(l) to net6-<iface>.conf when it
// has a DHCPv6 address. It returns the path of the first file written
// (net-<iface>.conf whenever that one is written).
func (l *Lease) WriteKlibcState(dir string) (string, error) {
	if l.Iface == "" || strings.ContainsAny(l.Iface, "/\x00") {
		return "", fmt.Errorf("writing klibc state: invalid interface name %q", l.Iface)
	}
	var first string
	if l.Addr.IsValid() || !l.Addr6.IsValid() {
		p := KlibcStatePath(dir, l.Iface)
		if err := writeFileAtomic(p, FormatKlibc(l), 0o644); err != nil {
			return "", fmt.Errorf("writing klibc state for %s: %w", l.Iface, err)
		}
		first = p
	}
	if l.Addr6.IsValid() {
		p := KlibcState6Path(dir, l.Iface)
		if err := writeFileAtomic(p, FormatKlibc6(l), 0o644); err != nil {
			return first, fmt.Errorf("writing klibc IPv6 state for %s: %w", l.Iface, err)
		}
		if first == "" {
			first = p
		}
	}
	return first, nil
}

func writeFileAtomic(path string, data []byte, perm os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}
