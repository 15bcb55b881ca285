package datasource

import (
	"strings"
	"testing"
	"time"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/imds"
)

func TestCmdlinePolicy(t *testing.T) {
	def := imds.DefaultPolicy()
	for _, tc := range []struct {
		name    string
		cmdline string
		want    imds.Policy
		errs    []string
	}{
		{"defaults", "console=ttyS0", def, nil},
		{"all keys", "cloudroot.ds-deadline=300 cloudroot.ds-probe=10s cloudroot.ds-timeout=50 cloudroot.ds-include=1m",
			imds.Policy{Deadline: 5 * time.Minute, Probe: 10 * time.Second, Timeout: 50 * time.Second, Include: time.Minute}, nil},
		{"probe cut to the deadline", "cloudroot.ds-deadline=3 cloudroot.ds-probe=10",
			imds.Policy{Deadline: 3 * time.Second, Probe: 3 * time.Second, Timeout: 3 * time.Second, Include: def.Include}, nil},
		{"malformed keeps the default", "cloudroot.ds-deadline=soon cloudroot.ds-probe=0",
			def, []string{"cloudroot.ds-deadline=soon", "cloudroot.ds-probe=0"}},
		{"last wins", "cloudroot.ds-probe=2 cloudroot.ds-probe=4",
			imds.Policy{Deadline: def.Deadline, Probe: 4 * time.Second, Timeout: def.Timeout, Include: def.Include}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, errs := CmdlinePolicy(bootenv.ParseCmdline(tc.cmdline))
			if got != tc.want {
				t.Errorf("policy = %+v, want %+v", got, tc.want)
			}
			if len(errs) != len(tc.errs) {
				t.Fatalf("errors %v, want %d", errs, len(tc.errs))
			}
			for i, e := range errs {
				if !strings.Contains(e.Error(), tc.errs[i]) {
					t.Errorf("error %q does not name %q", e, tc.errs[i])
				}
			}
		})
	}
}
