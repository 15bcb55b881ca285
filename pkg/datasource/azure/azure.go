// Package azure is cloud-init's Azure datasource: the provisioning media
// (ovf-env.xml), the instance metadata service (IMDS) and, after
// provisioning, the wireserver's report-ready handshake.
//
// Contract (DataSourceAzure):
//   - Only on Azure: DMI chassis_asset_tag ChassisAssetTag, or an
//     ovf-env.xml in the seed directory SeedDir of the target root;
//     elsewhere ErrNotFound without reading anything.
//   - Needs the network: ErrNeedNetwork while Env.NetworkUp is false
//     (cloud-init always brings up ephemeral DHCP on Azure, for IMDS and
//     the wireserver).
//   - Provisioning document, first found wins: SeedDir/ovf-env.xml, then
//     the devices of Candidates (sr0, ISO9660/UDF volumes, CD-ROMs whose
//     filesystem was not recognised: Azure's provisioning DVD is UDF,
//     read by pkg/media/udf; ISO9660 through
//     pkg/media; Env.OpenFS when set), then the agent directory
//     `data_dir` (DefaultDataDir, where an earlier boot kept a copy).
//     ovf-env.xml is parsed by ParseOVFEnv; a document without an Azure
//     ProvisioningSection is skipped, a broken one is an error naming the
//     file and line.
//   - IMDS: GET <metadata_url>/metadata/instance?api-version=2021-08-01&extended=true
//     (default DefaultMetadataURL) with Metadata: true through Env.IMDS
//     (5xx/429/transport errors retried within the budget); on 400 again
//     with api-version=2019-06-01. Without a provisioning document, an
//     IMDS that does not answer or answers 404 is ErrNotFound and any
//     other failure an error naming the URL; with one, IMDS failures are
//     logged and the document alone is used, as cloud-init.
//   - Data (Build): instance-id the DMI system uuid lower-cased (an
//     earlier instance-id that is its byte-swapped form is kept), else
//     compute.vmId; local-hostname HostName, then IMDS computerName;
//     user-data CustomData, else IMDS compute.userData (base64); public
//     keys from IMDS when all are OpenSSH keys, else the document's
//     PublicKey values; Config is read_azure_ovf's (default user with the
//     password hashed, ssh_pwauth, _pubkeys, the platform settings) plus
//     BUILTIN_CLOUD_EPHEMERAL_DISK_CONFIG when the resource disk exists
//     (CloudDisks on Source.Sys); meta-data `imds` is the document without
//     userData; region compute.location, availability zone
//     compute.platformFaultDomain; IMDS `network` is handed on under
//     NetworkKey (unless `apply_network_config: false`); Files holds
//     <data_dir>/ovf-env.xml with the password redacted (or the minimal
//     document built from IMDS), to be written 0600 in a 0700 directory.
//   - Pre-provisioned (PPS) VMs are refused with ErrPreprovisioned.
//   - Get has no side effect on the platform: ReportReady (wireserver goal
//     state and health report) is for the caller to invoke after a new
//     instance is provisioned; ReportFailure when provisioning failed.
//   - The whole Get is bounded by Env.Budget (default DefaultBudget).
package azure

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"strings"
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

// IMDSTimeout bounds one IMDS request.
const IMDSTimeout = 5 * time.Second

// ChassisAssetTag is the DMI chassis_asset_tag of every Azure VM.
const ChassisAssetTag = "7783-7084-3265-9085-8269-3286-77"

// NetworkKey is the key of Data.NetworkConfig holding IMDS's `network`
// value (decoded JSON with an `interface` list) for netconfig.ConvertAzure.
const NetworkKey = "azure_imds_network"

// Directories in the target root: the seed directory cloud-init reads
// first, and the agent directory (`data_dir`) the document is kept in.
const (
	SeedDir        = "/var/lib/cloud/seed/azure"
	DefaultDataDir = "/var/lib/waagent"
)

// Source is the Azure datasource. The zero value uses the defaults.
type Source struct {
	// URL overrides DefaultMetadataURL (configuration still wins).
	URL string
	// Wireserver overrides the wireserver address of the DHCP lease
	// (the `wireserver_address` configuration still wins); see
	// WireserverURL.
	Wireserver string
	// RetryDelay is the pause between wireserver attempts
	// (DefaultWireserverRetry).
	RetryDelay time.Duration
	// Sys is sysfs, read for the resource disk and the platform's entropy;
	// nil means os.DirFS(bootenv.DefaultSysRoot).
	Sys fs.FS
	// Dev is where Prepare makes the disk links ("" means "/dev").
	Dev string
	// Hash hashes UserPassword; nil means target.HashPassword.
	Hash func(string) (string, error)
}

var _ datasource.Source = (*Source)(nil)

// Name implements datasource.Source.
func (*Source) Name() string { return "Azure" }

