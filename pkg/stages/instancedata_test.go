package stages

import (
	"testing"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/distro"
)

// v1's availability_zone, region and cloud_id come from the datasource's
// own answers (cloud-init's DataSource properties), not from meta-data
// keys: an EC2-compatible cloud derives its region from the zone, NoCloud
// without a cloud-name is cloud_id "nocloud" (its platform).
func TestInstanceDataZoneRegionCloudID(t *testing.T) {
	for _, tt := range []struct {
		name                  string
		d                     datasource.Data
		zone, region, cloudID any
	}{
		{
			name: "ec2-compatible region derived from the zone",
			d: datasource.Data{CloudName: "unknown", Platform: "ec2", AvailabilityZone: "nova",
				Region: "nov", MetaData: map[string]any{"instance-id": "i-1", "placement": map[string]any{"availability-zone": "nova"}}},
			zone: "nova", region: "nov", cloudID: "ec2",
		},
		{
			name: "aws in china",
			d: datasource.Data{CloudName: "aws", Platform: "ec2", AvailabilityZone: "cn-north-1a",
				Region: "cn-north-1", MetaData: map[string]any{"instance-id": "i-2"}},
			zone: "cn-north-1a", region: "cn-north-1", cloudID: "aws-china",
		},
		{
			name: "meta-data region the source does not claim is not reported",
			d: datasource.Data{CloudName: "hetzner", Platform: "hetzner",
				MetaData: map[string]any{"instance-id": "3", "region": "eu-central"}},
			zone: nil, region: nil, cloudID: "hetzner",
		},
		{
			name: "nocloud without cloud-name",
			d:    datasource.Data{Platform: "nocloud", MetaData: map[string]any{"instance-id": "iid-1"}},
			zone: nil, region: nil, cloudID: "nocloud",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := InstanceData(&tt.d, distro.Info{ID: "debian"}, nil, nil, SysInfo{})
			v1 := got["v1"].(map[string]any)
			for k, want := range map[string]any{"availability_zone": tt.zone, "availability-zone": tt.zone,
				"region": tt.region, "cloud_id": tt.cloudID} {
				if v1[k] != want {
					t.Errorf("v1.%s = %#v, want %#v", k, v1[k], want)
				}
			}
		})
	}
}
