package harness

import (
	"context"
	"os"
	"testing"
)

// TestProbeKVMHere runs the real probe when asked (CLOUDROOT_PROBE_KERNEL).
func TestProbeKVMHere(t *testing.T) {
	k := os.Getenv("CLOUDROOT_PROBE_KERNEL")
	if k == "" {
		t.Skip("set CLOUDROOT_PROBE_KERNEL to a kernel to probe KVM with it")
	}
	p := &Prober{CacheDir: t.TempDir()}
	t.Log(p.Choose(context.Background(), k))
}
