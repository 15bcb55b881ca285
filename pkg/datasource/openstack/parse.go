package openstack

// Pure parsing of the OpenStack metadata layout, shared with configdrive
// (cloud-init's helpers/openstack.py BaseReader.read_v2).

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"mime/multipart"
	"net/textproto"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/cloudroot/cloudroot/pkg/datasource"
)

// Latest is the version directory every OpenStack metadata tree has.
const Latest = "latest"

// Versions returns the dated versions cloud-init knows (nova's
// api/metadata/base.py), oldest first.
func Versions() []string {
	return []string{
		"2012-08-10", // Folsom
		"2013-04-04", // Grizzly
		"2013-10-17", // Havana
		"2015-10-15", // Liberty: network_data.json
		"2016-06-30", // Newton: devices
		"2016-10-06", // Newton: vendor_data2.json
		"2017-02-22", // Ocata: devices[].vlan/vf
		"2018-08-27", // Rocky: devices[].vf_trusted
	}
}

var dated = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`) })

// PickVersion chooses the version directory to read from those available:
// the newest version cloud-init knows, else "latest" when present (cloud-init
// stops here: it always reads "latest"), else the newest dated directory,
// else "latest".
func PickVersion(available []string) string {
	have := map[string]bool{}
	for _, v := range available {
		have[strings.TrimSuffix(strings.TrimSpace(v), "/")] = true
	}
	versions := Versions()
	for i := len(versions) - 1; i >= 0; i-- {
		if have[versions[i]] {
			return versions[i]
		}
	}
	if have[Latest] {
		return Latest
	}
	var ds []string
	for v := range have {
		if dated().MatchString(v) {
			ds = append(ds, v)
		}
	}
	if len(ds) > 0 {
		sort.Strings(ds)
		return ds[len(ds)-1]
	}
	return Latest
}

// ParseVersions parses the `openstack/` listing a metadata service serves:
// one version a line.
func ParseVersions(b []byte) []string {
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, strings.TrimSuffix(l, "/"))
		}
	}
	return out
}

// Input is what one OpenStack metadata tree holds. Byte fields are the
// files' contents; nil means the file is absent.
type Input struct {
	// Source names where the tree was read, for error messages
	// ("/dev/sr0", a metadata service URL).
	Source string
	// Version is the version directory read.
	Version string

	MetaData    []byte // openstack/<v>/meta_data.json (required)
	UserData    []byte // openstack/<v>/user_data
	VendorData  []byte // openstack/<v>/vendor_data.json
	VendorData2 []byte // openstack/<v>/vendor_data2.json
	NetworkData []byte // openstack/<v>/network_data.json
	// EC2 is the EC2-compatible meta-data (config drive:
	// ec2/latest/meta-data.json; metadata service: the latest/meta-data/
	// tree), nil when absent.
	EC2 map[string]any
	// Content holds the files meta_data.json points at (`files[].content_path`
	// and `network_config.content_path`), by content_path as written there.
	Content map[string][]byte
}

// ContentRefs lists the content_path values meta_data.json refers to, so
// the reader can fetch them before calling Build.
func ContentRefs(md map[string]any) []string {
	var out []string
	if files, ok := md["files"].([]any); ok {
		for _, f := range files {
			if m, ok := f.(map[string]any); ok {
				if _, ok := m["path"]; !ok {
					continue
				}
				if p, ok := m["content_path"].(string); ok {
					out = append(out, p)
				}
			}
		}
	}
	if m, ok := md["network_config"].(map[string]any); ok {
		if p, ok := m["content_path"].(string); ok {
			out = append(out, p)
		}
	}
	return out
}

// ContentPath turns a content_path ("/content/0000") into a path relative
// to the `openstack/` directory ("content/0000"). Paths that are empty or
// climb out (..) are errors.
func ContentPath(p string) (string, error) {
	var parts []string
	for _, s := range strings.Split(p, "/") {
		switch s {
		case "", ".":
			continue
		case "..":
			return "", fmt.Errorf("content_path %q leaves the openstack directory", p)
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		return "", fmt.Errorf("content_path %q names no file", p)
	}
	return strings.Join(parts, "/"), nil
}

// ParseMetaData decodes meta_data.json, which must be a JSON object.
func ParseMetaData(b []byte) (map[string]any, error) {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("expected a JSON object, got %s", datasource.JSONKind(v))
	}
	return m, nil
}

// Build turns a tree's contents into Data (without Name, Platform,
// Subplatform, which the caller sets). It mirrors read_v2: meta_data.json
// must be an object with a `uuid` (cloudroot also accepts the EC2
// meta-data's instance-id when uuid is missing), `random_seed` must be
// base64, every `files` entry and `network_config` must have its content;
// `hostname` → local-hostname, `uuid` → instance-id, `meta.dsmode` → Mode
// (default "net"), `public_keys` → PublicKeys, vendor data reduced to its
// `cloud-init` key, network_data.json kept under NetworkKeyOpenStack and the
// legacy `network_config` ENI text under NetworkKeyENI.
func Build(in Input) (*datasource.Data, error) {
	where := func(name string) string {
		return fmt.Sprintf("%s %s/%s", in.Source, in.Version, name)
	}
	if in.MetaData == nil {
		return nil, fmt.Errorf("%s: missing: %w", where("meta_data.json"), datasource.ErrNotFound)
	}
	md, err := ParseMetaData(in.MetaData)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where("meta_data.json"), err)
	}
	if rs, ok := md["random_seed"]; ok {
		s, _ := rs.(string)
		if _, err := base64.StdEncoding.DecodeString(s); err != nil {
			return nil, fmt.Errorf("%s: badly formatted random_seed: %w", where("meta_data.json"), err)
		}
	}
	d := &datasource.Data{Mode: "net", MetaData: md}
	if meta, ok := md["meta"].(map[string]any); ok {
		if m, ok := meta["dsmode"].(string); ok && m != "" {
			d.Mode = m
		}
	}
	switch {
	case md["uuid"] != nil:
		md["instance-id"] = md["uuid"]
	case in.EC2 != nil && in.EC2["instance-id"] != nil:
		md["instance-id"] = in.EC2["instance-id"]
	default:
		return nil, fmt.Errorf("%s: no 'uuid' entry", where("meta_data.json"))
	}
	if h, ok := md["hostname"]; ok {
		md["local-hostname"] = h
	}
	if az, ok := md["availability_zone"].(string); ok {
		d.AvailabilityZone = az
	}
	d.PublicKeys = datasource.NormalizePubKeys(md["public_keys"])

	content := func(p string) ([]byte, error) {
		if b, ok := in.Content[p]; ok {
			return b, nil
		}
		return nil, fmt.Errorf("content_path %q: missing", p)
	}
	if files, ok := md["files"].([]any); ok {
		for _, f := range files {
			m, ok := f.(map[string]any)
			if !ok {
				continue
			}
			path, ok := m["path"].(string)
			if !ok {
				continue
			}
			cp, _ := m["content_path"].(string)
			b, err := content(cp)
			if err != nil {
				return nil, fmt.Errorf("%s: file %s: %w", where("meta_data.json"), path, err)
			}
			if d.Files == nil {
				d.Files = map[string][]byte{}
			}
			d.Files[path] = b
		}
	}

	d.UserData = in.UserData
	if d.VendorData, err = ConvertVendorData(in.VendorData); err != nil {
		return nil, fmt.Errorf("%s: %w", where("vendor_data.json"), err)
	}
	if d.VendorData2, err = ConvertVendorData(in.VendorData2); err != nil {
		return nil, fmt.Errorf("%s: %w", where("vendor_data2.json"), err)
	}
	ds := map[string]any{}
	if in.NetworkData != nil {
		nd, err := ParseNetworkData(in.NetworkData)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where("network_data.json"), err)
		}
		d.NetworkConfig = map[string]any{datasource.NetworkKeyOpenStack: nd}
		ds["network_json"] = nd
	} else if m, ok := md["network_config"].(map[string]any); ok {
		cp, _ := m["content_path"].(string)
		b, err := content(cp)
		if err != nil {
			return nil, fmt.Errorf("%s: network_config: %w", where("meta_data.json"), err)
		}
		d.NetworkConfig = map[string]any{datasource.NetworkKeyENI: string(b)}
	}
	if in.EC2 != nil {
		ds["ec2_metadata"] = in.EC2
	}
	if len(ds) > 0 {
		d.DS = ds
	}
	return d, nil
}

// ParseNetworkData decodes network_data.json (an object; kept as is).
func ParseNetworkData(b []byte) (map[string]any, error) {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("expected a JSON object, got %s", datasource.JSONKind(v))
	}
	return m, nil
}

// ConvertVendorData is cloud-init's convert_vendordata applied to
// vendor_data.json: JSON null, "" or {} → none; a string → that text; an
// object → its "cloud-init" value, converted once more (an object there is
// an error); a list of strings → a multipart/mixed message with one
// text/plain part each (cloud-init's user-data processor takes the list as
// parts; text/plain parts are sniffed like plain user-data).
func ConvertVendorData(b []byte) ([]byte, error) {
	if b == nil {
		return nil, nil
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	return convertVendor(v, true)
}

func convertVendor(v any, recurse bool) ([]byte, error) {
	switch t := v.(type) {
	case nil:
		return nil, nil
	case string:
		if t == "" {
			return nil, nil
		}
		return []byte(t), nil
	case []any:
		if len(t) == 0 {
			return nil, nil
		}
		return partsMessage(t)
	case map[string]any:
		if len(t) == 0 {
			return nil, nil
		}
		if !recurse {
			return nil, errors.New("vendordata['cloud-init'] cannot be an object")
		}
		return convertVendor(t["cloud-init"], false)
	}
	return nil, fmt.Errorf("unknown type for vendor data: %s", datasource.JSONKind(v))
}

// vendorBoundary is fixed so the same vendor data gives the same bytes.
const vendorBoundary = "===============cloudroot-vendor-data=="

func partsMessage(items []any) ([]byte, error) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	if err := w.SetBoundary(vendorBoundary); err != nil {
		return nil, err
	}
	fmt.Fprintf(&buf, "Content-Type: multipart/mixed; boundary=%q\r\nMIME-Version: 1.0\r\n\r\n", w.Boundary())
	for i, it := range items {
		s, ok := it.(string)
		if !ok {
			return nil, fmt.Errorf("vendor data list item %d is %s, not a string", i, datasource.JSONKind(it))
		}
		h := textproto.MIMEHeader{}
		h.Set("Content-Type", "text/plain; charset=utf-8")
		pw, err := w.CreatePart(h)
		if err != nil {
			return nil, err
		}
		pw.Write([]byte(s))
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
