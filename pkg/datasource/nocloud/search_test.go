package nocloud

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/datasource"
)

// TestSourceSearchOrder checks cloud-init's NoCloud search order through
// the Source: seedfrom (command line, then SMBIOS serial), seed dirs, then
// cidata/CIDATA ISO9660 or FAT volumes; i=/h= overrides.
func TestSourceSearchOrder(t *testing.T) {
	cidata := bootenv.Device{Name: "sr0", Path: "/dev/sr0", FS: bootenv.FS{Type: "iso9660", Label: "cidata"}}
	other := bootenv.Device{Name: "vda1", Path: "/dev/vda1", FS: bootenv.FS{Type: "ext4", Label: "cidata"}}
	devSeed := fstest.MapFS{"meta-data": {Data: []byte("instance-id: iid-dev\n")}, "user-data": {Data: []byte("")}}
	open := func(bootenv.Device) (fs.FS, func(), error) { return devSeed, func() {}, nil }
	for _, tc := range []struct {
		name     string
		cmdline  string
		serial   string
		seeds    map[string]string // dir in root -> iid
		devs     []bootenv.Device
		wantIID  string
		wantHost string
		wantSub  string
		wantErr  error
	}{
		{name: "cidata device", devs: []bootenv.Device{other, cidata}, wantIID: "iid-dev", wantSub: "config-disk (/dev/sr0)"},
		{name: "ext4 labelled cidata is not a seed", devs: []bootenv.Device{other}, wantErr: datasource.ErrNotFound},
		{name: "seed dir wins over device", seeds: map[string]string{"var/lib/cloud/seed/nocloud": "iid-dir"}, devs: []bootenv.Device{cidata}, wantIID: "iid-dir", wantSub: "seed-dir (/var/lib/cloud/seed/nocloud)"},
		{name: "cmdline seedfrom wins", cmdline: "root=/dev/vda1 ds=nocloud;s=file:///srv/s/", seeds: map[string]string{"srv/s": "iid-s", "var/lib/cloud/seed/nocloud": "iid-dir"}, wantIID: "iid-s", wantSub: "seed-dir (/srv/s/)"},
		{name: "cmdline overrides on device", cmdline: "ds=nocloud;i=iid-over;h=host-over", devs: []bootenv.Device{cidata}, wantIID: "iid-over", wantHost: "host-over"},
		{name: "smbios serial", serial: "ds=nocloud;s=/srv/x/;i=iid-serial", seeds: map[string]string{"srv/x": "iid-x"}, wantIID: "iid-serial"},
		{name: "network seedfrom needs the network", cmdline: "ds=nocloud;s=http://127.0.0.1:8000/", wantErr: datasource.ErrNeedNetwork},
		{name: "nothing", wantErr: datasource.ErrNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for d, iid := range tc.seeds {
				p := filepath.Join(root, d)
				os.MkdirAll(p, 0o755)
				os.WriteFile(filepath.Join(p, "meta-data"), []byte("instance-id: "+iid+"\n"), 0o644)
				os.WriteFile(filepath.Join(p, "user-data"), []byte("#cloud-config\n"), 0o644)
			}
			env := datasource.Env{Root: os.DirFS(root), Devices: tc.devs, OpenFS: open,
				Cmdline: bootenv.ParseCmdline(tc.cmdline), DMI: bootenv.DMI{ProductSerial: tc.serial}}
			d, err := (&Source{}).Get(context.Background(), env)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d.InstanceID() != tc.wantIID {
				t.Errorf("instance-id = %q, want %q", d.InstanceID(), tc.wantIID)
			}
			if tc.wantHost != "" && d.LocalHostname() != tc.wantHost {
				t.Errorf("hostname = %q, want %q", d.LocalHostname(), tc.wantHost)
			}
			if tc.wantSub != "" && d.Subplatform != tc.wantSub {
				t.Errorf("subplatform = %q, want %q", d.Subplatform, tc.wantSub)
			}
		})
	}
}
