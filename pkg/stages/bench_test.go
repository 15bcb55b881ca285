package stages

import (
	"context"
	"os"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/state"
	"github.com/cloudroot/cloudroot/pkg/target"
)

// BenchmarkInit measures the initramfs's init stage on the demo seed
// (decode, merge, layout, instance-data, every init module) against a temp
// root, with commands faked.
func BenchmarkInit(b *testing.B) {
	md, err := os.ReadFile("../../examples/demo/meta-data")
	if err != nil {
		b.Fatal(err)
	}
	ud, err := os.ReadFile("../../examples/demo/user-data")
	if err != nil {
		b.Fatal(err)
	}
	t := &testing.T{}
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		// As in the initramfs: atomic writes, one sync at handoff.
		tr := newRoot(t, &fakeRunner{}, target.WithDeferredSync())
		d := seed(t, string(md), string(ud))
		b.StartTimer()
		var s state.State
		st := state.NewStatus()
		if err := Init(context.Background(), initOpts(tr, tr, d), st.Get(state.StageInit), &s); err != nil {
			b.Fatal(err)
		}
		if errs := st.Get(state.StageInit).Errors; len(errs) > 0 {
			b.Fatal(errs)
		}
	}
}
