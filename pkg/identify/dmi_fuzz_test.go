package identify

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
)

// dmiFiles are the sysfs attributes bootenv.ReadDMI reads, in the order of
// FuzzDMI's arguments.
var dmiFiles = []string{"sys_vendor", "product_name", "product_serial", "product_uuid", "chassis_asset_tag", "board_vendor"}

// FuzzDMI: whatever the firmware put in the SMBIOS strings (sysfs hands
// them over as bytes, newline-terminated; absent or unreadable attributes
// are ""), reading them never panics and gives each attribute without its
// surrounding white space, the NoCloud serial argument parses, and
// ds-identify decides the same way twice on them.
func FuzzDMI(f *testing.F) {
	root := f.TempDir()
	dir := filepath.Join(root, "sys", "class", "dmi", "id")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, vendor, product, serial, uuid, asset, board string, absent uint8) {
		values := []string{vendor, product, serial, uuid, asset, board}
		for i, name := range dmiFiles {
			p := filepath.Join(dir, name)
			os.Remove(p)
			if absent&(1<<i) != 0 {
				values[i] = ""
				continue
			}
			if err := os.WriteFile(p, []byte(values[i]+"\n"), 0o444); err != nil {
				t.Fatal(err)
			}
		}
		d := bootenv.ReadDMI(filepath.Join(root, "sys"))
		got := []string{d.SysVendor, d.ProductName, d.ProductSerial, d.ProductUUID, d.ChassisAssetTag, d.BoardVendor}
		for i := range values {
			if want := strings.TrimSpace(values[i]); got[i] != want {
				t.Fatalf("%s: got %q, want %q", dmiFiles[i], got[i], want)
			}
		}
		if a, ok := d.DS(); ok {
			a.NoCloud()
		}
		in := Inputs{DMI: d, Virt: "kvm", Uname: Uname{Sysname: "Linux", Machine: "x86_64"}}
		r1, r2 := Identify(in), Identify(in)
		if !reflect.DeepEqual(r1, r2) {
			t.Fatalf("two decisions on the same DMI differ:\n%+v\n%+v", r1, r2)
		}
		if r1.Decision != Enabled && r1.Decision != Disabled {
			t.Fatalf("decision %q", r1.Decision)
		}
	})
}
