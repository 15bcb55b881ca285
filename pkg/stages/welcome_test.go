package stages

import (
	"testing"
	"time"
)

func TestWelcome(t *testing.T) {
	got := Welcome("26.2", "modules:config", time.Date(2026, 11, 25, 14, 0, 5, 0, time.FixedZone("X", 3600)), 12.345)
	want := "Cloud-init v. 26.2 running 'modules:config' at Wed, 25 Nov 2026 13:00:05 +0000. Up 12.35 seconds.\n"
	if got != want {
		t.Errorf("Welcome = %q, want %q", got, want)
	}
}
