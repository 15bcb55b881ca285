package stages

import (
	"fmt"
	"io"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/distro"
	"github.com/cloudroot/cloudroot/pkg/internal/jsonstream"
	"github.com/cloudroot/cloudroot/pkg/secret"
	"github.com/cloudroot/cloudroot/pkg/state"
	"github.com/cloudroot/cloudroot/pkg/target"
)

// Redacted is the placeholder cloud-init puts in instance-data.json.
const Redacted = secret.Redacted

// SensitiveKeys are cloud-init's sensitive_metadata_keys, listed in
// instance-data's sensitive_keys; secret.Key adds cloudroot's own.
var SensitiveKeys = secret.InstanceDataKeys

// SysInfo is instance-data's sys_info and the v1 keys derived from the kernel.
type SysInfo struct {
	KernelRelease string // uname -r
	Machine       string // uname -m
	System        string // uname -s
	Version       string // uname -v
	Hostname      string
}

// InstanceData builds cloud-init's instance-data dict (sensitive version).
func InstanceData(d *datasource.Data, dist distro.Info, merged, system map[string]any, si SysInfo) map[string]any {
	md := d.MetaData
	keys := publicKeys(md["public-keys"])
	if len(d.PublicKeys) > 0 {
		keys = publicKeys(d.PublicKeys)
	}
	// The source's own availability_zone and region (cloud-init's
	// DataSource properties: derived per cloud, e.g. an EC2-compatible
	// region from its zone), null when it has none.
	orNil := func(s string) any {
		if s == "" {
			return nil
		}
		return s
	}
	az, region := orNil(d.AvailabilityZone), orNil(d.Region)
	platform := d.Platform
	cloudName := d.CloudName
	if cloudName == "" {
		cloudName = "unknown"
	}
	v1 := map[string]any{
		"_beta_keys":        []any{"subplatform"},
		"availability_zone": az,
		"availability-zone": az,
		"cloud_id":          d.CloudID(),
		"cloud_name":        cloudName,
		"cloud-name":        cloudName,
		"distro":            dist.ID,
		"distro_release":    "",
		"distro_version":    dist.VersionID,
		"instance_id":       d.InstanceID(),
		"instance-id":       d.InstanceID(),
		"kernel_release":    si.KernelRelease,
		"local_hostname":    d.LocalHostname(),
		"local-hostname":    d.LocalHostname(),
		"machine":           si.Machine,
		"platform":          platform,
		"public_ssh_keys":   keys,
		"python_version":    "",
		"region":            region,
		"subplatform":       d.Subplatform,
		"system_platform":   fmt.Sprintf("%s-%s-%s", si.System, si.KernelRelease, si.Machine),
		"variant":           dist.ID,
	}
	if v1["local_hostname"] == "" {
		v1["local_hostname"] = si.Hostname
		v1["local-hostname"] = si.Hostname
	}
	ds := map[string]any{
		"_doc":      "EXPERIMENTAL: The structure and format of content scoped under the 'ds' key may change in subsequent releases of cloud-init.",
		"meta_data": md,
	}
	if len(d.VendorData) > 0 {
		ds["vendor_data"] = string(d.VendorData)
	}
	return map[string]any{
		"_beta_keys":          []any{"subplatform"},
		"base64_encoded_keys": []any{},
		"ds":                  ds,
		"merged_cfg":          merged,
		"merged_system_cfg":   system,
		"sensitive_keys":      toAny(SensitiveKeys),
		"sys_info": map[string]any{
			"dist":     []any{dist.ID, dist.VersionID, ""},
			"platform": fmt.Sprintf("%s-%s-%s", si.System, si.KernelRelease, si.Machine),
			"python":   "",
			"release":  si.KernelRelease,
			"system":   si.System,
			"uname":    []any{si.System, si.Hostname, si.KernelRelease, si.Version, si.Machine, si.Machine},
			"variant":  dist.ID,
		},
		"system_info": map[string]any{"distro": dist.ID, "variant": dist.ID},
		"v1":          v1,
	}
}

// Redact returns a copy of an instance-data dict with every sensitive key
// (secret.Key: by name at any depth, or by slash path) replaced by
// Redacted.
func Redact(data map[string]any) map[string]any {
	return secret.Map(data)
}

// WriteInstanceData writes instance-data-sensitive.json (0600),
// instance-data.json (0644, redacted) and combined-cloud-config.json (0600),
// indented as json.MarshalIndent does, each encoded straight into its file:
// the merged config may carry large write_files content, which would
// otherwise be held encoded twice more (docs/security.md, "Memory ceiling").
func WriteInstanceData(run *target.Root, data map[string]any, combined map[string]any) error {
	for _, f := range []struct {
		p    string
		v    map[string]any
		mode uint32
	}{
		{state.InstanceDataSens, data, 0o600},
		{state.InstanceDataFile, Redact(data), 0o644},
		{state.CombinedConfig, combined, 0o600},
	} {
		err := run.WriteFileWith(f.p, target.WriteOpts{Perm: fsMode(f.mode), UID: -1, GID: -1}, func(w io.Writer) error {
			if err := jsonstream.Encode(w, f.v, " "); err != nil {
				return err
			}
			_, err := io.WriteString(w, "\n")
			return err
		})
		if err != nil {
			return fmt.Errorf("instance-data: %w", err)
		}
	}
	return nil
}

func publicKeys(v any) []any {
	out := []any{}
	for _, k := range datasource.NormalizePubKeys(v) {
		out = append(out, k)
	}
	return out
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}
