package oracle

// Pure parsing: Data from the instance and vnics documents and what the
// initramfs left.

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/netconfig"
)

// Input is what the service answered, and how the root was set up.
type Input struct {
	// URL is the version's root ("<base>/opc/v2/"); InstanceURL and
	// VnicsURL the documents' URLs (for errors).
	URL, InstanceURL, VnicsURL string
	// Instance is instance/; Vnics is vnics/ (nil: not fetched or none).
	Instance, Vnics []byte
	// ISCSIRoot: the initramfs configured the network (see ISCSIRoot);
	// Initramfs are its state files then.
	ISCSIRoot bool
	Initramfs []StateFile
	// ConfigureSecondary is `configure_secondary_nics`.
	ConfigureSecondary bool
}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

// at names the document's URL in errors when it is known.
func at(url, doc string) string {
	if url == "" {
		return doc
	}
	return url
}

// Build turns the answers into Data as cloud-init's _get_data does, with
// the network description its network_config property works from.
func Build(in Input) (*datasource.Data, error) {
	where := at(in.InstanceURL, "instance")
	var inst map[string]any
	if err := json.Unmarshal(in.Instance, &inst); err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	if inst == nil {
		return nil, fmt.Errorf("%s: not a JSON object", where)
	}
	id := str(inst, "id")
	if id == "" {
		return nil, fmt.Errorf("%s: no id", where)
	}
	az := str(inst, "ociAdName")
	md := map[string]any{
		"instance-id":       id,
		"local-hostname":    str(inst, "hostname"),
		"name":              str(inst, "displayName"),
		"availability-zone": az,
		"launch-index":      0,
	}
	d := &datasource.Data{
		Name:             "Oracle",
		Platform:         "oracle",
		CloudName:        "oracle",
		Subplatform:      "metadata (" + in.URL + ")",
		Mode:             "net",
		MetaData:         md,
		AvailabilityZone: az,
		// DataSourceOracle.network_config_sources: its VNICs before the
		// initramfs's configuration (the iSCSI root's klibc state is
		// part of what the source converts).
		NetworkConfigSources: []string{"cmdline", "system_cfg", "ds", "initramfs"},
	}
	// ds keeps the instance document without its user-data.
	dsInst := make(map[string]any, len(inst))
	for k, v := range inst {
		dsInst[k] = v
	}
	d.DS = map[string]any{"instance_data": dsInst}
	if m, ok := inst["metadata"].(map[string]any); ok {
		if _, ok := m["user_data"]; ok {
			mc := make(map[string]any, len(m))
			for k, v := range m {
				if k != "user_data" {
					mc[k] = v
				}
			}
			dsInst["metadata"] = mc
		}
		if ud := str(m, "user_data"); ud != "" {
			b, err := datasource.DecodeBase64(ud)
			if err != nil {
				return nil, fmt.Errorf("%s: metadata.user_data: %w", where, err)
			}
			d.UserData = b
		}
		// cloud-init sets public_keys whenever there is a metadata object.
		md["public_keys"] = m["ssh_authorized_keys"]
		d.PublicKeys = datasource.NormalizePubKeys(m["ssh_authorized_keys"])
	}
	var vnics any
	if len(strings.TrimSpace(string(in.Vnics))) > 0 {
		if err := json.Unmarshal(in.Vnics, &vnics); err != nil {
			return nil, fmt.Errorf("%s: %w", at(in.VnicsURL, "vnics"), err)
		}
		d.DS["vnics_data"] = vnics
	}
	if vnics != nil || in.ISCSIRoot {
		d.NetworkConfig = map[string]any{NetworkKey: Network(vnics, in)}
	}
	return d, nil
}

// Network is the document netconfig.ConvertOracle converts: the vnics
// (when fetched), whether the root is on iSCSI, configure_secondary_nics
// and, on an iSCSI root, the initramfs's state files.
func Network(vnics any, in Input) map[string]any {
	n := map[string]any{
		netconfig.OracleKeyISCSIRoot: in.ISCSIRoot,
		netconfig.OracleKeySecondary: in.ConfigureSecondary,
	}
	if vnics != nil {
		n[netconfig.OracleKeyVNICs] = vnics
	}
	if in.ISCSIRoot && len(in.Initramfs) > 0 {
		files := make([]any, len(in.Initramfs))
		for i, f := range in.Initramfs {
			files[i] = map[string]any{"path": f.Path, "content": f.Content}
		}
		n[netconfig.OracleKeyInitramfs] = files
	}
	return n
}
