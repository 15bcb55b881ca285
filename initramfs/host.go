package initramfs

// Host-only images: the modules a given machine's devices need, found by
// matching the modaliases of a sysfs tree (the running machine's /sys or a
// snapshot of the target's) or of a list of modaliases against the module
// tree's modules.alias, the way the booted image's coldplug will.

import (
	"bufio"
	"fmt"
	"os"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/coldplug"
)

// ReadModaliases returns the device modaliases described by p: a sysfs root
// (a directory with bus/*/devices/*/modalias, such as /sys) or a text file
// with one modalias per line (`cat /sys/bus/*/devices/*/modalias` on the
// target). CPU feature aliases are left out (coldplug skips them too).
func ReadModaliases(p string) ([]string, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("host hardware: %w", err)
	}
	var out []string
	keep := func(m string) {
		m = strings.TrimSpace(m)
		for _, skip := range coldplug.DefaultSkip {
			if strings.HasPrefix(m, skip) {
				return
			}
		}
		if m != "" && !strings.HasPrefix(m, "#") {
			out = append(out, m)
		}
	}
	if fi.IsDir() {
		devs, err := coldplug.Scan(p)
		if err != nil {
			return nil, fmt.Errorf("host hardware: %w", err)
		}
		for _, d := range devs {
			keep(d.Modalias)
		}
		return out, nil
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("host hardware: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		keep(sc.Text())
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("host hardware: reading %s: %w", p, err)
	}
	return out, nil
}

// HostRequests returns on-demand requests for the modules of t whose
// aliases match modaliases, in the order the devices were listed, and a
// note per device saying what matched it.
func HostRequests(t *Tree, modaliases []string) ([]Request, []string) {
	al := t.Aliases()
	var (
		reqs  []Request
		notes []string
		seen  = map[string]bool{}
	)
	for _, m := range modaliases {
		mods := al.Match(m)
		if len(mods) == 0 {
			continue
		}
		notes = append(notes, fmt.Sprintf("host device %s: %s", m, strings.Join(mods, ", ")))
		for _, name := range mods {
			if !seen[name] {
				seen[name] = true
				reqs = append(reqs, Request{Name: name, Optional: true, OnDemand: true})
			}
		}
	}
	return reqs, notes
}
