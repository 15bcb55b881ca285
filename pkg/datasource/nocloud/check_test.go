package nocloud

import (
	"testing"
	"testing/fstest"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/datasource"
)

func TestCheckInstanceID(t *testing.T) {
	cached := &datasource.Data{MetaData: map[string]any{"instance-id": "iid-a"}}
	seed := func(iid string) fstest.MapFS {
		return fstest.MapFS{"var/lib/cloud/seed/nocloud-net/meta-data": {Data: []byte("instance-id: " + iid + "\n")}}
	}
	for _, tc := range []struct {
		name   string
		env    datasource.Env
		cached *datasource.Data
		want   bool
	}{
		{"nothing local to compare", datasource.Env{}, cached, false},
		{"cmdline same", datasource.Env{Cmdline: bootenv.ParseCmdline("ds=nocloud;i=iid-a")}, cached, true},
		{"cmdline other", datasource.Env{Cmdline: bootenv.ParseCmdline("ds=nocloud;i=iid-b"), Root: seed("iid-a")}, cached, false},
		{"cmdline without i= falls to seed dir", datasource.Env{Cmdline: bootenv.ParseCmdline("ds=nocloud"), Root: seed("iid-a")}, cached, true},
		{"seed dir same", datasource.Env{Root: seed("iid-a")}, cached, true},
		{"seed dir other", datasource.Env{Root: seed("iid-b")}, cached, false},
		{"seed dir without instance-id", datasource.Env{Root: fstest.MapFS{"var/lib/cloud/seed/nocloud/meta-data": {Data: []byte("local-hostname: h\n")}}}, cached, false},
		{"cached without instance-id", datasource.Env{Root: seed("iid-a")}, &datasource.Data{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := (&Source{}).CheckInstanceID(tc.env, tc.cached); got != tc.want {
				t.Errorf("CheckInstanceID = %v, want %v", got, tc.want)
			}
		})
	}
}
