package stages

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cloudroot/cloudroot/pkg/cilog"
	"github.com/cloudroot/cloudroot/pkg/internal/golden"
	"github.com/cloudroot/cloudroot/pkg/modules"
	"github.com/cloudroot/cloudroot/pkg/state"
	"github.com/google/go-cmp/cmp"
)

// bootLog runs the init stage and the agent's config and final stages
// against a temp-dir target, logging through cilog as a boot does, with a
// fake clock (10ms a tick) so the log is reproducible. init-local's events
// are emitted as cmds/cloudroot-init does around its datasource search
// (which needs PID 1 and devices). It returns the log and the modules run.
func bootLog(t *testing.T) ([]byte, []string) {
	t.Helper()
	fr := &fakeRunner{}
	tr := newRoot(t, fr)
	run := newRoot(t, fr)
	var buf bytes.Buffer
	now := func() func() time.Time {
		c := time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)
		return func() time.Time { c = c.Add(10 * time.Millisecond); return c }
	}()
	log := slog.New(cilog.NewHandler(&buf, cilog.Options{Logger: "stages.py", Now: now}))

	local := cilog.StartStage(log, state.StageInitLocal, "test", now, 2.5)
	for _, name := range []string{"ConfigDrive", "NoCloud"} {
		ev := local.StartSearch("local", name)
		if name == "NoCloud" {
			ev.Found("local", name)
		}
		ev.Finish()
	}
	local.Finish()

	d := seed(t, "instance-id: i-1\nlocal-hostname: meta\n", userData)
	var s state.State
	st := state.NewStatus()
	o := initOpts(tr, run, d)
	o.Log, o.Now = log, now
	if err := Init(context.Background(), o, st.Get(state.StageInit), &s); err != nil {
		t.Fatal(err)
	}
	var ran []string
	for _, tm := range s.Timings {
		ran = append(ran, strings.TrimPrefix(tm.Stage, "init/"))
	}
	s.Version = state.Version
	sb, _ := state.Marshal(&s)
	if err := tr.WriteFile(state.StateFile, sb, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteStatus(tr, tr, st); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []modules.Stage{modules.StageConfig, modules.StageFinal} {
		ao := AgentOptions{Root: tr, Log: log.With("stage", "modules-"+string(mode)), Out: &bytes.Buffer{},
			Now: now, Uptime: func() float64 { return 9 }, Version: "test"}
		if _, _, err := Modules(context.Background(), ao, mode); err != nil {
			t.Fatal(err)
		}
	}
	for _, l := range strings.Split(buf.String(), "\n") {
		if m := regexp.MustCompile(`finish: modules-\w+/config-(\w+):`).FindStringSubmatch(l); m != nil {
			ran = append(ran, m[1])
		}
	}
	return bytes.ReplaceAll(bytes.ReplaceAll(buf.Bytes(), []byte(tr.Dir()), []byte("/TARGET")), []byte(run.Dir()), []byte("/RUN")), ran
}

// TestCloudInitLogEvents checks the reporting events of a boot's log (the
// lines cloud-init's analyze reads) against testdata/cloud-init.log.events;
// -update also writes the whole log as pkg/cli's analyze test input.
func TestCloudInitLogEvents(t *testing.T) {
	logb, ran := bootLog(t)
	if len(ran) < 5 {
		t.Fatalf("only %d modules ran: %v", len(ran), ran)
	}
	var events []string
	for _, l := range strings.Split(string(logb), "\n") {
		if strings.Contains(l, "start:") || strings.Contains(l, "finish:") || strings.Contains(l, "Cloud-init v.") {
			events = append(events, l)
		}
	}
	got := strings.Join(events, "\n") + "\n"
	eventsFile := filepath.Join("testdata", "cloud-init.log.events")
	if golden.Update() {
		if err := os.WriteFile(eventsFile, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		// The whole log is pkg/cli's analyze input (its goldens come
		// from upstream: scripts/goldens/analyze.sh).
		full := filepath.Join("..", "cli", "testdata", "analyze", "cloudroot-boot", "cloud-init.log")
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, logb, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(eventsFile)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	for _, m := range ran {
		if !strings.Contains(got, "/config-"+m+": SUCCESS") {
			t.Errorf("module %s has no SUCCESS finish event", m)
		}
	}
}

// TestUpstreamAnalyzeReadsLog runs cloud-init's own `analyze show` and
// `analyze blame` (from CLOUDINIT_SRC, through scripts/upstream-cloudinit.sh)
// on a cloudroot boot's log and checks every module that ran is listed.
func TestUpstreamAnalyzeReadsLog(t *testing.T) {
	src := os.Getenv("CLOUDINIT_SRC")
	if src == "" {
		t.Skip("CLOUDINIT_SRC not set: upstream cloud-init source needed")
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not found")
	}
	logb, ran := bootLog(t)
	p := filepath.Join(t.TempDir(), "cloud-init.log")
	if err := os.WriteFile(p, logb, 0o644); err != nil {
		t.Fatal(err)
	}
	script, _ := filepath.Abs("../../scripts/upstream-cloudinit.sh")
	for _, sub := range []string{"show", "blame"} {
		out, err := exec.Command(script, "analyze", sub, "-i", p).CombinedOutput()
		if err != nil {
			t.Fatalf("analyze %s: %v\n%s", sub, err, out)
		}
		for _, m := range ran {
			if !bytes.Contains(out, []byte("config-"+m)) {
				t.Errorf("analyze %s does not list config-%s:\n%s", sub, m, out)
			}
		}
		if sub == "show" && !bytes.Contains(out, []byte("found local data from DataSourceNoCloud")) {
			t.Errorf("analyze show does not list the datasource search:\n%s", out)
		}
	}
}

// TestCloudInitLogAttrsOnce checks that no line of a boot's log (init,
// config and final stages) carries an attribute twice, such as the stage
// given both by the stage's logger and by the module runner, and that every
// module's "running module" line names its stage.
func TestCloudInitLogAttrsOnce(t *testing.T) {
	logb, _ := bootLog(t)
	key := regexp.MustCompile(` ([a-z_]+)=`)
	running := map[string]int{}
	for _, l := range strings.Split(string(logb), "\n") {
		seen := map[string]bool{}
		for _, m := range key.FindAllStringSubmatch(l, -1) {
			if seen[m[1]] {
				t.Errorf("attribute %s twice: %s", m[1], l)
			}
			seen[m[1]] = true
		}
		if _, rest, ok := strings.Cut(l, "]: running module stage="); ok {
			stage, _, _ := strings.Cut(rest, " ")
			running[stage]++
		} else if strings.Contains(l, "]: running module ") {
			t.Errorf("running module line without its stage first: %s", l)
		}
	}
	for _, s := range []string{"init", "modules-config", "modules-final"} {
		if running[s] == 0 {
			t.Errorf("no module ran with stage=%s (running lines per stage: %v)", s, running)
		}
	}
}
