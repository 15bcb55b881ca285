// Package azure is the instance metadata (IMDS) part of cloud-init's Azure
// datasource.
//
// Contract (DataSourceAzure, IMDS only):
//   - Only on Azure: DMI chassis_asset_tag ChassisAssetTag; elsewhere
//     ErrNotFound without a request.
//   - Needs the network: ErrNeedNetwork while Env.NetworkUp is false.
//   - GET <metadata_url>/metadata/instance?api-version=2021-08-01&extended=true
//     (default DefaultMetadataURL) with Metadata: true; when IMDS answers
//     400 (api-version not supported), again with api-version=2019-06-01.
//     A service that does not answer, or answers 404, is ErrNotFound; any
//     other failure (5xx, not JSON, no compute.vmId) is an error naming
//     the URL.
//   - Data: compute.vmId → instance-id, compute.osProfile.computerName →
//     local-hostname, compute.publicKeys[].keyData → public keys,
//     compute.userData base64-decoded → user-data (undecodable: logged and
//     skipped, as cloud-init), compute.location → region, compute.zone →
//     availability zone; the document (without userData) is meta-data's
//     `imds`; its `network` is handed on unconverted under NetworkKey for
//     netconfig.ConvertAzure.
//   - Not implemented: the OVF provisioning ISO (ovf-env.xml: customData,
//     admin user, password, ssh keys), reporting ready to the wireserver
//     (goal state, health), pre-provisioned VMs, the DMI system-uuid as
//     instance-id (cloud-init's choice; vmId is used), KVP telemetry.
//   - The whole Get is bounded by Env.Budget (default DefaultBudget).
package azure

import (
	"context"
	"fmt"
	"time"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/datasource"
)

// DefaultMetadataURL is IMDS's address.
const DefaultMetadataURL = "http://169.254.169.254"

// The instance document's API versions: the one wanted, and the oldest
// cloud-init falls back to.
const (
	APIVersion         = "2021-08-01"
	FallbackAPIVersion = "2019-06-01"
)

// DefaultBudget bounds one Get when Env.Budget is 0.
const DefaultBudget = 20 * time.Second

// ChassisAssetTag is the DMI chassis_asset_tag of every Azure VM.
const ChassisAssetTag = "7783-7084-3265-9085-8269-3286-77"

// NetworkKey is the key of Data.NetworkConfig holding IMDS's `network`
// value (decoded JSON with an `interface` list) for netconfig.ConvertAzure.
const NetworkKey = "azure_imds_network"

// Source is the Azure datasource (IMDS only). The zero value uses the
// defaults.
type Source struct {
	// URL overrides DefaultMetadataURL (configuration still wins).
	URL string
}

var _ datasource.Source = (*Source)(nil)

// Name implements datasource.Source.
func (*Source) Name() string { return "Azure" }

// Doc implements datasource.Documented.
func (*Source) Doc() datasource.Doc {
	return datasource.Doc{
		Network:       true,
		Reads:         "IMDS only: `metadata_url` (default " + DefaultMetadataURL + ") `/metadata/instance?api-version=" + APIVersion + "&extended=true` with `Metadata: true` (on 400: api-version=" + FallbackAPIVersion + "): compute.vmId, osProfile.computerName, publicKeys, userData (base64), location, zone. Not yet: OVF provisioning ISO (ovf-env.xml customData/user/password), wireserver report-ready, pre-provisioning, DMI system-uuid instance-id",
		NetworkConfig: "IMDS `network` handed on under `" + NetworkKey + "` for netconfig.ConvertAzure",
		Tests:         "golden trees served by httptest (extended document with user-data, api-version fallback, no network); Metadata header and query checked; absent, slow, 404, 500 and non-JSON services, not Azure; fuzzed document",
	}
}

// OnAzure reports the Azure chassis asset tag.
func OnAzure(d bootenv.DMI) bool { return d.ChassisAssetTag == ChassisAssetTag }

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
	if !OnAzure(env.DMI) {
		return nil, fmt.Errorf("azure: DMI chassis_asset_tag is not Azure's: %w", datasource.ErrNotFound)
	}
	if !env.NetworkUp {
		return nil, fmt.Errorf("azure: %w", datasource.ErrNeedNetwork)
	}
	log := env.Logger(s.Name())
	ctx, cancel := env.WithBudget(ctx, DefaultBudget)
	defer cancel()
	start := time.Now()
	c := newClient(env.HTTP)
	in, err := read(ctx, c, s.base(env))
	if err != nil {
		return nil, fmt.Errorf("azure: %w", err)
	}
	d, err := Build(&in)
	if err != nil {
		return nil, fmt.Errorf("azure: %s: %w", in.URL, err)
	}
	if in.BadUserData != nil {
		log.Warn("bad userData in IMDS; ignored", "error", in.BadUserData)
	}
	log.Info("found", "url", in.URL, "duration", time.Since(start))
	return d, nil
}
