// Package none is cloud-init's None datasource: the fallback at the end of
// every datasource_list, used when no real datasource was found, so the
// boot still runs the modules on the system configuration.
//
// Contract (DataSourceNone):
//   - Always found; reads nothing but its own configuration,
//     `datasource: {None: {metadata: {...}, userdata_raw: "..."}}`.
//   - Data: instance-id "iid-datasource-none" (whatever metadata says, as
//     cloud-init's get_instance_id), meta-data from `metadata`, user-data
//     from `userdata_raw`; name "None", platform and cloud_name "none",
//     subplatform "config", mode "local" and "net" alike.
package none

import (
	"context"
	"fmt"

	"github.com/cloudroot/cloudroot/pkg/datasource"
)

// InstanceID is the instance-id of the None datasource.
const InstanceID = "iid-datasource-none"

// Source is the None datasource.
type Source struct{}

var (
	_ datasource.Source   = (*Source)(nil)
	_ datasource.Fallback = (*Source)(nil)
)

// Fallback implements datasource.Fallback.
func (*Source) Fallback() {}

// Name implements datasource.Source.
func (*Source) Name() string { return "None" }

// Doc implements datasource.Documented.
func (*Source) Doc() datasource.Doc {
	return datasource.Doc{
		Reads:         "nothing but `datasource.None.metadata` and `datasource.None.userdata_raw`; the fallback when every other source failed or was absent",
		NetworkConfig: "none (fallback configuration)",
		Tests:         "table tests (defaults, configured metadata and user-data, bad types); the QEMU boot with an unreachable IMDS falls back to it",
	}
}

// Get implements datasource.Source: always found.
func (*Source) Get(_ context.Context, env datasource.Env) (*datasource.Data, error) {
	cfg := env.SourceConfig("None")
	md := map[string]any{}
	if v, ok := cfg["metadata"]; ok && v != nil {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("none: datasource.None.metadata: want a mapping, got %T", v)
		}
		for k, e := range m {
			md[k] = e
		}
	}
	md["instance-id"] = InstanceID
	d := &datasource.Data{
		Name: "None", Platform: "none", CloudName: "none", Subplatform: "config", Mode: "local",
		MetaData: md,
	}
	switch v := cfg["userdata_raw"].(type) {
	case nil:
	case string:
		d.UserData = []byte(v)
	default:
		return nil, fmt.Errorf("none: datasource.None.userdata_raw: want a string, got %T", v)
	}
	return d, nil
}
