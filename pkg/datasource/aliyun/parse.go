package aliyun

// Pure parsing: Data from the crawled tree.

import (
	"errors"
	"sort"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/datasource"
)

// Input is what the service answered.
type Input struct {
	// URL is the meta-data tree's URL; Base the service's base URL (the
	// subplatform names it, as cloud-init's metadata_address).
	URL, Base string
	// Token: the security-enhanced mode was used.
	Token bool
	// MetaData is the crawled tree; UserData and VendorData as served
	// (nil: none).
	MetaData   map[string]any
	UserData   []byte
	VendorData []byte
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

func strs(l []any) []string {
	var out []string
	for _, v := range l {
		if s, ok := v.(string); ok && strings.TrimSpace(s) != "" {
			out = append(out, s)
		}
	}
	return out
}

// PublicKeys is cloud-init's parse_public_keys: every value of the
// public-keys mapping (in key order) is a key, a list of keys, or a
// mapping whose openssh-key is either.
func PublicKeys(v any) []string {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	ids := make([]string, 0, len(m))
	for k := range m {
		ids = append(ids, k)
	}
	sort.Strings(ids)
	var keys []string
	for _, id := range ids {
		body := m[id]
		if d, ok := body.(map[string]any); ok {
			body = d["openssh-key"]
		}
		switch t := body.(type) {
		case string:
			if s := strings.TrimSpace(t); s != "" {
				keys = append(keys, s)
			}
		case []any:
			keys = append(keys, strs(t)...)
		}
	}
	return keys
}

// Build turns the answers into Data as cloud-init's DataSourceAliYun does.
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
		Name:        "AliYun",
		Platform:    "aliyun",
		CloudName:   "aliyun",
		Subplatform: "metadata (" + in.Base + ")",
		Mode:        "net",
		MetaData:    md,
		// No Region or AvailabilityZone: cloud-init's AliYun does not map
		// region-id and zone-id, so v1.region and v1.availability_zone
		// are null (both stay in meta-data).
		PublicKeys: PublicKeys(md["public-keys"]),
		UserData:   in.UserData,
		VendorData: in.VendorData,
	}
	if h := text(md["hostname"]); h != "" {
		d.Hostname = h
	}
	return d, nil
}
