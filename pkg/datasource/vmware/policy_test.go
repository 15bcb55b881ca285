package vmware

import (
	"context"
	"errors"
	"testing"
	"testing/fstest"
	"time"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/imds"
)

// TestPlatformWaitsFollowPolicy: under the boot's Policy the guest tools
// and the customization wait are bounded by its Deadline, not Env.Budget
// (which the initramfs keeps short for sources that read only volumes):
// a slow tool and a late customization are read; a hanging tool ends at
// the Deadline, and at the caller's context when that ends first.
func TestPlatformWaitsFollowPolicy(t *testing.T) {
	short := 50 * time.Millisecond // shorter than the waits below
	md := "instance-id: slow-iid\n"
	t.Run("slow tool", func(t *testing.T) {
		gi := imcDir(t, map[string]string{"metadata": md})
		slow := writeScript(t, t.TempDir(), RPCToolName, "#!/bin/sh\nsleep 0.3\nexec "+fakeTool(t, RPCToolName, gi)+" \"$@\"\n")
		s := &Source{RPCTool: slow, VMToolsd: missing, NoBackdoor: true, ReadOnly: true, Environ: map[string]string{}}
		d, err := s.Get(context.Background(), datasource.Env{DMI: vmDMI, Budget: short, Policy: &imds.Policy{Deadline: time.Minute}})
		if err != nil {
			t.Fatal(err)
		}
		if d.InstanceID() != "slow-iid" {
			t.Errorf("instance-id %q", d.InstanceID())
		}
	})
	t.Run("late customization", func(t *testing.T) {
		plugin := fstest.MapFS{"usr/lib/vmware-tools/plugins/vmsvc/libdeployPkgPlugin.so": {}}
		dir := custLater(t)
		s := &Source{RPCTool: missing, VMToolsd: missing, NoBackdoor: true, Environ: map[string]string{}, IMCDir: dir}
		env := datasource.Env{DMI: vmDMI, Root: plugin, Budget: short, Policy: &imds.Policy{Deadline: time.Minute},
			Config: map[string]any{"VMware": map[string]any{"vmware_cust_file_max_wait": "3"}}}
		d, err := s.Get(context.Background(), env)
		if err != nil {
			t.Fatal(err)
		}
		if d.InstanceID() != "raw-iid" {
			t.Errorf("instance-id %q", d.InstanceID())
		}
	})
	for _, tc := range []struct {
		name     string
		deadline time.Duration
		ctx      func() (context.Context, context.CancelFunc)
	}{
		{"hanging tool: policy deadline", 300 * time.Millisecond, func() (context.Context, context.CancelFunc) {
			return context.WithCancel(context.Background())
		}},
		{"hanging tool: search deadline", time.Hour, func() (context.Context, context.CancelFunc) {
			return context.WithTimeoutCause(context.Background(), 300*time.Millisecond, imds.ErrDeadline)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hang := writeScript(t, t.TempDir(), RPCToolName, "#!/bin/sh\nexec sleep 60\n")
			s := &Source{RPCTool: hang, VMToolsd: missing, NoBackdoor: true, CommandTimeout: time.Hour, Environ: map[string]string{}}
			ctx, cancel := tc.ctx()
			defer cancel()
			done := make(chan error, 1)
			go func() {
				_, err := s.Get(ctx, datasource.Env{DMI: vmDMI, Budget: time.Hour, Policy: &imds.Policy{Deadline: tc.deadline}})
				done <- err
			}()
			select {
			case err := <-done:
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("err = %v, want the deadline", err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("Get did not end with the deadline")
			}
		})
	}
}
