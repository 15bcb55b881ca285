package stages

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/state"
	"github.com/cloudroot/cloudroot/pkg/target"
	"github.com/cloudroot/cloudroot/pkg/yaml11"
)

// nodeUserData is a #cloud-config of about nodes YAML nodes in one of the
// node-dense shapes, under a key no module reads.
func nodeUserData(shape string, nodes int) string {
	var b strings.Builder
	b.WriteString("#cloud-config\nbulk:\n")
	switch shape {
	case "flow-list": // [1,1,1,…]: two bytes a node
		b.WriteString("  [")
		for i := range nodes {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteByte('1')
		}
		b.WriteString("]\n")
	case "block-list":
		for range nodes {
			b.WriteString("- 1\n")
		}
	case "flow-map": // {a0: 1, a1: 1, …}: keys are distinct
		b.WriteString("  {")
		for i := range nodes / 2 {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "%x: 1", i)
		}
		b.WriteString("}\n")
	case "block-map":
		for i := range nodes / 2 {
			fmt.Fprintf(&b, "  %x: 1\n", i)
		}
	case "dup-keys": // {a: 1, a: 1, …}: a warning per repeated key
		b.WriteString("  {")
		for i := range nodes / 2 {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString("a: 1")
		}
		b.WriteString("}\n")
	case "nested": // [[1],[1],…]: a list per scalar
		b.WriteString("  [")
		for i := range nodes / 2 {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString("[1]")
		}
		b.WriteString("]\n")
	case "aliases": // a list of 1000 aliases of a list of 1000: nodes expanded
		k := 1000
		b.WriteString("  - &a [")
		for i := range k {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteByte('1')
		}
		b.WriteString("]\n  - [")
		for i := range max(nodes/k, 1) {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString("*a")
		}
		b.WriteString("]\n")
	default:
		panic(shape)
	}
	return b.String()
}

var nodeShapes = []string{"flow-list", "block-list", "flow-map", "block-map", "dup-keys", "nested", "aliases"}

// initPeakErrs is initPeak for user-data that may be refused: it returns
// the init stage's errors instead of failing on them.
func initPeakErrs(t *testing.T, ud string) (uint64, []string) {
	t.Helper()
	tr := newRoot(t, &fakeRunner{}, target.WithDeferredSync())
	d := seed(t, "instance-id: i-mem\nlocal-hostname: mem\n", ud)
	var s state.State
	st := state.NewStatus()
	var err error
	peak := peakHeap(func() {
		if err = Init(context.Background(), initOpts(tr, tr, d), st.Get(state.StageInit), &s); err != nil {
			return
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	ss := st.Get(state.StageInit)
	var msgs []string
	msgs = append(msgs, ss.Errors...)
	for _, l := range []string{"ERROR", "WARNING"} {
		msgs = append(msgs, ss.RecoverableErrors[l]...)
	}
	return peak, msgs
}

// TestMemoryCeilingNodes holds the memory ceiling for node-dense
// user-data (docs/security.md, "Memory ceiling"): two bytes of [1,1,1,…]
// are one YAML node, and a node costs hundreds of bytes once parsed, so
// 2 MiB of it used to take 460 MiB. Each shape is fed just under the YAML
// bounds (yaml11.MaxNodes nodes written, yaml11.Limit expanded through
// aliases), where it must load and stay under the ceiling, and at a
// million nodes, where it must be refused with the bound's error (an
// error of the part; the boot goes on) and stay under the ceiling too.
// CLOUDROOT_MEMTEST_NODES replaces the two sizes by one and only logs
// what is refused.
func TestMemoryCeilingNodes(t *testing.T) {
	if testing.Short() {
		t.Skip("large allocations")
	}
	sizes := []int{yaml11.MaxNodes - 64, 1 << 20}
	custom := os.Getenv("CLOUDROOT_MEMTEST_NODES") != ""
	if custom {
		sizes = sizes[:1]
		fmt.Sscan(os.Getenv("CLOUDROOT_MEMTEST_NODES"), &sizes[0])
	}
	for _, shape := range nodeShapes {
		for _, nodes := range sizes {
			t.Run(fmt.Sprintf("%s/%d", shape, nodes), func(t *testing.T) {
				if shape == "aliases" && nodes < 1<<20 && !custom {
					nodes = yaml11.Limit - 2000
				}
				ud := nodeUserData(shape, nodes)
				n := len(ud)
				defer debug.SetMemoryLimit(debug.SetMemoryLimit(1 << 20))
				var errs []string
				peak := leastPeak(t, memoryCeiling(n)-uint64(n), func() uint64 {
					p, e := initPeakErrs(t, ud)
					errs = e
					return p
				})
				peak += uint64(n)
				t.Logf("%s: %d nodes, user-data %.2f MiB, peak heap %.1f MiB (%.0f× it), ceiling %.1f MiB; errors %q",
					shape, nodes, float64(n)/(1<<20), float64(peak)/(1<<20), float64(peak)/float64(n), float64(memoryCeiling(n))/(1<<20), errs)
				if peak > memoryCeiling(n) {
					t.Errorf("peak heap %d bytes over the ceiling %d for %d bytes of user-data", peak, memoryCeiling(n), n)
				}
				refused := false
				for _, e := range errs {
					if strings.Contains(e, yaml11.ErrTooManyNodes.Error()) || strings.Contains(e, "has more than") ||
						strings.Contains(e, yaml11.ErrTooLarge.Error()) {
						refused = true
					}
				}
				if !custom && refused != (nodes >= 1<<20) {
					t.Errorf("refused = %v with %d nodes (bounds %d written, %d expanded); errors %q", refused, nodes, yaml11.MaxNodes, yaml11.Limit, errs)
				}
			})
		}
	}
}
