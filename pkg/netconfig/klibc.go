package netconfig

// klibc ipconfig state files (/run/net-<iface>.conf, /run/net6-<iface>.conf),
// the INITRAMFS network source, converted to network config v1 as
// cloud-init's cmdline.py (_klibc_to_config_entry,
// config_from_klibc_net_cfg) does:
//   - the files are shell assignments, split the way Python's
//     shlex.split(comments=True) does; empty values count as absent;
//   - DEVICE (else DEVICE6) names a physical interface, given the MAC the
//     machine reports for that name when there is one;
//   - PROTO (else IPV6PROTO; else dhcp when `filename` is set, else none)
//     must be none, static, off, dhcp or dhcp6; none/static/off mean static;
//   - for each of IPV4 and IPV6 whose ADDR is set, one subnet with
//     control: manual, of type <pre>PROTO (default PROTO); static subnets
//     get the address; NETMASK, BROADCAST and GATEWAY go on the subnet
//     whatever the type; DNS0/DNS1 that are not all zeros become
//     dns_nameservers and then DOMAINSEARCH (comma- or space-separated)
//     dns_search; DOMAINSEARCH comes from DHCP (option 119), so only RFC
//     1123 names are kept, others dropped with a warning (cloud-init keeps
//     them all);
//   - files naming the same device add their subnets to the first entry.
// One extension: a static IPv4 subnet without IPV4GATEWAY takes the gateway
// of its IPV4ROUTE<n> default route (klibc writes classless routes instead
// of IPV4GATEWAY, so without this a static initramfs configuration would
// lose its default route). HOSTNAME, DNSDOMAIN and the other keys are not
// network configuration and are ignored, as in cloud-init.

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Paths of the INITRAMFS source, relative to the run root's /.
const (
	// KlibcStateGlob and Klibc6StateGlob match klibc ipconfig's state
	// files, read in this order (each sorted).
	KlibcStateGlob  = "/run/net-*.conf"
	Klibc6StateGlob = "/run/net6-*.conf"
	// OpenISCSIInterfaceFile, when present, makes the klibc files apply
	// without ip= (iBFT configured the network).
	OpenISCSIInterfaceFile = "/run/initramfs/open-iscsi.interface"
)

// ErrShellSyntax: a state file is not the shell syntax klibc writes.
var ErrShellSyntax = errors.New("invalid shell syntax")

// KlibcFile is one state file: its path (for messages) and content.
type KlibcFile struct {
	Path string
	Data []byte
}

// KlibcApplicable is cloud-init's KlibcNetworkConfigSource.is_applicable
// once state files exist: ip= or ip6= on the kernel command line, or the
// open-iscsi interface file present.
func KlibcApplicable(cmdline string, openISCSI bool) bool {
	if openISCSI {
		return true
	}
	words, err := shellWords(cmdline)
	if err != nil {
		words = strings.Fields(cmdline)
	}
	for _, w := range words {
		if strings.HasPrefix(w, "ip=") || strings.HasPrefix(w, "ip6=") {
			return true
		}
	}
	return false
}

// ParseKlibcVars reads the shell assignments of one state file into a map;
// keys with empty values are left out, as cloud-init's load_shell_content
// does. Words without "=" are skipped with a warning.
func ParseKlibcVars(data []byte) (map[string]string, []string, error) {
	words, err := shellWords(string(data))
	if err != nil {
		return nil, nil, err
	}
	vars := map[string]string{}
	var warnings []string
	for _, w := range words {
		k, v, ok := strings.Cut(w, "=")
		if !ok {
			warnings = append(warnings, fmt.Sprintf("%q is not an assignment; skipped", w))
			continue
		}
		if v != "" {
			vars[k] = v
		}
	}
	return vars, warnings, nil
}

// KlibcDocument converts state files to a network config v1 document
// (YAML), with what it skipped (each naming its file). macs maps interface
// names to their MAC addresses.
func KlibcDocument(files []KlibcFile, macs map[string]string) ([]byte, []string, error) {
	doc, warnings, err := klibcDoc(files, macs)
	if err != nil {
		return nil, warnings, err
	}
	return []byte(dumpYAML(doc)), warnings, nil
}

// ParseKlibc converts state files to a Config (version 1). macs maps
// interface names to their MAC addresses.
func ParseKlibc(files []KlibcFile, macs map[string]string) (*Config, error) {
	doc, warnings, err := klibcDoc(files, macs)
	if err != nil {
		return nil, err
	}
	return finishConverted(doc, nil, warnings)
}

func klibcDoc(files []KlibcFile, macs map[string]string) (*omap, []string, error) {
	var warnings []string
	var entries []any
	byName := map[string]*omap{}
	for _, f := range files {
		name, entry, ws, err := klibcEntry(f.Data, macs)
		for _, w := range ws {
			warnings = append(warnings, f.Path+": "+w)
		}
		if err != nil {
			return nil, warnings, fmt.Errorf("klibc state %s: %w", f.Path, err)
		}
		prev, ok := byName[name]
		if !ok {
			byName[name] = entry
			entries = append(entries, entry)
			continue
		}
		subnets, _ := mustGet(prev, "subnets").([]any)
		more, _ := mustGet(entry, "subnets").([]any)
		prev.set("subnets", append(subnets, more...))
	}
	if len(entries) == 0 {
		return nil, warnings, fmt.Errorf("no klibc state files: %w", ErrNoConfig)
	}
	return omapOf("config", entries, "version", 1), warnings, nil
}

