package coldplug

import (
	"strings"
	"testing"
)

func TestParseFirmwareFailure(t *testing.T) {
	cases := []struct {
		line string
		want FirmwareFailure
		ok   bool
	}{
		{"3,612,20132441,-;r8169 0000:01:00.0: Direct firmware load for rtl_nic/rtl8168d-1.fw failed with error -2\n SUBSYSTEM=pci\n DEVICE=+pci:0000:01:00.0",
			FirmwareFailure{Device: "r8169 0000:01:00.0", File: "rtl_nic/rtl8168d-1.fw", Error: "-2"}, true},
		{"[    7.123456] bnx2x 0000:3b:00.0: Direct firmware load for bnx2x/bnx2x-e2-7.13.21.0.fw failed with error -2",
			FirmwareFailure{Device: "bnx2x 0000:3b:00.0", File: "bnx2x/bnx2x-e2-7.13.21.0.fw", Error: "-2"}, true},
		{"Direct firmware load for regulatory.db failed with error -2",
			FirmwareFailure{File: "regulatory.db", Error: "-2"}, true},
		{"6,1,2,-;e1000e 0000:00:02.0 eth0: NIC Link is Up", FirmwareFailure{}, false},
		{"Direct firmware load for  failed with error -2", FirmwareFailure{}, false},
	}
	for _, c := range cases {
		got, ok := ParseFirmwareFailure(c.line)
		if ok != c.ok || got != c.want {
			t.Errorf("ParseFirmwareFailure(%q) = %+v, %v; want %+v, %v", c.line, got, ok, c.want, c.ok)
		}
	}
	f := cases[0].want
	if got, want := f.String(), "firmware rtl_nic/rtl8168d-1.fw for r8169 0000:01:00.0 is not in this initramfs (error -2)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

func FuzzParseFirmwareFailure(f *testing.F) {
	f.Add("3,612,20132441,-;r8169 0000:01:00.0: Direct firmware load for rtl_nic/rtl8168d-1.fw failed with error -2\n SUBSYSTEM=pci")
	f.Add("[ 1.0] Direct firmware load for x failed with error -12")
	f.Fuzz(func(t *testing.T, line string) {
		got, ok := ParseFirmwareFailure(line)
		if ok && (got.File == "" || !strings.Contains(line, got.File)) {
			t.Errorf("ParseFirmwareFailure(%q) = %+v", line, got)
		}
	})
}
