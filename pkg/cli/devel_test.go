package cli

import (
	"context"
	"strings"
	"testing"
)

func TestDevelGolden(t *testing.T) { runCLIGolden(t, "devel") }

// TestDevelNetConvert: devel dispatches net-convert to netconvert.go's
// command (its own golden tests cover what it prints).
func TestDevelNetConvert(t *testing.T) {
	env, out, errb := newTestEnv(t.TempDir())
	if rc := Run(context.Background(), env, []string{"devel", "net-convert", "--help"}); rc != 0 {
		t.Fatalf("rc = %d, stderr %s", rc, errb)
	}
	if !strings.Contains(out.String(), "net-convert") {
		t.Errorf("net-convert help not printed: %q", out)
	}
	env, _, errb = newTestEnv(t.TempDir())
	if rc := Run(context.Background(), env, []string{"devel", "net-convert"}); rc != 2 {
		t.Errorf("net-convert without arguments: rc = %d, want 2 (stderr %s)", rc, errb)
	}
}
