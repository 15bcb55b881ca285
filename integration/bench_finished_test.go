package integration

import "testing"

// TestBootFinishedAt reads the host time of the boot-finished console line
// of each image's kind from a timestamped console log.
func TestBootFinishedAt(t *testing.T) {
	for _, tc := range []struct {
		name, log string
		want      float64
	}{
		{"cloud-init", "[   1.000] Linux version 6.1\n[  61.250] [   58.1] cloud-init[612]: Cloud-init v. 22.4.2 finished at Sun, 29 Nov 2026 04:00:00 +0000. Datasource DataSourceNoCloud [seed=/dev/sr0][dsmode=net].  Up 58.10 seconds\n", 61.25},
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
