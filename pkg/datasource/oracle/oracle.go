// Package oracle is cloud-init's Oracle datasource: the Oracle Cloud
// Infrastructure (OCI) instance metadata service.
//
// Contract (DataSourceOracle):
//   - Only on OCI: DMI chassis_asset_tag "OracleCloud.com"; elsewhere
//     ErrNotFound without a request.
//   - iSCSI root (cloud-init's _is_iscsi_root, see ISCSIRoot): klibc
//     ipconfig state files (net-*.conf, net6-*.conf) in Source.RunDir
//     (default DefaultRunDir), or ip=/ip6= (not off/none) on the kernel
//     command line. The initramfs has then configured the network the root
//     lives on, and cloud-init brings up no ephemeral DHCP network: Get
//     treats the network as up and reads the service even while
//     Env.NetworkUp is false. Only if nothing answers within the budget
//     while Env.NetworkUp is false does it return ErrNeedNetwork (the
//     initramfs network is evidently not there), so a caller that did not
//     bring it up can still do so and ask again.
//   - Otherwise it needs the network: ErrNeedNetwork while Env.NetworkUp
//     is false.
//   - Requests go through pkg/imds, built by Env.IMDS (metadata_url(s),
//     max_wait, timeout, retries; one budget, default DefaultBudget, for
//     the whole Get). The base URLs are DefaultMetadataURL then
//     DefaultMetadataURLv6 (Source.URL replaces both, configuration wins).
//     <base>/opc/v2/instance/ with Authorization: Bearer Oracle; when that
//     fails, <base>/opc/v1/instance/ without the header. A service that
//     does not answer, or answers 404 for both, is ErrNotFound; any other
//     failure, or a document that is not a JSON object with an id, is an
//     error naming the URL. The base that answered serves the rest.
//   - vnics/ of the same version and base is fetched when the root is not
//     on iSCSI or `configure_secondary_nics` is true (cloud-init's
//     fetch_vnics_data), and on an iSCSI root known from ip= alone (no
//     state files: the primary must come from the metadata); 404 or
//     failure: none, logged.
//   - Network config is handed on under NetworkKey for
//     netconfig.ConvertOracle (cloud-init's network_config property):
//     the vnics, iscsi_root, configure_secondary_nics and, on an iSCSI
//     root, the initramfs's state files. On an iSCSI root the primary VNIC
//     is left as the initramfs configured it and only secondary VNICs are
//     added (with configure_secondary_nics); otherwise every VNIC, the
//     primary by DHCP. Without vnics on a root not on iSCSI: none (the
//     fallback).
//   - Data: id → instance-id, hostname → local-hostname, displayName →
//     name, ociAdName → availability-zone (also the availability zone),
//     launch-index 0, metadata.ssh_authorized_keys → public_keys (and the
//     public keys), metadata.user_data base64-decoded → user-data. The
//     instance document (without user_data) and the vnics go to ds
//     (instance_data, vnics_data). No region, as in cloud-init (its
//     meta-data has none).
package oracle

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/imds"
)

// The metadata service (paths opc/v2/..., opc/v1/...) on IPv4 and IPv6.
const (
	DefaultMetadataURL   = imds.DefaultBaseURL
	DefaultMetadataURLv6 = "http://[fd00:c1::a9fe:a9fe]"
)

// DefaultBudget bounds one Get when neither Env.Budget nor max_wait does.
const DefaultBudget = 20 * time.Second

// ChassisAssetTag is the DMI chassis_asset_tag of every OCI machine.
const ChassisAssetTag = "OracleCloud.com"

// NetworkKey is the key of Data.NetworkConfig holding the VNIC document
// for netconfig.ConvertOracle (the netconfig.OracleKey* object).
const NetworkKey = "oracle_vnics"

// DefaultRunDir holds the initramfs's klibc state files; StateGlobs match
// them there, read in this order.
const DefaultRunDir = "/run"

// StateGlobs are klibc ipconfig's state file names (IPv4, then IPv6).
func StateGlobs() []string { return []string{"net-*.conf", "net6-*.conf"} }

// maxStateFile bounds one state file (they are a few hundred bytes).
const maxStateFile = 64 << 10

// Source is the Oracle datasource. The zero value uses the defaults.
type Source struct {
	// URL replaces the default base URLs (configuration still wins).
	URL string
	// RunDir is where the initramfs's state files are (DefaultRunDir when
	// empty).
	RunDir string
}

var _ datasource.Source = (*Source)(nil)

// Name implements datasource.Source.
func (*Source) Name() string { return "Oracle" }

// Doc implements datasource.Documented.
func (*Source) Doc() datasource.Doc {
	return datasource.Doc{
		Network: true,
		Reads: "`metadata_url` (default " + DefaultMetadataURL + ", then " + DefaultMetadataURLv6 +
			") `/opc/v2/instance/` with `Authorization: Bearer Oracle`, else `/opc/v1/instance/` (id, hostname, displayName, ociAdName, metadata.user_data base64, metadata.ssh_authorized_keys); the same version's `vnics/` unless the root is on iSCSI without `configure_secondary_nics`. " +
			"On an iSCSI root (klibc `/run/net-*.conf` state, or `ip=` on the kernel command line) the initramfs network is used as is: no ephemeral network is asked for",
		NetworkConfig: "`vnics/` handed on under `" + NetworkKey + "` for netconfig.ConvertOracle: on an iSCSI root the initramfs configuration plus, with `configure_secondary_nics`, the secondary VNICs; otherwise every VNIC (primary by DHCP, others static, MTU 9000)",
		Tests: "golden trees served by httptest on 127.0.0.1 (v2 with the Bearer header checked, v1 fallback, no user-data; iSCSI and non-iSCSI roots with and without configure_secondary_nics, converted with netconfig.ConvertOracle); " +
			"absent (network up or iSCSI root), slow, 404, 500 and broken-JSON services, not OCI; fuzzed instance and vnics documents",
	}
}

