package bootenv

import (
	"os"
	"path/filepath"
	"strings"
)

// DMI holds the SMBIOS strings ds-identify and the datasources look at.
// Missing or unreadable entries are "".
type DMI struct {
	SysVendor       string // sys_vendor
	ProductName     string // product_name
	ProductSerial   string // product_serial (cloud-init: system-serial-number)
	ProductUUID     string // product_uuid
	ProductVersion  string // product_version
	ChassisAssetTag string // chassis_asset_tag
	BoardVendor     string // board_vendor
	BoardName       string // board_name
}

// DefaultSysRoot is where sysfs is mounted.
const DefaultSysRoot = "/sys"

// ReadDMI reads <sysRoot>/class/dmi/id/*. sysRoot "" means DefaultSysRoot.
// product_serial and product_uuid are readable by root only; as another user
// they come back "".
func ReadDMI(sysRoot string) DMI {
	if sysRoot == "" {
		sysRoot = DefaultSysRoot
	}
	dir := filepath.Join(sysRoot, "class", "dmi", "id")
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(b))
	}
	return DMI{
		SysVendor:       read("sys_vendor"),
		ProductName:     read("product_name"),
		ProductSerial:   read("product_serial"),
		ProductUUID:     read("product_uuid"),
		ProductVersion:  read("product_version"),
		ChassisAssetTag: read("chassis_asset_tag"),
		BoardVendor:     read("board_vendor"),
		BoardName:       read("board_name"),
	}
}

// DS returns the datasource selection carried in the product serial, as
// cloud-init's NoCloud reads it: a white-space separated token starting with
// `ds=` (QEMU: -smbios type=1,serial=ds=nocloud;s=http://…/).
func (d DMI) DS() (DSArg, bool) {
	var found string
	for _, tok := range strings.Fields(d.ProductSerial) {
		if strings.HasPrefix(tok, "ds=") {
			found = tok
		}
	}
	if found == "" {
		return DSArg{}, false
	}
	return ParseDSString(found), true
}
