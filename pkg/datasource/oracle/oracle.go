// Package oracle is cloud-init's Oracle datasource: the Oracle Cloud
// Infrastructure (OCI) instance metadata service.
//
// Contract (DataSourceOracle):
//   - Only on OCI: DMI chassis_asset_tag "OracleCloud.com"; elsewhere
//     ErrNotFound without a request.
//   - Needs the network: ErrNeedNetwork while Env.NetworkUp is false.
//   - <metadata_url>/opc/v2/instance/ with Authorization: Bearer Oracle
//     (default DefaultMetadataURL); when that fails, <metadata_url>/opc/v1/
//     instance/ without the header. A service that does not answer, or
//     answers 404 for both, is ErrNotFound; any other failure is an error
//     naming the URL. The document must be a JSON object with an id.
//   - The same version's vnics/ (404 or failure: none, logged) is handed on
//     unconverted under NetworkKey for netconfig.ConvertOracle (the
//     datasource's `configure_secondary_nics` decides its second argument).
//   - Data: id → instance-id, hostname → local-hostname, displayName →
//     name, availabilityDomain (else ociAdName) → availability zone,
//     canonicalRegionName (else region) → region, metadata.user_data
//     base64-decoded → user-data, metadata.ssh_authorized_keys → public
//     keys. The instance document (without user_data) and the vnics go
//     to ds (instance_data, vnics_data).
//   - Not implemented: the iSCSI-root / initramfs network config detection
//     and the IPv6-only metadata endpoint ([fd00:c1::a9fe:a9fe]).
//   - The whole Get is bounded by Env.Budget (default DefaultBudget).
package oracle

import (
	"context"
	"fmt"
	"time"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/fetch"
)

// DefaultMetadataURL is the metadata service (paths opc/v2/..., opc/v1/...).
const DefaultMetadataURL = "http://169.254.169.254"

// DefaultBudget bounds one Get when Env.Budget is 0.
const DefaultBudget = 20 * time.Second

// ChassisAssetTag is the DMI chassis_asset_tag of every OCI machine.
const ChassisAssetTag = "OracleCloud.com"

// NetworkKey is the key of Data.NetworkConfig holding the vnics document
// (decoded JSON: a list of VNICs, the primary first) for
// netconfig.ConvertOracle.
const NetworkKey = "oracle_vnics"

// Source is the Oracle datasource. The zero value uses the defaults.
type Source struct {
	// URL overrides DefaultMetadataURL (configuration still wins).
	URL string
}

var _ datasource.Source = (*Source)(nil)

// Name implements datasource.Source.
func (*Source) Name() string { return "Oracle" }

// Doc implements datasource.Documented.
func (*Source) Doc() datasource.Doc {
	return datasource.Doc{
		Network:       true,
		Reads:         "`metadata_url` (default " + DefaultMetadataURL + ") `/opc/v2/instance/` with `Authorization: Bearer Oracle`, else `/opc/v1/instance/` (id, hostname, displayName, availabilityDomain, canonicalRegionName, metadata.user_data base64, metadata.ssh_authorized_keys); the same version's `vnics/`. Not yet: iSCSI-root detection, IPv6 metadata endpoint",
		NetworkConfig: "`vnics/` handed on under `" + NetworkKey + "` for netconfig.ConvertOracle",
		Tests:         "golden trees served by httptest (v2 with the Bearer header checked, v1 fallback, no user-data or vnics); absent, slow, 404 and 500 services, not OCI; fuzzed instance document",
	}
}

// OnOracle is cloud-init's _is_platform_viable.
func OnOracle(d bootenv.DMI) bool { return d.ChassisAssetTag == ChassisAssetTag }

func (s *Source) base(env datasource.Env) string {
	if u := env.MetadataURLs(s.Name()); len(u) > 0 {
		return u[0]
	}
	if s.URL != "" {
		return s.URL
	}
	return DefaultMetadataURL
}

// Get implements datasource.Source.
func (s *Source) Get(ctx context.Context, env datasource.Env) (*datasource.Data, error) {
	if !OnOracle(env.DMI) {
		return nil, fmt.Errorf("oracle: DMI chassis_asset_tag is not %s: %w", ChassisAssetTag, datasource.ErrNotFound)
	}
	if !env.NetworkUp {
		return nil, fmt.Errorf("oracle: %w", datasource.ErrNeedNetwork)
	}
	log := env.Logger(s.Name())
	ctx, cancel := env.WithBudget(ctx, DefaultBudget)
	defer cancel()
	start := time.Now()
	base := s.base(env)
	c := &fetch.Client{HTTP: env.HTTP}
	in, err := read(ctx, c, base, log)
	if err != nil {
		return nil, fmt.Errorf("oracle: %w", err)
	}
	d, err := Build(in)
	if err != nil {
		return nil, fmt.Errorf("oracle: %s: %w", in.URL, err)
	}
	log.Info("found", "url", in.URL, "duration", time.Since(start))
	return d, nil
}
