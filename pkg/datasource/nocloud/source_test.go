package nocloud

import (
	"context"
	"errors"
	"io/fs"
	"testing"
	"testing/fstest"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/dstest"
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
}

// TestArgDSMode: the dsmode a ds=nocloud selection gives, as cloud-init's
// load_cmdline_data decides it.
func TestArgDSMode(t *testing.T) {
	for _, c := range []struct{ arg, want string }{
		{"ds=nocloud", "local"},
		{"ds=nocloud-net", "net"},
		{"ds=nocloud;s=http://10.0.0.1/seed/", "net"},
		{"ds=nocloud;s=ftps://10.0.0.1/seed/", "net"},
		{"ds=nocloud;s=file:///srv/seed/", "local"},
		{"ds=nocloud;s=/srv/seed/", "local"},
		{"ds=nocloud-net;s=/srv/seed/", "local"},
		{"ds=nocloud;s=tftp://x/", ""},
		{"ds=nocloud;s=http://10.0.0.1/;dsmode=local", "local"},
		{"ds=nocloud;dsmode=disabled", "disabled"},
	} {
		if got := ArgDSMode(bootenv.ParseDSString(c.arg)); got != c.want {
			t.Errorf("ArgDSMode(%q) = %q, want %q", c.arg, got, c.want)
		}
	}
}

// TestDSModeDisabled: dsmode disabled on the command line makes NoCloud
// decline the seed it would have used.
func TestDSModeDisabled(t *testing.T) {
	root := fstest.MapFS{
		"var/lib/cloud/seed/nocloud/meta-data": {Data: []byte("instance-id: i-1\n")},
		"var/lib/cloud/seed/nocloud/user-data": {Data: []byte("#cloud-config\n")},
	}
	env := datasource.Env{Root: root, Cmdline: bootenv.ParseCmdline("ds=nocloud;dsmode=disabled")}
	if _, err := (&Source{}).Get(context.Background(), env); !errors.Is(err, datasource.ErrNotFound) {
		t.Fatalf("Get = %v, want ErrNotFound", err)
	}
	env.Cmdline = bootenv.ParseCmdline("ds=nocloud")
	d, err := (&Source{}).Get(context.Background(), env)
	if err != nil || d.Mode != "local" || d.MetaData["dsmode"] != "local" {
		t.Fatalf("ds=nocloud: mode %q meta-data dsmode %v, %v; want local", d.Mode, d.MetaData["dsmode"], err)
	}
}

// TestConform: the cases every volume source shares.
func TestConform(t *testing.T) {
	dstest.ConformMedia(t, dstest.Media{Source: &Source{},
		Device: bootenv.Device{Name: "sr0", Path: "/dev/sr0", FS: bootenv.FS{Type: "iso9660", Label: "cidata"}},
		Root:   "testdata/basic/seed", Doc: "meta-data",
		WhyTruncatedParses: "meta-data is YAML: its first half (some of its keys) is a mapping that parses, as in cloud-init"})
}