// Doc implements datasource.Documented.
func (*Source) Doc() datasource.Doc {
	return datasource.Doc{
		Network:       true,
		Reads:         "provisioning `ovf-env.xml` (seed `" + SeedDir + "`, then sr0 and ISO9660/UDF volumes read without mounting, then `" + DefaultDataDir + "`): UserName, UserPassword (hashed), HostName, CustomData (user-data), DisableSshPasswordAuthentication, SSH keys, platform settings; IMDS `metadata_url` (default " + DefaultMetadataURL + ") `/metadata/instance?api-version=" + APIVersion + "&extended=true` with `Metadata: true` (on 400: api-version=" + FallbackAPIVersion + "): vmId, osProfile, publicKeys, userData, location, platformFaultDomain; DMI system uuid as instance-id; resource disk from sysfs (ephemeral0 disk_setup/fs_setup); wireserver report-ready via ReportReady. Not: pre-provisioned VMs, certificate-fingerprint SSH keys, KVP telemetry",
		NetworkConfig: "IMDS `network` handed on under `" + NetworkKey + "` for netconfig.ConvertAzure (`apply_network_config: false`: fallback)",
		Tests:         "golden cases (IMDS only, OVF media only, both, seed dir, api-version fallback); real UDF image; fake wireserver (goal state, health body, retries, failures; under the boot's timing policy a busy wireserver reported to and a hanging one ended at the deadline); resource disk from a fake sysfs; absent, slow, 404, 500, non-JSON IMDS, broken XML with file and line; fuzzed ovf-env.xml, IMDS document and UDF reader; QEMU boot with the chassis tag, an ISO holding ovf-env.xml and the IMDS/wireserver simulator (TestAzure)",
	}
}

// OnAzure reports the Azure chassis asset tag.
func OnAzure(d bootenv.DMI) bool { return d.ChassisAssetTag == ChassisAssetTag }

func (s *Source) sys() fs.FS {
	if s.Sys != nil {
		return s.Sys
	}
	return os.DirFS(bootenv.DefaultSysRoot)
}

// Get implements datasource.Source.
func (s *Source) Get(ctx context.Context, env datasource.Env) (*datasource.Data, error) {
	seed := strings.TrimPrefix(SeedDir, "/") + "/" + OVFFile
	if !OnAzure(env.DMI) && !(env.Root != nil && fileExists(env.Root, seed)) {
		return nil, fmt.Errorf("azure: DMI chassis_asset_tag is not Azure's and there is no %s/%s: %w", SeedDir, OVFFile, datasource.ErrNotFound)
	}
	if !env.NetworkUp {
		return nil, fmt.Errorf("azure: %w", datasource.ErrNeedNetwork)
	}
	log := env.Logger(s.Name())
	ctx, cancel := env.WithBudget(ctx, DefaultBudget)
	defer cancel()
	start := time.Now()
	cfg := env.SourceConfig(s.Name())
	dataDir, _ := cfg["data_dir"].(string)
	if dataDir == "" {
		dataDir = DefaultDataDir
	}

	in := Input{DataDir: dataDir, SystemUUID: env.DMI.ProductUUID, Hash: s.Hash}
	var err error
	if err = s.findOVF(ctx, env, &in); err != nil {
		return nil, fmt.Errorf("azure: %w", err)
	}
	if in.OVF == nil {
		log.Warn("no provisioning media; falling back to IMDS, which has no admin password or custom data")
	}
	in.URL, in.Document, err = s.readIMDS(ctx, env)
	if err == nil {
		if _, perr := ParseIMDS(in.Document); perr != nil {
			err = fmt.Errorf("%s: %w", in.URL, perr)
		}
	}
	if err != nil {
		if in.OVF == nil {
			return nil, fmt.Errorf("azure: %w", err)
		}
		log.Warn("ignoring IMDS metadata", "error", err)
		in.URL, in.Document = "", nil
	}

	if env.Root != nil {
		if b, err := datasource.ReadFile(env.Root, "var/lib/cloud/data/instance-id"); err == nil {
			in.PreviousIID = strings.TrimSpace(string(b))
		}
	}
	if res, err := ResourceDisk(s.sys()); err != nil {
		log.Warn("looking for the resource disk", "error", err)
	} else if res != "" {
		log.Info("resource disk found; adding the ephemeral disk configuration", "device", res)
		in.ResourceDisk = true
	}
	if a, ok := cfg["disk_aliases"].(map[string]any); ok {
		in.ResourceDiskAlias, _ = a["ephemeral0"].(string)
	}
	if b, err := fs.ReadFile(s.sys(), "firmware/acpi/tables/OEM0"); err == nil && len(b) <= 1<<16 {
		in.RandomSeed = b
	}
	if v, ok := cfg["apply_network_config"].(bool); ok && !v {
		in.NoNetworkConfig = true
	}

	d, err := Build(&in)
	if err != nil {
		where := in.URL
		if in.OVF != nil {
			where = in.OVFSource
		}
		return nil, fmt.Errorf("azure: %s: %w", where, err)
	}
	if in.BadUserData != nil {
		log.Warn("bad userData in IMDS; ignored", "error", in.BadUserData)
	}
	for _, w := range in.Warnings {
		log.Warn(w)
	}
	log.Info("found", "path", in.OVFSource, "url", in.URL, "duration", time.Since(start))
	return d, nil
}

func fileExists(fsys fs.FS, name string) bool {
	fi, err := fs.Stat(fsys, name)
	return err == nil && !fi.IsDir()
}
