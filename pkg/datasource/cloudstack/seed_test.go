package cloudstack

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/cloudroot/cloudroot/pkg/datasource"
)

func TestSeedDir(t *testing.T) {
	seed := func(md, ud string) fstest.MapFS {
		fsys := fstest.MapFS{}
		if md != "" {
			fsys["var/lib/cloud/seed/cs/meta-data"] = &fstest.MapFile{Data: []byte(md)}
		}
		if ud != "" {
			fsys["var/lib/cloud/seed/cs/user-data"] = &fstest.MapFile{Data: []byte(ud)}
		}
		return fsys
	}
	// Found before, and without, the network.
	d, err := (&Source{}).Get(context.Background(), datasource.Env{Root: seed("instance-id: cs-seed-1\nlocal-hostname: vm1\n", "#cloud-config\n")})
	if err != nil {
		t.Fatal(err)
	}
	if d.InstanceID() != "cs-seed-1" || d.LocalHostname() != "vm1" || d.Subplatform != "seed-dir (/var/lib/cloud/seed/cs)" || string(d.UserData) != "#cloud-config\n" {
		t.Errorf("seeded data: iid %q host %q sub %q ud %q", d.InstanceID(), d.LocalHostname(), d.Subplatform, d.UserData)
	}
	// Half a seed is no seed: the network is asked for.
	if _, err := (&Source{}).Get(context.Background(), datasource.Env{Root: seed("instance-id: x\n", "")}); err == nil || !strings.Contains(err.Error(), "needs the network") {
		t.Errorf("meta-data only: %v", err)
	}
	// A broken seed is an error naming it.
	if _, err := (&Source{}).Get(context.Background(), datasource.Env{Root: seed("- a list\n", "x")}); err == nil || !strings.Contains(err.Error(), "/var/lib/cloud/seed/cs/meta-data") {
		t.Errorf("broken meta-data: %v", err)
	}
	if _, err := (&Source{}).Get(context.Background(), datasource.Env{Root: seed("local-hostname: h\n", "x")}); err == nil || !strings.Contains(err.Error(), "instance-id") {
		t.Errorf("no instance-id: %v", err)
	}
}
