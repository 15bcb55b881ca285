package altcloud

// Pure parsing: which back end this is, which devices qualify, and the
// Data built from the user-data found.

import (
	"bytes"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/datasource"
)

// Cloud types, as cloud-init's get_cloud_type names them.
const (
	RHEV    = "RHEV"
	VSphere = "VSPHERE"
	Unknown = "UNKNOWN"
)

// CloudType is cloud-init's get_cloud_type: the stripped, upper-cased
// content of /etc/sysconfig/cloud-info when the file exists (info is
// non-nil), else RHEV or VSPHERE by the DMI product name's prefix, else
// UNKNOWN. The result may be any string the file holds; callers look for
// RHEV and VSPHERE in it.
func CloudType(info []byte, product string) string {
	if info != nil {
		return strings.ToUpper(string(bytes.TrimSpace(info)))
	}
	p := strings.ToUpper(product)
	switch {
	case p == "":
		return Unknown
	case strings.HasPrefix(p, "RHEV"):
		return RHEV
	case strings.HasPrefix(p, "VMWARE"):
		return VSphere
	}
	return Unknown
}

// Label is the filesystem label of a vSphere user-data CD-ROM.
const Label = "CDROM"

// Candidates are the devices labelled CDROM, in the order given.
func Candidates(devs []bootenv.Device) []bootenv.Device {
	var out []bootenv.Device
	for _, d := range devs {
		if d.FS.Label == Label {
			out = append(out, d)
		}
	}
	return out
}

// UserDataFiles are the files tried on the CD-ROM, in order.
func UserDataFiles() []string { return []string{"deltacloud-user-data.txt", "user-data.txt"} }

// MetaData is cloud-init's META_DATA_NOT_SUPPORTED: AltCloud has no
// meta-data, so every instance has these values (instance-id 455).
func MetaData() map[string]any {
	return map[string]any{
		"block-device-mapping": map[string]any{},
		"instance-id":          455,
		"local-hostname":       "localhost",
		"placement":            map[string]any{},
	}
}

// Parse builds Data from the user-data file's content found on device
// (stripped of surrounding whitespace, as cloud-init does), for the cloud
// type given. Empty user-data is no user-data: nil.
func Parse(userData []byte, cloudType, device string) *datasource.Data {
	ud := bytes.TrimSpace(userData)
	if len(ud) == 0 {
		return nil
	}
	return &datasource.Data{
		Name: "AltCloud", Platform: "altcloud", CloudName: "altcloud", Mode: "net", NetworkStage: true,
		Subplatform: strings.ToLower(cloudType) + " (" + device + ")",
		MetaData:    MetaData(), UserData: append([]byte(nil), ud...),
	}
}
