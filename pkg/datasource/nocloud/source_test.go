package nocloud

import (
	"context"
	"errors"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/datasource"
)

func TestSource(t *testing.T) {
	seed := mapFS(seedFiles)
	root := fstest.MapFS{}
	for k, v := range seedFiles {
		root["var/lib/cloud/seed/nocloud-net/"+k] = &fstest.MapFile{Data: []byte(v)}
		root["srv/seed/"+k] = &fstest.MapFile{Data: []byte(v)}
	}
	cidata := bootenv.Device{Path: "/dev/sr0", FS: bootenv.FS{Type: "iso9660", Label: "cidata"}}
	open := func(bootenv.Device) (fs.FS, func(), error) { return seed, func() {}, nil }
	for _, tc := range []struct {
		name    string
		env     datasource.Env
		sub, id string
		err     error
	}{
		{"seed dir", datasource.Env{Root: root}, "seed-dir (/var/lib/cloud/seed/nocloud-net)", "iid-abc", nil},
		{"device", datasource.Env{Devices: []bootenv.Device{cidata}, OpenFS: open}, "config-disk (/dev/sr0)", "iid-abc", nil},
		{"seedfrom with override", datasource.Env{Root: root, Cmdline: bootenv.ParseCmdline("ds=nocloud;s=file:///srv/seed/;i=iid-cmd")}, "seed-dir (/srv/seed/)", "iid-cmd", nil},
		{"network seedfrom", datasource.Env{Cmdline: bootenv.ParseCmdline("ds=nocloud;s=http://10.0.0.1/seed/")}, "", "", datasource.ErrNeedNetwork},
		{"nothing", datasource.Env{Devices: []bootenv.Device{{Path: "/dev/vda", FS: bootenv.FS{Type: "ext4", Label: "cidata"}}}}, "", "", datasource.ErrNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := (&Source{}).Get(context.Background(), tc.env)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("err = %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d.Subplatform != tc.sub || d.InstanceID() != tc.id {
				t.Errorf("got %q %q, want %q %q", d.Subplatform, d.InstanceID(), tc.sub, tc.id)
			}
		})
	}
	_, err := (&Source{}).Get(context.Background(), datasource.Env{Devices: []bootenv.Device{cidata},
		OpenFS: func(bootenv.Device) (fs.FS, func(), error) { return nil, nil, errors.New("I/O error") }})
	if err == nil || errors.Is(err, datasource.ErrNotFound) || !strings.Contains(err.Error(), "I/O error") {
		t.Errorf("unreadable device: err = %v", err)
	}
}
