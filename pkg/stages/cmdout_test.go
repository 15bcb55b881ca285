package stages

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/state"
	"github.com/cloudroot/cloudroot/pkg/target"
)

// echoRunner records argv and prints it on the command's stdout.
type echoRunner struct{ argv [][]string }

func (e *echoRunner) Run(ctx context.Context, root string, cmd target.Cmd) error {
	e.argv = append(e.argv, cmd.Argv)
	fmt.Fprintf(cmd.Stdout, "ran %s in %s\n", strings.Join(cmd.Argv, " "), root)
	return nil
}

// TestInitCommandOutput: init-stage commands (bootcmd) run through the
// target's runner, in the target root, and their output goes to the
// stage's output (the console and cloud-init-output.log).
func TestInitCommandOutput(t *testing.T) {
	er := &echoRunner{}
	tr := newRoot(t, er)
	run := newRoot(t, er)
	d := seed(t, "instance-id: i-1\n", "#cloud-config\nbootcmd:\n - echo early\nssh_genkeytypes: []\n")
	o := initOpts(tr, run, d)
	var out bytes.Buffer
	o.Out = &out
	var s state.State
	st := state.NewStatus()
	if err := Init(context.Background(), o, st.Get(state.StageInit), &s); err != nil {
		t.Fatal(err)
	}
	if len(er.argv) == 0 {
		t.Fatal("bootcmd did not go through the runner")
	}
	if want := "ran /bin/sh"; !strings.Contains(out.String(), want) || !strings.Contains(out.String(), " in "+tr.Dir()) {
		t.Errorf("output = %q, want the command's output, run in %s", out.String(), tr.Dir())
	}
}
