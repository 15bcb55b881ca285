package modules

import (
	"maps"
	"slices"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
)

// InstanceMeta is the part of the datasource's meta-data that modules
// read, decoded from Context.Meta by pyval's decoder as cloud-init's
// DataSource methods read it (get_hostname, get_public_ssh_keys,
// device_name_to_device, the random seed), so no module walks the mapping
// by hand.
type InstanceMeta struct {
	// LocalHostname is local-hostname as a scalar ("" for a mapping, a
	// list, null or absent).
	LocalHostname string `cfg:"local-hostname,scalar"`
	// PublicKeys are the SSH keys of public-keys (normalize_pubkey_data).
	PublicKeys MetaPublicKeys `cfg:"public-keys"`
	// RandomSeed is random_seed as a scalar ("" for null or absent).
	RandomSeed string `cfg:"random_seed,scalar"`
	// BlockDeviceMapping is block-device-mapping (name → device) when it
	// is a mapping; anything else is ignored, as EC2's
	// device_name_to_device does.
	BlockDeviceMapping map[string]any `cfg:"block-device-mapping,loose"`
}

// Metadata decodes the instance's meta-data keys modules read. The
// meta-data is the datasource's, already checked when it was fetched: a
// value of the wrong shape reads as absent, never as a module error.
func (c *Context) Metadata() InstanceMeta {
	var m InstanceMeta
	_ = (&pyval.Decoder{}).Decode(c.Meta, &m)
	return m
}

// Device is block-device-mapping's entry for name as a scalar ("" when
// absent).
func (m InstanceMeta) Device(name string) string {
	return pyval.ScalarStr(m.BlockDeviceMapping[name])
}

// MetaPublicKeys is cloud-init's normalize_pubkey_data: public-keys may be
// a string (one key per line), a list of those, or a mapping whose
// "openssh-key" entry holds them (else every value, in key order).
type MetaPublicKeys []string

// metaKeyMap is a public-keys mapping: its openssh-key entry, and every
// entry for a mapping without one.
type metaKeyMap struct {
	OpenSSH pyval.Opt      `cfg:"openssh-key"`
	All     map[string]any `cfg:",all"`
}

// UnmarshalPy walks the value as normalize_pubkey_data does.
func (k *MetaPublicKeys) UnmarshalPy(d *pyval.Decoder, v any) error {
	var add func(v any)
	add = func(v any) {
		switch t := v.(type) {
		case string:
			for l := range strings.SplitSeq(t, "\n") {
				if l = strings.TrimSpace(l); l != "" {
					*k = append(*k, l)
				}
			}
		case []any:
			for _, e := range t {
				add(e)
			}
		case map[string]any:
			var m metaKeyMap
			if d.Decode(t, &m) != nil {
				return
			}
			if m.OpenSSH.Given {
				add(m.OpenSSH.Value)
				return
			}
			for _, name := range slices.Sorted(maps.Keys(m.All)) {
				add(m.All[name])
			}
		}
	}
	add(v)
	return nil
}
