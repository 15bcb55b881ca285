package vmware

// Pure parsing: guestinfo values and their encodings, the meta-data
// document, and the Data built from them.

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
)

// Data access methods (cloud-init's DATA_ACCESS_METHOD_*), the first word
// of the subplatform.
const (
	MethodEnvvar    = "envvar"
	MethodGuestinfo = "guestinfo"
	MethodIMC       = "imc"
)

// emptyValue is what cleanup-guestinfo leaves in a redacted key; it reads
// as no value.
const emptyValue = "---"

// Value is cloud-init's handle_returned_guestinfo_val: the value without
// trailing whitespace; "" when nothing is left or the value is the
// redaction marker "---".
func Value(raw string) string {
	v := strings.TrimRight(raw, " \t\n\r\v\f")
	if v == emptyValue {
		return ""
	}
	return v
}

// Decode is cloud-init's decode(): a value with encoding "base64" or
// "b64" is base64, "gzip+base64" or "gz+b64" gzip inside base64; any other
// encoding (or none) is plain text. As in Python's b64decode, characters
// outside the base64 alphabet are skipped but the padding must be right.
// As in cloud-init's decomp_gzip, base64 that does not hold gzip data is
// returned as it decodes; gzip data that is corrupt is an error.
// key names the value in errors.
func Decode(key, encoding, data string) ([]byte, error) {
	switch encoding {
	case "gzip+base64", "gz+b64":
		b, err := b64decode(data)
		if err != nil {
			return nil, fmt.Errorf("%s (%s): %w", key, encoding, err)
		}
		out, err := gunzip(b)
		if err != nil {
			return nil, fmt.Errorf("%s (%s): %w", key, encoding, err)
		}
		return out, nil
	case "base64", "b64":
		b, err := b64decode(data)
		if err != nil {
			return nil, fmt.Errorf("%s (%s): %w", key, encoding, err)
		}
		return b, nil
	}
	return []byte(data), nil
}

// b64decode is Python's base64.b64decode without validation.
func b64decode(s string) ([]byte, error) {
	b, err := datasource.DecodeBase64(s)
	if err != nil {
		return nil, fmt.Errorf("invalid base64: %w", err)
	}
	return b, nil
}

// gunzip decompresses b when it is gzip data (at most
// datasource.MaxFileSize bytes out), and returns it unchanged otherwise.
func gunzip(b []byte) ([]byte, error) {
	if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		return b, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("invalid gzip data: %w", err)
	}
	out, err := io.ReadAll(io.LimitReader(zr, datasource.MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("invalid gzip data: %w", err)
	}
	if len(out) > datasource.MaxFileSize {
		return nil, fmt.Errorf("gzip data larger than %d bytes", datasource.MaxFileSize)
	}
	return out, nil
}

// ParseMetadata is cloud-init's load_json_or_yaml: JSON, else YAML, which
// must be a mapping. Empty (or all-space) input is an empty mapping.
// Unlike cloud-init, which quietly uses an empty mapping then, a document
// that is neither is an error naming key.
func ParseMetadata(key string, b []byte) (map[string]any, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return map[string]any{}, nil
	}
	if json.Valid(b) {
		v, err := decodeJSON(b)
		if err != nil {
			return nil, fmt.Errorf("%s: invalid JSON: %w", key, err)
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: expected a mapping, got JSON %s", key, jsonKind(v))
		}
		return m, nil
	}
	m, err := datasource.DecodeYAMLMap(b)
	if err != nil {
		return nil, fmt.Errorf("%s: neither JSON nor a YAML mapping: %w", key, err)
	}
	return m, nil
}

// decodeJSON decodes JSON with Python's number types: integers stay
// integers (int), other numbers are float64.
func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return numbers(v), nil
}

func numbers(v any) any {
	switch t := v.(type) {
	case json.Number:
		if i, err := t.Int64(); err == nil && int64(int(i)) == i {
			return int(i)
		}
		f, _ := t.Float64()
		return f
	case map[string]any:
		for k, e := range t {
			t[k] = numbers(e)
		}
	case []any:
		for i, e := range t {
			t[i] = numbers(e)
		}
	}
	return v
}

func jsonKind(v any) string {
	switch v.(type) {
	case []any:
		return "array"
	case string:
		return "string"
	case nil:
		return "null"
	case bool:
		return "boolean"
	}
	return "number"
}

// ProcessMetadata is cloud-init's process_metadata: it removes "network"
// and "network.encoding" from md and, when network is set, puts it back
// as {"config": CONFIG}, where CONFIG is the mapping given, or the string
// given decoded with network.encoding and parsed as JSON or YAML. It
// returns CONFIG (nil when there is none). key names md in errors.
func ProcessMetadata(key string, md map[string]any) (map[string]any, error) {
	network, has := md["network"]
	enc := md["network.encoding"]
	delete(md, "network")
	delete(md, "network.encoding")
	if !has || !pyval.Truthy(network) {
		return nil, nil
	}
	var cfg map[string]any
	switch t := network.(type) {
	case map[string]any:
		cfg = t
	case string:
		encoding, _ := enc.(string)
		b, err := Decode(key+" network", encoding, t)
		if err != nil {
			return nil, err
		}
		if cfg, err = ParseMetadata(key+" network", b); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("%s: network must be a mapping or an encoded string, not %T", key, network)
	}
	md["network"] = map[string]any{"config": cfg}
	if len(cfg) == 0 {
		return nil, nil
	}
	return cfg, nil
}

