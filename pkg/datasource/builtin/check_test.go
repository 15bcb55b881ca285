package builtin

import (
	"slices"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/datasource/azure"
	"github.com/cloudroot/cloudroot/pkg/datasource/gce"
	"github.com/cloudroot/cloudroot/pkg/datasource/hetzner"
	"github.com/cloudroot/cloudroot/pkg/datasource/rbxcloud"
	"github.com/cloudroot/cloudroot/pkg/datasource/scaleway"
	"github.com/cloudroot/cloudroot/pkg/datasource/smartos"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/datasource"
)

// TestInstanceCheckers: the sources cloud-init gives a check_instance_id
// compare the cached instance-id with the DMI field cloud-init names.
func TestInstanceCheckers(t *testing.T) {
	const id = "3d6b6a3e-5f43-4d8c-9e8e-1f0c5a1c2b7d"
	for _, tc := range []struct {
		source string
		dmi    bootenv.DMI
	}{
		{"ConfigDrive", bootenv.DMI{ProductUUID: id}},
		{"OpenStack", bootenv.DMI{ProductUUID: id}},
		{"UpCloud", bootenv.DMI{ProductUUID: id}},
		{"Azure", bootenv.DMI{ProductUUID: id}},
		{"Hetzner", bootenv.DMI{ProductSerial: id}},
		{"DigitalOcean", bootenv.DMI{ProductSerial: id}},
	} {
		src, ok := Registry().Lookup(tc.source)
		if !ok {
			t.Fatalf("%s not registered", tc.source)
		}
		c, ok := src.(datasource.InstanceChecker)
		if !ok {
			t.Errorf("%s has no CheckInstanceID", tc.source)
			continue
		}
		same := &datasource.Data{MetaData: map[string]any{"instance-id": id}}
		other := &datasource.Data{MetaData: map[string]any{"instance-id": "i-other"}}
		if !c.CheckInstanceID(datasource.Env{DMI: tc.dmi}, same) {
			t.Errorf("%s: same instance-id not accepted", tc.source)
		}
		if c.CheckInstanceID(datasource.Env{DMI: tc.dmi}, other) {
			t.Errorf("%s: other instance-id accepted", tc.source)
		}
		if c.CheckInstanceID(datasource.Env{}, same) {
			t.Errorf("%s: accepted without DMI", tc.source)
		}
	}
}

// TestNetworkUpdateEvents: the sources whose cloud-init class re-applies the
// network configuration on every boot say so in their Data (each package's
// Build sets its NetworkUpdateEvents; the others leave cloud-init's
// default, a new instance only, which their golden Data shows).
func TestNetworkUpdateEvents(t *testing.T) {
	for name, ev := range map[string][]string{
		"Hetzner": hetzner.NetworkUpdateEvents, "Scaleway": scaleway.NetworkUpdateEvents, "Azure": azure.NetworkUpdateEvents,
		"GCE": gce.NetworkUpdateEvents, "SmartOS": smartos.NetworkUpdateEvents, "RbxCloud": rbxcloud.NetworkUpdateEvents,
	} {
		if !slices.Contains(ev, datasource.EventBoot) || !slices.Contains(ev, datasource.EventBootNewInstance) {
			t.Errorf("%s: events %v, want boot and boot-new-instance", name, ev)
		}
	}
}
