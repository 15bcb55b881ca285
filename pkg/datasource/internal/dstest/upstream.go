package dstest

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/netconfig"
)

// UpstreamFile is the name of a case's upstream golden: what upstream
// cloud-init 26.x's own datasource class derives from the case's payload,
// written by scripts/goldens/ds.py (see docs/compatibility.md).
const UpstreamFile = "upstream-26.json"

// Differs names the fields of an upstream golden in which cloudroot
// deliberately answers otherwise, each with the reason (docs/datasources.md
// "Where cloudroot differs" says the same). A field listed here is
// compared and its difference logged, not failed; a listed field that
// turns out equal fails, so the list cannot go stale.
type Differs map[string]string

// Upstream compares d (and err, Get's error) with dir's upstream golden,
// field by field: found, instance_id, platform, subplatform, cloud_name,
// availability_zone, region, local_hostname (meta-data's, as the
// datasource stores it), hostname and fqdn (upstream's get_hostname, to
// the same rules applied to d.LocalHostname), public_keys,
// network_config (both sides rendered by pkg/netconfig's netplan renderer,
// so raw platform documents are compared after conversion), userdata_raw,
// vendordata_raw, vendordata2_raw and config_obj. baseURL, when not "",
// is the test server's URL, written BASE in the golden. A case without
// the golden is skipped.
func Upstream(t *testing.T, dir string, d *datasource.Data, err error, baseURL string, differs Differs) {
	t.Helper()
	UpstreamWith(t, dir, d, err, baseURL, differs, nil)
}

// UpstreamWith is Upstream with the source's own conversion of its raw
// network description (nil: the one renderData knows), for sources whose
// conversion takes settings (Oracle's configure_secondary_nics).
func UpstreamWith(t *testing.T, dir string, d *datasource.Data, err error, baseURL string, differs Differs, convert func(*datasource.Data) (*netconfig.Config, error)) {
	t.Helper()
	b, rerr := os.ReadFile(filepath.Join(dir, UpstreamFile))
	if os.IsNotExist(rerr) {
		return
	}
	if rerr != nil {
		t.Fatal(rerr)
	}
	var up map[string]any
	if err := json.Unmarshal(b, &up); err != nil {
		t.Fatalf("%s: %v", UpstreamFile, err)
	}
	seen := map[string]bool{}
	check := func(field string, want, got any) {
		t.Helper()
		seen[field] = true
		diff := cmp.Diff(want, got)
		why, known := differs[field]
		switch {
		case diff == "" && known:
			t.Errorf("upstream %s: listed as differing (%s) but equal: %v", field, why, got)
		case diff != "" && known:
			t.Logf("upstream %s differs as documented (%s) (-upstream +cloudroot):\n%s", field, why, diff)
		case diff != "":
			t.Errorf("upstream %s differs (-upstream +cloudroot):\n%s", field, diff)
		}
	}
	found, _ := up["found"].(bool)
	check("found", found, err == nil)
	if !found || err != nil {
		return
	}
	base := func(s string) string {
		if baseURL != "" {
			return strings.ReplaceAll(s, baseURL, "BASE")
		}
		return s
	}
	for _, f := range []struct {
		field string
		got   string
	}{
		{"instance_id", d.InstanceID()},
		{"platform", d.Platform},
		{"subplatform", base(d.Subplatform)},
		{"cloud_name", d.CloudName},
		{"availability_zone", d.AvailabilityZone},
		{"region", d.Region},
		{"local_hostname", metaLocalHostname(d)},
		{"hostname", hostnameRule(d.LocalHostname(), false)},
		{"fqdn", hostnameRule(d.LocalHostname(), true)},
	} {
		want, ok := scalar(up[f.field])
		if !ok || (f.field == "local_hostname" && up[f.field] == nil) {
			// A meta-data local-hostname cloudroot adds where upstream
			// keeps the name elsewhere (Scaleway's hostname) is compared
			// through hostname and fqdn.
			continue
		}
		check(f.field, want, f.got)
	}
	if want, ok := up["public_keys"].([]any); ok || up["public_keys"] == nil {
		var w []string
		for _, k := range want {
			w = append(w, fmt.Sprint(k))
		}
		// The boot uses meta-data's public-keys when the source sets no
		// PublicKeys (pkg/stages moduleMeta, InstanceData).
		keys := d.PublicKeys
		if len(keys) == 0 {
			keys = datasource.NormalizePubKeys(d.MetaData["public-keys"])
		}
		check("public_keys", authorizedKeys(w), authorizedKeys(keys))
	}
	for _, f := range []struct {
		field string
		got   []byte
	}{
		{"userdata_raw", d.UserData},
		{"vendordata_raw", d.VendorData},
		{"vendordata2_raw", d.VendorData2},
	} {
		check(f.field, rawText(up[f.field]), rawText(bytesValue(f.got)))
	}
	if _, isErr := errorValue(up["config_obj"]); !isErr {
		check("config_obj", normalize(up["config_obj"]), normalize(d.Config))
	}
	if _, isErr := errorValue(up["network_config"]); !isErr {
		macs := netconfig.MACs{}
		if m, ok := up["os_interfaces"].(map[string]any); ok {
			for mac, name := range m {
				macs[mac] = fmt.Sprint(name)
			}
		}
		got := ""
		if convert != nil {
			cfg, err := convert(d)
			if err != nil {
				got = "convert error: " + err.Error()
			} else {
				got = render(cfg)
			}
		} else {
			got = renderData(t, d, macs)
		}
		check("network_config", renderUpstream(t, up["network_config"], macs), got)
	}
	for field := range differs {
		if !seen[field] {
			t.Errorf("upstream %s: listed as differing but not compared", field)
		}
	}
}

