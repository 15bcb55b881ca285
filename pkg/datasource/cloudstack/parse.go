package cloudstack

// Pure parsing: meta-data listings and leaves, and Data from the crawled
// tree and the password.

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cloudroot/cloudroot/pkg/datasource"
)

// Input is what the virtual router answered.
type Input struct {
	// Base is the metadata service's base URL that answered; URL is the
	// meta-data tree's URL under it.
	Base, URL string
	// MetaData is the crawled tree; UserData the user-data (nil: none).
	MetaData map[string]any
	UserData []byte
	// Password is the new password ("" when none).
	Password string
}

func text(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case []any:
		// A multi-line leaf: its first line.
		if len(t) > 0 {
			s, _ := t[0].(string)
			return s
		}
	}
	return ""
}

// Build turns the answers into Data as cloud-init's _get_data does; a
// password becomes configuration as cloud-init's extra_config.
func Build(in Input) (*datasource.Data, error) {
	md := in.MetaData
	if md == nil {
		md = map[string]any{}
	}
	id := text(md["instance-id"])
	if id == "" {
		return nil, errors.New("meta-data has no instance-id")
	}
	d := &datasource.Data{
		Name:             "CloudStack",
		Platform:         "cloudstack",
		CloudName:        "cloudstack",
		Subplatform:      "metadata (" + in.URL + ")",
		Mode:             "net",
		MetaData:         md,
		AvailabilityZone: text(md["availability-zone"]),
		PublicKeys:       datasource.NormalizePubKeys(md["public-keys"]),
		UserData:         in.UserData,
	}
	if h := text(md["local-hostname"]); h != "" {
		d.Hostname = h
	}
	if in.Password != "" {
		d.Config = map[string]any{
			"ssh_pwauth": true,
			"password":   in.Password,
			"chpasswd":   map[string]any{"expire": false},
		}
	}
	return d, nil
}

// Entry is one line of a meta-data directory listing.
type Entry struct {
	// Name is the key the entry gets in the crawled tree.
	Name string
	// Dir is set for "name/" lines: Name is a directory to crawl.
	Dir bool
	// Resource is the path to fetch for a leaf, relative to the listing:
	// the name itself, or "<n>/openssh-key" for a "<n>=<name>" line.
	Resource string
}

// ParseListing parses a meta-data directory listing as cloud-init's
// MetadataMaterializer does: one entry a line, directories ending in "/"
// (each kept once), "<n>=<name>" lines naming "<n>/openssh-key" under the
// key <name>, a later leaf of the same name replacing an earlier one, a
// leaf named like a directory dropped, and "security-credentials" never
// materialised (nor a key-less "<n>=" line). Directories come first, then leaves, each in listing
// order.
func ParseListing(b []byte) []Entry {
	var dirs, leaves []Entry
	isDir := map[string]bool{}
	leafAt := map[string]int{}
	for _, line := range splitLines(string(b)) {
		line = strings.TrimSpace(line)
		name := strings.TrimRight(line, "/")
		if line == "" || name == "" || name == "security-credentials" {
			continue
		}
		if strings.HasSuffix(line, "/") {
			if !isDir[name] {
				isDir[name] = true
				dirs = append(dirs, Entry{Name: name, Dir: true})
			}
			continue
		}
		e := Entry{Name: name, Resource: name}
		if id, sub, ok := strings.Cut(line, "="); ok {
			if n, err := strconv.Atoi(strings.TrimSpace(id)); err == nil {
				e = Entry{Name: sub, Resource: strconv.Itoa(n) + "/openssh-key"}
			}
		}
		if e.Name == "" || e.Name == "security-credentials" {
			continue
		}
		if i, ok := leafAt[e.Name]; ok {
			leaves[i] = e
			continue
		}
		leafAt[e.Name] = len(leaves)
		leaves = append(leaves, e)
	}
	out := dirs
	for _, l := range leaves {
		if !isDir[l.Name] {
			out = append(out, l)
		}
	}
	return out
}

// DecodeLeaf is cloud-init's MetadataLeafDecoder: empty → "", text that
// looks like a JSON object and parses → the object, text with a newline →
// its lines, other text → itself. Bytes that are not UTF-8 (kept as bytes
// by cloud-init) become base64 text.
func DecodeLeaf(b []byte) any {
	if len(b) == 0 {
		return ""
	}
	if !utf8.Valid(b) {
		return base64.StdEncoding.EncodeToString(b)
	}
	s := string(b)
	if t := strings.TrimSpace(s); strings.HasPrefix(t, "{") && strings.HasSuffix(t, "}") {
		var m map[string]any
		if err := json.Unmarshal([]byte(t), &m); err == nil && m != nil {
			return m
		}
	}
	if strings.Contains(s, "\n") {
		lines := splitLines(s)
		out := make([]any, len(lines))
		for i, l := range lines {
			out[i] = l
		}
		return out
	}
	return s
}

// splitLines is Python's str.splitlines for the line ends metadata
// services write (\n, \r\n, \r): no empty last element.
func splitLines(s string) []string {
	s = strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}