func klibcEntry(data []byte, macs map[string]string) (string, *omap, []string, error) {
	vars, warnings, err := ParseKlibcVars(data)
	if err != nil {
		return "", nil, warnings, err
	}
	name, ok := vars["DEVICE"]
	if !ok {
		name, ok = vars["DEVICE6"]
	}
	if !ok {
		return "", nil, warnings, errors.New("no DEVICE or DEVICE6 entry")
	}
	proto, ok := vars["PROTO"]
	if !ok {
		proto = vars["IPV6PROTO"]
	}
	if proto == "" {
		proto = "none"
		if vars["filename"] != "" {
			proto = "dhcp"
		}
	}
	if proto == "static" || proto == "off" {
		proto = "none"
	}
	if proto != "none" && proto != "dhcp" && proto != "dhcp6" {
		return "", nil, warnings, fmt.Errorf("unexpected PROTO %q", proto)
	}
	var subnets []any
	for _, pre := range []string{"IPV4", "IPV6"} {
		addr, ok := vars[pre+"ADDR"]
		if !ok {
			continue
		}
		cur, ok := vars[pre+"PROTO"]
		if !ok {
			cur = proto
		}
		if cur == "none" {
			cur = "static"
		}
		s := omapOf("type", cur, "control", "manual")
		if cur == "static" {
			s.set("address", addr)
		}
		for _, k := range []string{"NETMASK", "BROADCAST", "GATEWAY"} {
			if v, ok := vars[pre+k]; ok {
				s.set(strings.ToLower(k), v)
			}
		}
		if pre == "IPV4" && cur == "static" && !s.has("gateway") {
			if gw := klibcDefaultRoute(vars); gw != "" {
				s.set("gateway", gw)
			}
		}
		var dns []any
		for _, k := range []string{"DNS0", "DNS1"} {
			if ns := vars[pre+k]; strings.Trim(ns, ":.0") != "" {
				dns = append(dns, ns)
			}
		}
		if len(dns) > 0 {
			s.set("dns_nameservers", dns)
			if search := vars["DOMAINSEARCH"]; search != "" {
				var parts []string
				if strings.Contains(search, ",") {
					parts = strings.Split(search, ",")
				} else {
					parts = strings.Fields(search)
				}
				// DHCP option 119, from the network: RFC 1123 names only.
				var list []any
				for _, p := range parts {
					if p = strings.TrimSpace(p); ValidDomain(p, true) {
						list = append(list, p)
					} else if p != "" {
						warnings = append(warnings, fmt.Sprintf("DOMAINSEARCH %q is not a valid domain name; dropped", p))
					}
				}
				if len(list) > 0 {
					s.set("dns_search", list)
				}
			}
		}
		subnets = append(subnets, s)
	}
	entry := omapOf("type", "physical", "name", name, "subnets", subnets)
	if subnets == nil {
		entry.set("subnets", []any{})
	}
	if mac, ok := macs[name]; ok && mac != "" {
		entry.set("mac_address", mac)
	}
	return name, entry, warnings, nil
}

// klibcDefaultRoute returns the gateway of the first IPV4ROUTE<n> whose
// subnet is 0.0.0.0/0, or "".
func klibcDefaultRoute(vars map[string]string) string {
	var keys []string
	for k := range vars {
		if strings.HasPrefix(k, "IPV4ROUTE") && strings.HasSuffix(k, "SUBNET") {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return naturalLess(keys[i], keys[j]) })
	for _, k := range keys {
		if vars[k] != "0.0.0.0/0" {
			continue
		}
		gw := vars[strings.TrimSuffix(k, "SUBNET")+"GATEWAY"]
		if gw != "" && gw != "0.0.0.0" {
			return gw
		}
	}
	return ""
}

// shellWords splits s like Python's shlex.split(s, comments=True): words
// separated by blanks, single quotes literal, double quotes with \" and \\
// escapes, backslash escapes outside quotes, # outside quotes starting a
// comment to the end of the line.
func shellWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '#':
			for i < len(s) && s[i] != '\n' {
				i++
			}
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\\':
			inWord = true
			if i+1 >= len(s) {
				return nil, fmt.Errorf("no escaped character: %w", ErrShellSyntax)
			}
			i++
			cur.WriteByte(s[i])
		case c == '\'':
			inWord = true
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("no closing quotation: %w", ErrShellSyntax)
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
		case c == '"':
			inWord = true
			closed := false
			for i++; i < len(s); i++ {
				if s[i] == '"' {
					closed = true
					break
				}
				if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\') {
					i++
				}
				cur.WriteByte(s[i])
			}
			if !closed {
				return nil, fmt.Errorf("no closing quotation: %w", ErrShellSyntax)
			}
		default:
			inWord = true
			cur.WriteByte(c)
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
