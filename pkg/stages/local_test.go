package stages

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/nocloud"
)

func writeSeed(t *testing.T, dir, iid string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "meta-data"), []byte("instance-id: "+iid+"\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "user-data"), []byte("#cloud-config\n"), 0o644)
}

func TestFindNoCloud(t *testing.T) {
	cidata := bootenv.Device{Name: "sr0", Path: "/dev/sr0", FS: bootenv.FS{Type: "iso9660", Label: "cidata"}}
	other := bootenv.Device{Name: "vda1", Path: "/dev/vda1", FS: bootenv.FS{Type: "ext4", Label: "cidata"}}
	fromDevice := func(dev string, ov nocloud.Overrides) (*datasource.Data, error) {
		return nocloud.Parse(map[string][]byte{"meta-data": []byte("instance-id: iid-dev\n")}, "config-disk ("+dev+")", ov)
	}
	for _, tc := range []struct {
		name    string
		cmdline string
		serial  string
		seeds   map[string]string // dir in root -> iid
		devs    []bootenv.Device
		wantIID string
		wantSub string
		wantErr string
		notFnd  bool
	}{
		{name: "cidata device", devs: []bootenv.Device{other, cidata}, wantIID: "iid-dev", wantSub: "config-disk (/dev/sr0)"},
		{name: "ext4 labelled cidata is not a seed", devs: []bootenv.Device{other}, notFnd: true, wantErr: "no seed"},
		{name: "seed dir wins over device", seeds: map[string]string{"var/lib/cloud/seed/nocloud": "iid-dir"}, devs: []bootenv.Device{cidata}, wantIID: "iid-dir", wantSub: "seed-dir (/var/lib/cloud/seed/nocloud)"},
		{name: "cmdline seedfrom wins", cmdline: "root=/dev/vda1 ds=nocloud;s=file:///srv/s/", seeds: map[string]string{"srv/s": "iid-s", "var/lib/cloud/seed/nocloud": "iid-dir"}, wantIID: "iid-s", wantSub: "seed-dir (/srv/s/)"},
		{name: "cmdline overrides on device", cmdline: "ds=nocloud;i=iid-over;h=host-over", devs: []bootenv.Device{cidata}, wantIID: "iid-over"},
		{name: "smbios serial", serial: "ds=nocloud;s=/srv/x/;i=iid-serial", seeds: map[string]string{"srv/x": "iid-x"}, wantIID: "iid-serial"},
		{name: "network seedfrom reported", cmdline: "ds=nocloud;s=http://127.0.0.1:8000/", wantErr: "needs the network"},
		{name: "nothing", notFnd: true, wantErr: "no seed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := newRoot(t, &fakeRunner{})
			for d, iid := range tc.seeds {
				writeSeed(t, filepath.Join(root.Dir(), d), iid)
			}
			in := LocalInput{
				Cmdline: bootenv.ParseCmdline(tc.cmdline), DMI: bootenv.DMI{ProductSerial: tc.serial},
				Devices: tc.devs, Target: root, ReadDevice: fromDevice,
			}
			d, err := FindNoCloud(in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				if errors.Is(err, datasource.ErrNotFound) != tc.notFnd {
					t.Errorf("ErrNotFound = %v, want %v", !tc.notFnd, tc.notFnd)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d.InstanceID() != tc.wantIID {
				t.Errorf("instance-id = %q, want %q", d.InstanceID(), tc.wantIID)
			}
			if tc.wantSub != "" && d.Subplatform != tc.wantSub {
				t.Errorf("subplatform = %q, want %q", d.Subplatform, tc.wantSub)
			}
		})
	}
}