// Input is what one data access method found.
type Input struct {
	// Method is MethodEnvvar, MethodGuestinfo or MethodIMC.
	Method string
	// MetaDataKey names where meta-data came from, for errors
	// ("guestinfo.metadata", a file's path).
	MetaDataKey string
	// MetaData is the parsed meta-data (ParseMetadata); nil is empty.
	MetaData map[string]any
	// UserData and VendorData are the decoded payloads; nil is none.
	UserData, VendorData []byte
	// ProductUUID is DMI product_uuid, the instance-id when meta-data has
	// none.
	ProductUUID string
	// Config is the datasource's config object (IMC: timezone).
	Config map[string]any
	// NetworkConfig, when set, is the network configuration regardless of
	// meta-data (IMC's NIC spec).
	NetworkConfig map[string]any
}

// ErrNoInstanceID is returned when neither meta-data nor DMI gives an
// instance-id.
var ErrNoInstanceID = errors.New("no instance-id in meta-data and no DMI product_uuid")

// Subplatform is cloud-init's _get_subplatform for a method: "guestinfo
// (guestinfo.metadata)", "envvar (VMX_GUESTINFO_METADATA)", "imc
// (vmware-tools)".
func Subplatform(method string) string {
	switch method {
	case MethodGuestinfo:
		return MethodGuestinfo + " (" + GuestinfoMetadata + ")"
	case MethodEnvvar:
		return MethodEnvvar + " (" + EnvKey(GuestinfoMetadata) + ")"
	case MethodIMC:
		return MethodIMC + " (vmware-tools)"
	}
	return "unknown"
}

// Guestinfo keys read, in cloud-init's order.
const (
	GuestinfoMetadata   = "guestinfo.metadata"
	GuestinfoUserdata   = "guestinfo.userdata"
	GuestinfoVendordata = "guestinfo.vendordata"
)

// Build assembles Data from what a method found: meta-data processed as
// ProcessMetadata does, instance-id from meta-data else (also when it is
// null or empty, where cloud-init would use None) the lowercased product
// UUID, SSH keys from the first of public-keys-data,
// public_keys_data, public-keys, public_keys, cloud_name from meta-data's
// cloud-name (lowercased) else "vmware", availability zone and region
// from meta-data.
func Build(in Input) (*datasource.Data, error) {
	md := in.MetaData
	if md == nil {
		md = map[string]any{}
	}
	md = maps.Clone(md)
	netcfg, err := ProcessMetadata(in.MetaDataKey, md)
	if err != nil {
		return nil, err
	}
	if in.NetworkConfig != nil {
		netcfg = in.NetworkConfig
	}
	if iid, ok := md["instance-id"]; !ok || iid == nil || iid == "" {
		uuid := strings.ToLower(strings.TrimSpace(in.ProductUUID))
		if uuid == "" {
			return nil, fmt.Errorf("%s: %w", in.MetaDataKey, ErrNoInstanceID)
		}
		md["instance-id"] = uuid
	}
	d := &datasource.Data{
		Name: "VMware", Platform: "vmware", CloudName: "vmware", Mode: "net",
		Subplatform: Subplatform(in.Method),
		MetaData:    md, UserData: in.UserData, VendorData: in.VendorData,
		NetworkConfig: netcfg,
	}
	if cn, ok := md["cloud-name"].(string); ok && cn != "" {
		d.CloudName = strings.ToLower(cn)
	}
	for _, k := range []string{"public-keys-data", "public_keys_data", "public-keys", "public_keys"} {
		if v, ok := md[k]; ok {
			d.PublicKeys = datasource.NormalizePubKeys(v)
			break
		}
	}
	if az := stringValue(md["availability-zone"]); az != "" {
		d.AvailabilityZone = az
	} else {
		d.AvailabilityZone = stringValue(md["availability_zone"])
	}
	d.Region = stringValue(md["region"])
	if len(in.Config) > 0 {
		d.Config = in.Config
	}
	return d, nil
}

// stringValue is v when it is a string, else "" (a getter, not
// Python's str()).
func stringValue(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return ""
}

// RedactKeys is the list under meta-data's "redact" (or, for older
// meta-data, "cleanup-guestinfo"): a string or a list of strings, each a
// guestinfo key without its "guestinfo." prefix. Names that could not be
// sent in an info-set command (empty, or with space or control
// characters) are returned in bad.
func RedactKeys(md map[string]any) (keys, bad []string) {
	v, ok := md["redact"]
	if !ok {
		v = md["cleanup-guestinfo"]
	}
	var items []any
	switch t := v.(type) {
	case nil:
		return nil, nil
	case []any:
		items = t
	default:
		items = []any{t}
	}
	for _, it := range items {
		s, ok := it.(string)
		if !ok || s == "" || strings.IndexFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0 {
			bad = append(bad, fmt.Sprint(it))
			continue
		}
		keys = append(keys, s)
	}
	return keys, bad
}