// OnOracle is cloud-init's _is_platform_viable.
func OnOracle(d bootenv.DMI) bool { return d.ChassisAssetTag == ChassisAssetTag }

// StateFile is one klibc ipconfig state file: its path as the booted
// system knows it (/run/net-<iface>.conf) and its content.
type StateFile struct {
	Path    string
	Content string
}

// ISCSIRoot is cloud-init's DataSourceOracle._is_iscsi_root, widened for
// an initramfs that is not klibc's: the root is taken to be on iSCSI (the
// initramfs configured the network) when klibc ipconfig state files exist
// in runDir, or when ip= or ip6= other than off/none is on the kernel
// command line. It returns the state files (sorted, net- before net6-);
// unreadable ones are reported in err and left out.
func ISCSIRoot(runDir string, cl bootenv.Cmdline) (bool, []StateFile, error) {
	if runDir == "" {
		runDir = DefaultRunDir
	}
	var files []StateFile
	var errs []error
	for _, g := range StateGlobs() {
		ms, err := filepath.Glob(filepath.Join(runDir, g))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		sort.Strings(ms)
		for _, m := range ms {
			b, err := readSmall(m)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			files = append(files, StateFile{Path: path.Join(DefaultRunDir, filepath.Base(m)), Content: string(b)})
		}
	}
	iscsi := len(files) > 0
	for _, p := range cl.Params() {
		if p.HasValue && (p.Key == "ip" || p.Key == "ip6") && p.Value != "off" && p.Value != "none" {
			iscsi = true
		}
	}
	return iscsi, files, errors.Join(errs...)
}

func readSmall(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxStateFile+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if len(b) > maxStateFile {
		return nil, fmt.Errorf("%s: larger than %d bytes", name, maxStateFile)
	}
	return b, nil
}

// secondaryNICs is `configure_secondary_nics` (default false).
func secondaryNICs(cfg map[string]any) (bool, error) {
	switch v := cfg["configure_secondary_nics"].(type) {
	case nil:
		return false, nil
	case bool:
		return v, nil
	case string:
		b, err := strconv.ParseBool(strings.ToLower(v))
		if err != nil {
			return false, fmt.Errorf("configure_secondary_nics: %q is not a boolean", v)
		}
		return b, nil
	default:
		return false, fmt.Errorf("configure_secondary_nics: %v (%T) is not a boolean", v, v)
	}
}

// Get implements datasource.Source.
func (s *Source) Get(ctx context.Context, env datasource.Env) (*datasource.Data, error) {
	if !OnOracle(env.DMI) {
		return nil, fmt.Errorf("oracle: DMI chassis_asset_tag is not %s: %w", ChassisAssetTag, datasource.ErrNotFound)
	}
	log := env.Logger(s.Name())
	iscsi, files, ferr := ISCSIRoot(s.RunDir, env.Cmdline)
	if ferr != nil {
		log.Warn("initramfs network state not read", "error", ferr)
	}
	// Without the initramfs network's state files (ip= given but nothing
	// up yet) there is nothing to read over: ask for the network, which
	// the caller brings up from ip= (leaving the state files).
	if !env.NetworkUp && (!iscsi || len(files) == 0) {
		return nil, fmt.Errorf("oracle: %w", datasource.ErrNeedNetwork)
	}
	secondary, err := secondaryNICs(env.SourceConfig(s.Name()))
	if err != nil {
		return nil, fmt.Errorf("oracle: %w", err)
	}
	bases := []string{DefaultMetadataURL, DefaultMetadataURLv6}
	if s.URL != "" {
		bases = []string{s.URL}
	}
	c, err := env.IMDS(s.Name(), datasource.IMDSDefaults{BaseURLs: bases, Budget: DefaultBudget})
	if err != nil {
		return nil, fmt.Errorf("oracle: %w", err)
	}
	ctx, cancel := c.WithBudget(ctx)
	defer cancel()
	start := time.Now()
	// cloud-init's fetch_vnics_data; also without initramfs state to keep
	// the primary from (ip= alone), as cloud-init would then not see an
	// iSCSI root.
	in, err := read(ctx, c, !iscsi || secondary || len(files) == 0, log)
	if err != nil {
		if iscsi && !env.NetworkUp && errors.Is(err, datasource.ErrNotFound) {
			return nil, fmt.Errorf("oracle: iSCSI root, but nothing answered over the initramfs network (%w): %w", datasource.ErrNeedNetwork, err)
		}
		return nil, fmt.Errorf("oracle: %w", err)
	}
	in.ISCSIRoot, in.ConfigureSecondary = iscsi, secondary
	if iscsi {
		in.Initramfs = files
	}
	d, err := Build(in)
	if err != nil {
		return nil, fmt.Errorf("oracle: %w", err)
	}
	log.Info("found", "url", in.URL, "iscsi_root", iscsi, "duration", time.Since(start))
	return d, nil
}
