package harness

import (
	"strings"
	"testing"
)

func TestSMBIOSUUIDAndProduct(t *testing.T) {
	o := BootOptions{Kernel: "/k", Initramfs: "/i", Disk: "/d.img", SMBIOSSerial: "s", SMBIOSUUID: "ec2a1b2c-3d4e-4f50-8a6b-7c8d9e0f1a2b", SMBIOSProduct: "OpenStack Nova,x"}
	args, err := o.Args()
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(args, " ")
	for _, want := range []string{"-smbios type=1,serial=s", "-smbios type=1,uuid=ec2a1b2c-3d4e-4f50-8a6b-7c8d9e0f1a2b,product=OpenStack Nova,,x"} {
		if !strings.Contains(got, want) {
			t.Errorf("args lack %q: %s", want, got)
		}
	}
	o.SMBIOSUUID, o.SMBIOSProduct = "", "Google Compute Engine"
	args, _ = o.Args()
	if got := strings.Join(args, " "); !strings.Contains(got, "-smbios type=1,product=Google Compute Engine") || strings.Contains(got, "uuid=") {
		t.Errorf("product only: %s", got)
	}
}

func TestSMBIOSChassisAsset(t *testing.T) {
	args, err := BootOptions{Kernel: "/k", Initramfs: "/i", Disk: "/d.img", SMBIOSChassisAsset: "7783-7084,x"}.Args()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(args, " "); !strings.Contains(got, "-smbios type=3,asset=7783-7084,,x") {
		t.Errorf("args lack the type 3 asset tag: %s", got)
	}
}
