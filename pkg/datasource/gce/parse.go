package gce

// Pure parsing: attributes, ssh-keys, the zone, Data.

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/cloudroot/cloudroot/pkg/datasource"
)

// ParseAttributes decodes an `attributes/?recursive=true` reply: a JSON
// object of strings. Empty input is an empty map.
func ParseAttributes(b []byte) (map[string]any, error) {
	if len(strings.TrimSpace(string(b))) == 0 {
		return map[string]any{}, nil
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("expected a JSON object, got %T", v)
	}
	return m, nil
}

func attr(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

// KeyLines gathers the ssh-keys lines as cloud-init's read_md does: the
// instance's legacy `sshKeys` and `ssh-keys`, then, unless the instance sets
// `block-project-ssh-keys: true` or has legacy `sshKeys`, the project's
// `ssh-keys` and `sshKeys`.
func KeyLines(instance, project map[string]any) []string {
	parts := []string{attr(instance, "sshKeys"), attr(instance, "ssh-keys")}
	if !strings.EqualFold(attr(instance, "block-project-ssh-keys"), "true") && attr(instance, "sshKeys") == "" {
		parts = append(parts, attr(project, "ssh-keys"), attr(project, "sshKeys"))
	}
	var lines []string
	for _, p := range parts {
		if p == "" {
			continue
		}
		lines = append(lines, strings.FieldsFunc(p, func(r rune) bool { return r == '\n' || r == '\r' })...)
	}
	return lines
}

// ParseKeys is cloud-init's _parse_public_keys: from `user:key` lines,
// the keys of the default user and of `cloudinit` that are ASCII and not
// expired (a key whose third field is `google-ssh` carries JSON whose
// expireOn, "2006-01-02T15:04:05+0000", may lie in the past).
func ParseKeys(lines []string, defaultUser string, now time.Time) []string {
	var out []string
	for _, l := range lines {
		if l == "" || !ascii(l) {
			continue
		}
		user, key, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		if user != "cloudinit" && (defaultUser == "" || user != defaultUser) {
			continue
		}
		if expired(key, now) {
			continue
		}
		out = append(out, key)
	}
	return out
}

func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// expired mirrors _has_expired: Python's split(None, 3) must give exactly
// four fields, the third "google-ssh", the fourth JSON with a parseable
// expireOn; anything else never expires.
func expired(key string, now time.Time) bool {
	f := splitN(key, 4)
	if len(f) != 4 || f[2] != "google-ssh" {
		return false
	}
	var j map[string]any
	if err := json.Unmarshal([]byte(f[3]), &j); err != nil {
		return false
	}
	s, ok := j["expireOn"].(string)
	if !ok {
		return false
	}
	s, ok = strings.CutSuffix(s, "+0000")
	if !ok {
		return false
	}
	t, err := time.ParseInLocation("2006-01-02T15:04:05", s, time.UTC)
	if err != nil {
		return false
	}
	return now.After(t)
}

// splitN splits on runs of white space into at most n fields, the last
// keeping the rest (Python's str.split(None, n-1)).
func splitN(s string, n int) []string {
	var out []string
	s = strings.TrimLeft(s, " \t\n\r\v\f")
	for s != "" {
		if len(out) == n-1 {
			out = append(out, strings.TrimRight(s, " \t\n\r\v\f"))
			break
		}
		i := strings.IndexAny(s, " \t\n\r\v\f")
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i])
		s = strings.TrimLeft(s[i:], " \t\n\r\v\f")
	}
	return out
}

// Input is what the metadata server answered.
type Input struct {
	// Base is the server's base URL.
	Base string
	// InstanceID, Zone and Hostname are instance/id, instance/zone
	// ("projects/<n>/zones/<zone>") and instance/hostname.
	InstanceID, Zone, Hostname string
	// Instance and Project are the attributes replies (nil: none).
	Instance, Project []byte
	// DefaultUser is the distro's default user.
	DefaultUser string
	// Now is the time keys' expireOn is compared with.
	Now time.Time
}

// Build turns the server's answers into Data: instance-id, zone (its last
// path segment) → availability zone, region (the zone without its last
// "-x"), hostname (the short name as cloud-init's get_hostname),
// user-data (base64-decoded when user-data-encoding is base64), and the
// public keys ParseKeys keeps. meta-data holds the attributes as decoded
// objects (cloud-init keeps the raw JSON text) with "public-keys-data".
func Build(in Input) (*datasource.Data, error) {
	inst, err := ParseAttributes(in.Instance)
	if err != nil {
		return nil, fmt.Errorf("instance/attributes: %w", err)
	}
	proj, err := ParseAttributes(in.Project)
	if err != nil {
		return nil, fmt.Errorf("project/attributes: %w", err)
	}
	zone := in.Zone
	if i := strings.LastIndex(zone, "/"); i >= 0 {
		zone = zone[i+1:]
	}
	lines := KeyLines(inst, proj)
	md := map[string]any{
		"instance-id":       in.InstanceID,
		"availability-zone": zone,
		"local-hostname":    in.Hostname,
		"instance-data":     inst,
		"project-data":      proj,
		"public-keys-data":  toAny(lines),
	}
	d := &datasource.Data{
		NetworkUpdateEvents: NetworkUpdateEvents,
		Name:                "GCE",
		Platform:            "gce",
		CloudName:           "gce",
		Subplatform:         "metadata (" + in.Base + ")",
		Mode:                "net",
		MetaData:            md,
		AvailabilityZone:    zone,
		Hostname:            strings.SplitN(in.Hostname, ".", 2)[0],
		PublicKeys:          ParseKeys(lines, in.DefaultUser, in.Now),
	}
	if i := strings.LastIndex(zone, "-"); i >= 0 {
		d.Region = zone[:i]
	} else {
		d.Region = zone
	}
	if ud, ok := inst["user-data"].(string); ok {
		d.UserData = []byte(ud)
		switch enc := attr(inst, "user-data-encoding"); enc {
		case "":
		case "base64":
			b, err := datasource.DecodeBase64(ud)
			if err != nil {
				return nil, fmt.Errorf("instance/attributes: user-data: %w", err)
			}
			d.UserData = b
		default:
			// cloud-init warns and uses the text as is.
		}
	}
	return d, nil
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
