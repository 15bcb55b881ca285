package integration

import (
	"strings"
	"testing"
)

// TestBootFinishedAt reads the host time of the boot-finished console line
// of each image's kind from a timestamped console log.
func TestBootFinishedAt(t *testing.T) {
	for _, tc := range []struct {
		name, log string
		want      float64
	}{
		{"cloud-init", "[   1.000] Linux version 6.1\n[  61.250] [   58.1] cloud-init[612]: Cloud-init v. 22.4.2 finished at Sun, 29 Nov 2026 04:00:00 +0000. Datasource DataSourceNoCloud [seed=/dev/sr0].  Up 58.10 seconds\n", 61.25},
		{"bare", "[  40.500] bare twin finished at Sun, 29 Nov 2026 04:00:00 +0000. Up 38.02 seconds\n[  41.000] later finished at x. Up 1 seconds\n", 40.5},
		{"none", "[   1.000] Linux version 6.1\n[   9.000] reboot: Power down\n", -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := bootFinishedAt(tc.log); got != tc.want {
				t.Errorf("bootFinishedAt = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestBenchTable formats three images' runs: the bare twin has no stages
// (—), the ratios are to its medians, and the goals get a verdict.
func TestBenchTable(t *testing.T) {
	run := func(total, done, sshd float64, stages map[string]float64) benchRun {
		return benchRun{total: total, done: done, sshd: sshd, stages: stages, mods: map[string]float64{}, keyCPU: -1}
	}
	st := map[string]float64{"init-local": 1, "init": 2, "modules-config": 1, "modules-final": 3}
	runs := map[string][]benchRun{
		"cloudroot":  {run(105, 90, 50, st), run(100, 80, 40, st)},
		"cloud-init": {run(200, 150, 90, st)},
		"bare":       {run(100, 80, 40, nil), run(90, 70, 30, nil)},
	}
	got := benchTable(runs, 2)
	for _, want := range []string{
		"| QEMU start -> power-off                          |    105.00 |     200.00 |    100.00 |    0.53 |    1.05 |    2.00 |",
		"| stage init                                       |      2.00 |       2.00 |         — |    1.00 |       — |       — |",
		"kernel start -> sshd accepting: cloudroot 1.250× the bare twin (goal at most 1.10×): NOT met; cloud-init 2.25×",
		"QEMU start -> power-off: cloudroot 1.050× the bare twin (goal at most 1.10×): met; cloud-init 2.00×",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
}
