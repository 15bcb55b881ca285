package maas

// Pure parsing: the configuration's credentials, and Data from the files
// of a seed (cloud-init's check_seed_contents).

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/openstack"
	"github.com/cloudroot/cloudroot/pkg/yaml11"
)

// ErrMalformed marks a seed that is there but unusable (cloud-init's
// MAASSeedDirMalformed): a required file missing, vendor-data that is not
// YAML, text that is not UTF-8.
var ErrMalformed = errors.New("malformed MAAS seed")

// Seed paths, relative to the seed directory or to <metadata_url>/<version>
// (cloud-init's DS_FIELDS).
const (
	PathInstanceID    = "meta-data/instance-id"
	PathLocalHostname = "meta-data/local-hostname"
	PathPublicKeys    = "meta-data/public-keys"
	PathVendorData    = "meta-data/vendor-data"
	PathUserData      = "user-data"
)

// Field is one file of a seed.
type Field struct {
	// Path is where the file is, relative to the seed.
	Path string
	// Key is the meta-data key it becomes ("" for vendor-data and
	// user-data, which are not meta-data).
	Key string
	// Optional files may be missing.
	Optional bool
}

// Fields are the files of a seed, in cloud-init's order.
func Fields() []Field {
	return []Field{
		{PathInstanceID, "instance-id", false},
		{PathLocalHostname, "local-hostname", false},
		{PathPublicKeys, "public-keys", true},
		{PathVendorData, "", true},
		{PathUserData, "", true},
	}
}

// Input is a seed's contents.
type Input struct {
	// Source is where the seed was read: the seed directory or the
	// metadata_url (subplatform "seed-dir (<Source>)", as cloud-init
	// writes it for both).
	Source string
	// Files holds each file present, by Field.Path; a missing file has no
	// entry.
	Files map[string][]byte
}

// Build turns a seed into Data as check_seed_contents and _set_data do.
// A seed missing a required file, with vendor-data that is not YAML or meta-data that is not UTF-8
// is ErrMalformed. vendor-data whose structure convert_vendordata rejects
// is dropped with a warning to log (nil discards), as cloud-init does.
func Build(in Input, log *slog.Logger) (*datasource.Data, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	md := map[string]any{}
	var missing []string
	for _, f := range Fields() {
		b, ok := in.Files[f.Path]
		if !ok {
			if !f.Optional {
				missing = append(missing, f.Path)
			}
			continue
		}
		if f.Key == "" {
			continue
		}
		if !utf8.Valid(b) {
			return nil, fmt.Errorf("%s: %s is not UTF-8: %w", in.Source, f.Path, ErrMalformed)
		}
		md[f.Key] = string(b)
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%s: missing files %s: %w", in.Source, strings.Join(missing, ", "), ErrMalformed)
	}
	d := &datasource.Data{
		Name:        "MAAS",
		Platform:    "maas",
		CloudName:   "maas",
		Subplatform: "seed-dir (" + in.Source + ")",
		Mode:        "net",
		// MAASLocal needs a klibc initramfs network (/run/net-*.conf),
		// which a cloudroot boot never has: the network stage finds it.
		NetworkStage: true,
		MetaData:     md,
		PublicKeys:   datasource.NormalizePubKeys(md["public-keys"]),
		UserData:     in.Files[PathUserData],
	}
	if vd := in.Files[PathVendorData]; len(vd) > 0 {
		v, err := ParseVendorData(vd)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", in.Source, PathVendorData, err)
		}
		raw, err := ConvertVendorData(v)
		if err != nil {
			log.Warn("invalid content in vendor-data, ignored", "path", in.Source+"/"+PathVendorData, "error", err)
		} else {
			d.VendorData = raw
		}
	}
	return d, nil
}

// ParseVendorData loads vendor-data as YAML (any document; MAAS sends a
// mapping whose `cloud-init` key holds the vendor cloud-config). Text that
// is not YAML is ErrMalformed.
func ParseVendorData(b []byte) (any, error) {
	v, _, err := yaml11.Load("vendor-data", b)
	if err != nil {
		return nil, fmt.Errorf("vendor-data was not loadable as yaml (%w): %w", ErrMalformed, err)
	}
	return v, nil
}

// ConvertVendorData is cloud-init's convert_vendordata on the loaded
// vendor-data: nothing → none, a string → that text, a mapping → its
// `cloud-init` value (itself a string or a list), a list of strings → one
// multipart message (shared with OpenStack's vendor data).
func ConvertVendorData(v any) ([]byte, error) {
	switch t := v.(type) {
	case nil:
		return nil, nil
	case bool:
		if !t {
			return nil, nil
		}
	case int:
		if t == 0 {
			return nil, nil
		}
	case float64:
		if t == 0 {
			return nil, nil
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("vendor-data: %w", err)
	}
	return openstack.ConvertVendorData(b)
}

// CredentialsFromConfig reads consumer_key, consumer_secret, token_key and
// token_secret from the source's configuration and checks them
// (Credentials.Check). A key that is not text is an error naming it
// (integers are taken as their digits).
func CredentialsFromConfig(cfg map[string]any) (Credentials, error) {
	var c Credentials
	for _, k := range []struct {
		name string
		dst  *string
	}{
		{"consumer_key", &c.ConsumerKey}, {"consumer_secret", &c.ConsumerSecret},
		{"token_key", &c.TokenKey}, {"token_secret", &c.TokenSecret},
	} {
		switch v := cfg[k.name].(type) {
		case nil:
		case string:
			*k.dst = v
		case int:
			*k.dst = strconv.Itoa(v)
		case int64:
			*k.dst = strconv.FormatInt(v, 10)
		default:
			return Credentials{}, fmt.Errorf("%s: expected text, got %T", k.name, v)
		}
	}
	return c, c.Check()
}

// IDHash is cloud-init's get_id_from_ds_cfg: "v1:" and the SHA-256 of
// consumer_key, token_key and token_secret joined by NUL bytes (absent
// keys are empty).
func IDHash(cfg map[string]any) string {
	var parts []string
	for _, k := range []string{"consumer_key", "token_key", "token_secret"} {
		v, _ := cfg[k].(string)
		parts = append(parts, v)
	}
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return "v1:" + hex.EncodeToString(sum[:])
}
