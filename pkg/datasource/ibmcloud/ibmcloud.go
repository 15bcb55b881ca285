// Package ibmcloud is cloud-init's IBMCloud datasource (SoftLayer): a
// disk with an OpenStack-like openstack/latest tree, read straight from the
// block device through Env.Open (go-diskfs by default: no mount).
//
// Contract (DataSourceIBMCloud):
//   - Local: never touches the network; bounded by Env.Budget (default
//     DefaultBudget).
//   - Detection is get_ibm_platform's (Detect): only on Xen (Proc/xen
//     exists; cloudroot also accepts DMI sys_vendor "Xen"). Among
//     Env.Devices in path order, a filesystem labelled config-2 (any case)
//     with UUID 9796-932E is OS-Code/Live; else one labelled METADATA is
//     Template/Live/Metadata, or Template/Provisioning/Metadata during a
//     template's provisioning boot; with neither, a provisioning boot is
//     Template/Provisioning/No-Metadata. A provisioning boot is
//     /root/provisioningConfiguration.cfg in Env.Root without a
//     /root/swinstall.log older than PID 1 (Proc/1/environ).
//   - Not Xen, no disk, or a provisioning boot: ErrNotFound (cloud-init is
//     disabled while provisioning).
//   - Read from the disk: openstack/latest/meta_data.json (required),
//     user_data, vendor_data.json, network_data.json; an unreadable file
//     is absent. JSON that does not decode is an error (ErrBroken), as is a
//     disk that cannot be opened; both name the device.
//   - Data: name "IBMCloud", platform and cloud_name "ibmcloud",
//     subplatform "<platform> (<device>)", dsmode net. meta-data holds only
//     what cloud-init keeps: random_seed, public-keys, local-hostname,
//     instance-id (from public_keys, hostname, uuid; "iid-datasource" when
//     there is no uuid). random_seed must be base64 and stays that text,
//     as in the openstack package (cloud-init keeps the decoded bytes,
//     which instance-data shows base64-encoded). Vendor data is
//     convert_vendordata's (its `cloud-init` key).
//   - Network: on OS-Code/Live, network_data.json under
//     datasource.NetworkKeyOpenStack; on a template boot {config:
//     disabled} (the provisioning boot configured the network).
//   - The system UUID (SysHypervisorUUID, /sys/hypervisor/uuid) is kept
//     in ds.system-uuid; CheckInstanceID compares it with the current one
//     on later boots, as cloud-init's check_instance_id does.
package ibmcloud

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/cloudroot/cloudroot/pkg/datasource"
)

// DefaultProc is where the proc filesystem is mounted.
const DefaultProc = "/proc"

// DefaultBudget bounds one Get when Env.Budget is 0.
const DefaultBudget = 10 * time.Second

// Source is the IBMCloud datasource. The zero value uses the defaults.
type Source struct {
	// Proc is the proc filesystem's mount point (DefaultProc when empty):
	// <Proc>/xen tells Xen, <Proc>/1/environ the boot time.
	Proc string
	// HypervisorUUID is the file holding the Xen system UUID
	// (DefaultHypervisorUUID when empty).
	HypervisorUUID string
}

// DefaultHypervisorUUID is where Xen exposes the system UUID.
const DefaultHypervisorUUID = "/sys/hypervisor/uuid"

// systemUUID reads the Xen system UUID ("" when unreadable), as
// cloud-init's _read_system_uuid.
func (s *Source) systemUUID() string {
	p := s.HypervisorUUID
	if p == "" {
		p = DefaultHypervisorUUID
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

var _ datasource.InstanceChecker = (*Source)(nil)

// CheckInstanceID implements datasource.InstanceChecker as cloud-init's
// DataSourceIBMCloud does: the system UUID kept when the data was read
// must equal the current one (in template mode it is also the instance's;
// in OS-Code mode it is not, hence kept rather than compared with the
// instance-id).
func (s *Source) CheckInstanceID(_ datasource.Env, cached *datasource.Data) bool {
	kept, _ := cached.DS["system-uuid"].(string)
	return kept != "" && kept == s.systemUUID()
}

var _ datasource.Source = (*Source)(nil)

// Name implements datasource.Source.
func (*Source) Name() string { return "IBMCloud" }

// Doc implements datasource.Documented.
func (*Source) Doc() datasource.Doc {
	return datasource.Doc{
		Reads:         "on Xen, the volume labelled `config-2` with UUID `" + ConfigUUID + "` (OS-Code/Live) or `METADATA` (Template/Live/Metadata), read with go-diskfs: `openstack/latest/{meta_data.json,user_data,vendor_data.json,network_data.json}`; not during a template's provisioning boot (`" + ProvisioningConfig + "`, `" + ProvisioningLog + "`)",
		NetworkConfig: "OS-Code/Live: `network_data.json` handed on raw (`openstack_network_data`) for pkg/netconfig; template boots: disabled",
		Tests:         "golden disk trees per platform; real FAT32 (UUID 9796-932E, found by bootenv.Probe) and ISO9660 images written with go-diskfs; provisioning, not Xen, foreign config-2, duplicate labels, broken JSON, unopenable disk; fuzzed meta-data parser",
	}
}

func (s *Source) proc() string {
	if s.Proc != "" {
		return s.Proc
	}
	return DefaultProc
}

// Get implements datasource.Source.
func (s *Source) Get(ctx context.Context, env datasource.Env) (*datasource.Data, error) {
	log := env.Logger(s.Name())
	ctx, cancel := env.WithBudget(ctx, DefaultBudget)
	defer cancel()
	start := time.Now()
	xen := isXen(s.proc(), env.DMI)
	f := Facts{Xen: xen, Devices: env.Devices}
	if xen {
		f.Provisioning = isProvisioning(env.Root, s.proc(), log)
	}
	platform, dev, ok := Detect(f)
	switch {
	case !xen:
		return nil, fmt.Errorf("ibmcloud: not on Xen: %w", datasource.ErrNotFound)
	case !ok:
		return nil, fmt.Errorf("ibmcloud: no disk labelled %s, nor %s with UUID %s: %w", LabelMetadata, LabelConfig2, ConfigUUID, datasource.ErrNotFound)
	case platform.Provisioning():
		log.Info("cloud-init is disabled during provisioning", "platform", string(platform))
		return nil, fmt.Errorf("ibmcloud: disabled during provisioning (%s): %w", platform, datasource.ErrNotFound)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("ibmcloud: before %s: %w", dev.Path, err)
	}
	fail := func(err error) error {
		return fmt.Errorf("ibmcloud: reading IBM config disk (platform %s): %w", platform, err)
	}
	fsys, closeFS, err := env.Open(dev)
	if err != nil {
		return nil, fail(err)
	}
	defer closeFS()
	in := Input{Platform: platform, Source: dev.Path}
	if err := readFS(fsys, &in, log); err != nil {
		return nil, fail(err)
	}
	d, err := Build(in, log)
	if err != nil {
		return nil, fail(err)
	}
	if u := s.systemUUID(); u != "" {
		if d.DS == nil {
			d.DS = map[string]any{}
		}
		d.DS["system-uuid"] = u
	}
	log.Info("found", "platform", string(platform), "device", dev.Path, "duration", time.Since(start))
	return d, nil
}
