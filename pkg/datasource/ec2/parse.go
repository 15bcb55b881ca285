package ec2

// Pure parsing: meta-data listings and leaves (cloud-init's
// MetadataMaterializer and MetadataLeafDecoder), the platform from DMI, and
// Data from a crawl.

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/identify"
)

// Entry is one line of a meta-data directory listing.
type Entry struct {
	// Name is the key the entry gets in the crawled tree.
	Name string
	// Dir is set for "name/" lines: Name is a directory to crawl.
	Dir bool
	// Resource is the path to fetch, relative to the listing, for leaves:
	// the name itself, or "<n>/openssh-key" for public-keys' "<n>=<name>"
	// lines.
	Resource string
}

// ParseListing parses a meta-data directory listing as cloud-init's
// MetadataMaterializer does: one entry a line (\n, \r\n or \r), spaces
// around it ignored, directories ending in "/" (each kept once),
// "<n>=<name>" lines (public-keys/) naming "<n>/openssh-key" under the key
// <name>, a later leaf of the same name replacing an earlier one in its
// place, a leaf named like a directory dropped (directories win), and
// "security-credentials" never materialised (nor a key-less "<n>=" line).
// Directories come first, then leaves, each in listing order.
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
// (spaces around it ignored) looks like a JSON object and parses → the
// object, text with a newline → its lines, other text → itself. Bytes that
// are not UTF-8 (kept as bytes by cloud-init) become base64 text.
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
		if err := json.Unmarshal([]byte(t), &m); err == nil {
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
// services write (\n, \r\n, \r): nothing for "", no element after a
// last line end ("\n" is one empty line).
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	s = strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// MaybeBase64 is cloud-init's maybe_b64decode for user-data: strictly
// valid base64 is decoded, anything else is kept.
func MaybeBase64(b []byte) []byte {
	// Python's b64decode(validate=True) rejects newlines, which Go's
	// decoder skips: reject them first.
	if len(b) == 0 || bytes.ContainsAny(b, "\r\n") {
		return b
	}
	out, err := base64.StdEncoding.Strict().DecodeString(string(b))
	if err != nil {
		return b
	}
	return out
}

// Cloud names, from the platform's DMI (cloud-init's identify_platform).
const (
	CloudAWS = "aws"
	// CloudOutscale is the other cloud Ec2Local runs in init-local for.
	CloudOutscale = "outscale"
	CloudUnknown  = "unknown"
)

// Platform is cloud-init's identify_platform: the EC2-like cloud DMI names
// ("aws", "brightbox", "zstack", "e24cloud", "outscale"), else "unknown".
// AWS is recognised by its product_uuid (either byte order); the
// /sys/hypervisor/uuid check of old Xen instances is the caller's to fold
// into DMI.
func Platform(d bootenv.DMI) string {
	switch {
	case strings.HasSuffix(d.ProductSerial, ".brightbox.com"):
		return "brightbox"
	case strings.HasSuffix(d.ChassisAssetTag, ".zstack.io"):
		return "zstack"
	case d.SysVendor == "e24cloud":
		return "e24cloud"
	case d.ProductName == "3DS Outscale VM" && d.SysVendor == "3DS Outscale":
		return "outscale"
	case identify.IsAWSUUID(d.ProductUUID):
		return CloudAWS
	}
	return CloudUnknown
}

// Input is one crawl of an EC2 metadata service.
type Input struct {
	// Base is the service's base URL; APIVersion the version crawled.
	Base, APIVersion string
	// CloudName is Platform's answer.
	CloudName string
	// MetaData is the <ver>/meta-data/ tree.
	MetaData map[string]any
	// UserData is <ver>/user-data as served (nil: none).
	UserData []byte
	// Identity is the <ver>/dynamic/instance-identity/ tree (AWS only).
	Identity map[string]any
}

// Build turns a crawl into Data.
func Build(in Input) *datasource.Data {
	md := in.MetaData
	if md == nil {
		md = map[string]any{}
	}
	d := &datasource.Data{
		Name:        "Ec2",
		Platform:    "ec2",
		CloudName:   in.CloudName,
		Subplatform: "metadata (" + in.Base + ")",
		Mode:        "net",
		MetaData:    md,
		PublicKeys:  datasource.NormalizePubKeys(md["public-keys"]),
		DS:          map[string]any{"_metadata_api_version": in.APIVersion},
		// Ec2Local answers only on AWS and Outscale; elsewhere cloud-init's
		// network stage finds DataSourceEc2.
		NetworkStage: in.CloudName != CloudAWS && in.CloudName != CloudOutscale,
	}
	if in.UserData != nil {
		d.UserData = MaybeBase64(in.UserData)
	}
	var doc map[string]any
	if in.Identity != nil {
		d.DS["dynamic"] = map[string]any{"instance-identity": in.Identity}
		doc, _ = in.Identity["document"].(map[string]any)
	}
	placementAZ := ""
	if p, ok := md["placement"].(map[string]any); ok {
		placementAZ, _ = p["availability-zone"].(string)
	}
	d.AvailabilityZone = placementAZ
	if in.CloudName == CloudAWS {
		if az, ok := doc["availabilityZone"].(string); ok && az != "" {
			d.AvailabilityZone = az
		}
		if r, ok := doc["region"].(string); ok && r != "" {
			d.Region = r
		}
	}
	// cloud-init's region: on AWS the identity document's, else (and on
	// every EC2-compatible platform) the zone minus its last character,
	// whatever the zone looks like ("nova" gives "nov").
	if d.Region == "" && d.AvailabilityZone != "" {
		d.Region = d.AvailabilityZone[:len(d.AvailabilityZone)-1]
	}
	if n, ok := md["network"].(map[string]any); ok {
		if i, ok := n["interfaces"].(map[string]any); ok {
			if macs, ok := i["macs"].(map[string]any); ok {
				d.NetworkConfig = map[string]any{datasource.NetworkKeyEc2: macs}
			}
		}
	}
	return d
}