// scalar is a golden's string field ("" for null); ok is false for a
// field upstream failed to compute ({"error": ...}).
func scalar(v any) (string, bool) {
	if _, isErr := errorValue(v); isErr {
		return "", false
	}
	if v == nil {
		return "", true
	}
	return fmt.Sprint(v), true
}

// authorizedKeys is keys as cloud-init's cc_ssh uses them: a set
// (sorted here) of the entries ssh_util.update_authorized_keys keeps —
// line ends and surrounding blanks trimmed, comments and blank entries
// dropped.
func authorizedKeys(keys []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, k := range keys {
		k = strings.TrimSpace(strings.TrimRight(k, "\r\n"))
		if k == "" || strings.HasPrefix(k, "#") || seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// metaLocalHostname is meta-data's local-hostname as the source stores
// it, else (a source that keeps the name in Data.Hostname only) the
// hostname the boot uses.
func metaLocalHostname(d *datasource.Data) string {
	if s := metaString(d.MetaData["local-hostname"]); s != "" {
		return s
	}
	return d.LocalHostname()
}

func metaString(v any) string {
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

func errorValue(v any) (string, bool) {
	m, ok := v.(map[string]any)
	if !ok || len(m) != 1 {
		return "", false
	}
	s, ok := m["error"].(string)
	return s, ok
}

func bytesValue(b []byte) any {
	if b == nil {
		return nil
	}
	return string(b)
}

// rawText is userdata_raw and friends as compared: upstream's empty
// string and absence both mean "none" (cloud-init treats them alike).
func rawText(v any) any {
	if s, ok := v.(string); ok && s == "" {
		return nil
	}
	return v
}

// normalize is v after a JSON round trip (numbers as float64, empty maps
// as nil).
func normalize(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return string(b)
	}
	if m, ok := out.(map[string]any); ok && len(m) == 0 {
		return nil
	}
	return out
}

// hostnameRule is upstream's DataSource.get_hostname(fqdn,
// metadata_only=True) applied to a local-hostname: an IPv4 address becomes
// ip-a-b-c-d, the first label is the hostname, the rest the domain.
func hostnameRule(lh string, fqdn bool) string {
	if lh == "" {
		return ""
	}
	var toks []string
	if ip := net.ParseIP(lh); ip != nil && ip.To4() != nil && !strings.Contains(lh, ":") {
		toks = []string{"ip-" + strings.ReplaceAll(lh, ".", "-")}
	} else {
		toks = strings.Split(lh, ".")
	}
	host := toks[0]
	if fqdn && len(toks) > 1 {
		if dom := strings.Join(toks[1:], "."); dom != "localdomain" {
			host += "." + dom
		}
	}
	return host
}

// renderUpstream is upstream's network_config as the netplan renderer
// writes it ("" for none).
func renderUpstream(t *testing.T, v any, macs netconfig.MACs) string {
	t.Helper()
	if m, ok := v.(map[string]any); v == nil || ok && len(m) == 0 {
		return "" // cloud-init takes an empty config as none
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := netconfig.Parse(b, macs)
	if err != nil {
		return "parse error: " + err.Error()
	}
	return render(cfg)
}

// renderData is d's network configuration as the netplan renderer writes
// it: a v1/v2 document parsed, a raw platform document (datasource.
// NetworkKey*, the *_metadata keys) converted the way the boot converts it.
func renderData(t *testing.T, d *datasource.Data, macs netconfig.MACs) string {
	t.Helper()
	nc := d.NetworkConfig
	if nc == nil {
		return ""
	}
	if _, ok := nc["version"]; ok {
		b, err := json.Marshal(nc)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := netconfig.Parse(b, macs)
		if err != nil {
			return "parse error: " + err.Error()
		}
		return render(cfg)
	}
	var cfg *netconfig.Config
	var err error
	switch {
	case nc[datasource.NetworkKeyOpenStack] != nil:
		b, _ := json.Marshal(nc[datasource.NetworkKeyOpenStack])
		cfg, err = netconfig.ParseNetworkData(b, macs)
	case nc[datasource.NetworkKeyENI] != nil:
		s, _ := nc[datasource.NetworkKeyENI].(string)
		cfg, err = netconfig.ParseENI([]byte(s))
	case nc[datasource.NetworkKeyEc2] != nil:
		m, _ := nc[datasource.NetworkKeyEc2].(map[string]any)
		cfg, err = netconfig.ConvertEC2(m, "", netconfig.EC2Options{}, macs)
	case nc[datasource.NetworkKeyVMware] != nil:
		m, _ := nc[datasource.NetworkKeyVMware].(map[string]any)
		cfg, err = netconfig.ConvertVMwareMap(m, macs)
	default:
		convs := map[string]func(map[string]any, netconfig.Links) (*netconfig.Config, error){
			"digitalocean_metadata": netconfig.ConvertDigitalOcean,
			"vultr_metadata":        netconfig.ConvertVultr,
			"upcloud_network":       netconfig.ConvertUpCloud,
			"azure_imds_network":    netconfig.ConvertAzure,
		}
		keys := make([]string, 0, len(nc))
		for k := range nc {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if conv, ok := convs[k]; ok {
				m, _ := nc[k].(map[string]any)
				cfg, err = conv(m, macs)
				break
			}
		}
		if cfg == nil && err == nil {
			return fmt.Sprintf("unconverted %v", keys)
		}
	}
	if err != nil {
		return "convert error: " + err.Error()
	}
	return render(cfg)
}

func render(cfg *netconfig.Config) string {
	out, err := netconfig.Render(netconfig.RendererNetplan, cfg)
	if err != nil {
		return "render error: " + err.Error()
	}
	var sb strings.Builder
	for _, p := range out.Paths() {
		fmt.Fprintf(&sb, "# %s\n%s", p, out.Files[p].Data)
	}
	return sb.String()
}
