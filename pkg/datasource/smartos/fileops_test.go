package smartos

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cloudroot/cloudroot/pkg/datasource"
)

// TestBuildFileOps: cloud-init's write_boot_content on every boot.
func TestBuildFileOps(t *testing.T) {
	const dir = "/var/lib/cloud/instances/iid-1/data"
	for _, tc := range []struct {
		name   string
		values map[string]string
		want   []datasource.FileOp
	}{
		{"user-script given", map[string]string{"sdc:uuid": "iid-1", "user-script": "echo hi"}, []datasource.FileOp{
			{Op: datasource.FileRemove, Path: dir + "/operator-script"},
			{Op: datasource.FileRemove, Path: LegacyUserDataFile},
			{Op: datasource.FileRemove, Path: LegacyUserScriptLink},
			{Op: datasource.FileSymlink, Path: LegacyUserScriptLink, Target: dir + "/user-script"},
			{Op: datasource.FileRename, Path: ProvisioningFile, Target: ProvisionSuccessFile},
		}},
		{"nothing given", map[string]string{"sdc:uuid": "iid-1"}, []datasource.FileOp{
			{Op: datasource.FileRemove, Path: dir + "/user-script"},
			{Op: datasource.FileRemove, Path: dir + "/operator-script"},
			{Op: datasource.FileRemove, Path: LegacyUserDataFile},
			{Op: datasource.FileRemove, Path: LegacyUserScriptLink},
			{Op: datasource.FileRename, Path: ProvisioningFile, Target: ProvisionSuccessFile},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Build(Input{Mode: ModeLX, Subplatform: "socket (/x)", Values: tc.values})
			if err != nil {
				t.Fatal(err)
			}
			if !d.FilesEveryBoot {
				t.Error("FilesEveryBoot not set")
			}
			if diff := cmp.Diff(tc.want, d.FileOps); diff != "" {
				t.Errorf("FileOps (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDescribe(t *testing.T) {
	for _, tc := range []struct {
		mode, where string
		timeout     time.Duration
		want        string
	}{
		{ModeKVM, "/dev/ttyS1", DefaultSerialTimeout, "DataSourceSmartOS [client=JoyentMetadataLegacySerialClient(device=/dev/ttyS1, timeout=60)]"},
		{ModeKVM, "/dev/ttyS2", 2500 * time.Millisecond, "DataSourceSmartOS [client=JoyentMetadataLegacySerialClient(device=/dev/ttyS2, timeout=2.5)]"},
		{ModeLX, "/native/.zonecontrol/metadata.sock", 0, "DataSourceSmartOS [client=JoyentMetadataSocketClient(socketpath=/native/.zonecontrol/metadata.sock)]"},
	} {
		if got := Describe(tc.mode, tc.where, tc.timeout); got != tc.want {
			t.Errorf("Describe(%s, %s) = %q, want %q", tc.mode, tc.where, got, tc.want)
		}
	}
}
