package stages

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cloudroot/cloudroot/pkg/state"
	"github.com/cloudroot/cloudroot/pkg/target"
)

// TestBootLocalInRoot: the in-root local stage reads the configured
// datasource_list, leaves a network source for the network stage (no
// error, no warning: cloud-init's local stage does not search them) and
// falls back to None; Handoff writes the state, the in-root marker and
// status.json with the mode.
func TestBootLocalInRoot(t *testing.T) {
	dir := t.TempDir()
	for p, c := range map[string]string{
		"etc/cloud/cloud.cfg": "datasource_list: [Ec2, None]\n",
		"etc/os-release":      "ID=debian\n",
		"etc/passwd":          "root:x:0:0:root:/root:/bin/sh\n",
		"etc/group":           "root:x:0:\n",
	} {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755)
		os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644)
	}
	root, err := target.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	b := &Boot{
		Mode: ModeInRoot, Target: root, Run: root,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Out: io.Discard,
		Now: func() time.Time { return time.Unix(0, 0) }, Uptime: func() float64 { return 1 },
		State: &state.State{}, Status: state.NewStatus(), NoIdentify: true, FetchOnly: true,
	}
	d := b.Local(context.Background())
	if d == nil || d.Name != "None" {
		t.Fatalf("Local found %+v, want None (state errors %v)", d, b.State.Errors)
	}
	if rec := b.Status.Get(state.StageInitLocal).RecoverableErrors; len(rec) != 0 {
		t.Errorf("the network source left for the network stage is a warning: %v", rec)
	}
	if got := b.State.DatasourceList; len(got) != 2 || got[0] != "Ec2" {
		t.Errorf("datasource list %v", got)
	}
	b.Init(context.Background(), d)
	if err := b.Handoff(nil, nil); err != nil {
		t.Fatal(err)
	}
	s, err := LoadState(root)
	if err != nil || s.Mode != ModeInRoot {
		t.Fatalf("state: %v, mode %q", err, s.Mode)
	}
	if !root.Exists(state.InRootMarker) {
		t.Error("no in-root marker")
	}
	if root.Exists(state.StatusFile) {
		t.Error("FetchOnly wrote status.json")
	}
}
