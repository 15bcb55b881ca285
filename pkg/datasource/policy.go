package datasource

import (
	"fmt"
	"time"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/imds"
)

// The kernel command-line keys of the metadata timing policy
// (imds.Policy), each a number of seconds or a Go duration:
//
//	cloudroot.ds-deadline=  the whole datasource search (default 2m)
//	cloudroot.ds-probe=     one network datasource's detection window (5s)
//	cloudroot.ds-timeout=   each request once the service answered (10s)
//	cloudroot.ds-include=   every #include fetch of one user-data (2m)
//
// A datasource's own `max_wait` and `timeout` (system configuration or
// ds=...;max_wait=) still override probe and timeout for that source.
var policyKeys = []struct {
	key string
	set func(*imds.Policy, time.Duration)
}{
	{"cloudroot.ds-deadline", func(p *imds.Policy, d time.Duration) { p.Deadline = d }},
	{"cloudroot.ds-probe", func(p *imds.Policy, d time.Duration) { p.Probe = d }},
	{"cloudroot.ds-timeout", func(p *imds.Policy, d time.Duration) { p.Timeout = d }},
	{"cloudroot.ds-include", func(p *imds.Policy, d time.Duration) { p.Include = d }},
}

// CmdlinePolicy is the boot's metadata timing policy: the defaults, with
// the command line's keys over them, resolved. A malformed value is
// reported and its default kept. The initramfs's search and `cloudroot
// probe` both build their Env.Policy with it.
func CmdlinePolicy(cmdline bootenv.Cmdline) (imds.Policy, []error) {
	var p imds.Policy
	var errs []error
	for _, k := range policyKeys {
		v, ok := cmdline.Get(k.key)
		if !ok {
			continue
		}
		d, err := imds.ParseDuration(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s=%s: %w (using the default)", k.key, v, err))
			continue
		}
		k.set(&p, d)
	}
	return p.Resolve(), errs
}
