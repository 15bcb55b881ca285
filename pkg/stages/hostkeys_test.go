package stages

import (
	"context"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/modules/users"
	"github.com/cloudroot/cloudroot/pkg/state"
)

type noEntropy struct{}

func (noEntropy) Wait(context.Context) error { return users.ErrNoEntropy }

// TestInitDefersHostKeys: without entropy the init stage generates no host
// key, writes the marker the booted root's unit starts on and records the
// types in the state; the boot has no error for it.
func TestInitDefersHostKeys(t *testing.T) {
	fr := &fakeRunner{}
	tr := newRoot(t, fr)
	run := newRoot(t, fr)
	d := seed(t, "instance-id: i-1\n", "#cloud-config\nssh_genkeytypes: [ed25519, rsa]\n")
	o := initOpts(tr, run, d)
	o.HostKeys = users.NewHostKeyPool(noEntropy{}, nil)
	var s state.State
	st := state.NewStatus()
	if err := Init(context.Background(), o, st.Get(state.StageInit), &s); err != nil {
		t.Fatal(err)
	}
	if errs := st.Get(state.StageInit).Errors; len(errs) > 0 {
		t.Errorf("init errors: %v", errs)
	}
	if keys, _ := tr.Glob("/etc/ssh/ssh_host_*"); len(keys) > 0 {
		t.Errorf("keys written without entropy: %v", keys)
	}
	b, err := run.ReadFile(users.HostKeysDeferredMarker)
	if err != nil {
		t.Fatal(err)
	}
	hd, err := users.ParseHostKeyDeferral(b)
	if err != nil || len(hd.Types) != 2 || hd.Types[0] != "ed25519" || hd.Types[1] != "rsa" {
		t.Errorf("marker = %s (%v)", b, err)
	}
	if len(s.HostKeysDeferred) != 2 {
		t.Errorf("state HostKeysDeferred = %v", s.HostKeysDeferred)
	}
}

func TestHostKeyTypes(t *testing.T) {
	for _, tt := range []struct {
		cfg  map[string]any
		want int
	}{
		{map[string]any{}, 3},
		{map[string]any{"ssh_genkeytypes": []any{"ed25519"}}, 1},
		{map[string]any{"ssh_genkeytypes": []any{}}, 0},
		{map[string]any{"ssh_keys": map[string]any{"rsa_private": "x"}}, 0},
	} {
		if got := HostKeyTypes(tt.cfg); len(got) != tt.want {
			t.Errorf("HostKeyTypes(%v) = %v", tt.cfg, got)
		}
	}
}
