package coldplug

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

// Defaults for Options.
const (
	DefaultRounds = 6
	DefaultSettle = 200 * time.Millisecond
	DefaultPoll   = 250 * time.Millisecond
	DefaultQuiet  = 5 * time.Second
)

// Softdep is a module's resolved soft dependencies (modules.softdep as
// cloudroot-mkinitramfs writes it: module names, no aliases).
type Softdep struct{ Pre, Post []string }

// ParseSoftdeps reads "softdep NAME pre: a b post: c" lines.
func ParseSoftdeps(r io.Reader) (map[string]Softdep, error) {
	out := map[string]Softdep{}
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		f := strings.Fields(text)
		if len(f) < 2 || f[0] != "softdep" {
			return nil, fmt.Errorf("modules.softdep line %d: want \"softdep NAME pre: ... post: ...\", got %q", line, text)
		}
		name := Normalize(f[1])
		sd := out[name]
		var dst *[]string
		for _, tok := range f[2:] {
			switch tok {
			case "pre:":
				dst = &sd.Pre
			case "post:":
				dst = &sd.Post
			default:
				if dst != nil {
					*dst = append(*dst, Normalize(tok))
				}
			}
		}
		out[name] = sd
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading modules.softdep: %w", err)
	}
	return out, nil
}

// DefaultSkip are modalias prefixes coldplug leaves alone: CPU features
// match crypto and checksum accelerators (sha256_ssse3, crct10dif_pclmul)
// that finding the root does not need and whose self-tests cost seconds
// under emulation; the booted system's udev loads them.
var DefaultSkip = []string{"cpu:"}

// Options configure Run and Watch.
type Options struct {
	// Sysfs is the sysfs root ("/sys").
	Sysfs string
	// Aliases are the packed modules' aliases.
	Aliases *Aliases
	// Softdeps are loaded around the module that names them.
	Softdeps map[string]Softdep
	// Load loads one module with its modules.dep dependencies (u-root's
	// kmodule.Prober.Probe). It is called concurrently, at most once per
	// module name per Coldplug.
	Load func(module string) error
	// Log receives one line per loaded module (debug), the summary and
	// the missing drivers (warn).
	Log *slog.Logger
	// Skip are modalias prefixes never matched (nil: DefaultSkip).
	Skip []string
	// Rounds bounds the scan/load rounds of Run (DefaultRounds).
	Rounds int
	// Settle is how long Run waits for late devices before its last scan
	// (DefaultSettle).
	Settle time.Duration
	// Poll is Watch's scan interval (DefaultPoll).
	Poll time.Duration
	// Quiet ends Watch once the set of devices has not changed for that
	// long (DefaultQuiet).
	Quiet time.Duration
}

// Missing is a storage or network device no packed module matches.
type Missing struct {
	Device
	Kind Kind
	Name string // "VMware PVSCSI", or the device class
}

// String is the console message for m.
func (m Missing) String() string {
	name := m.Name
	if name == "" {
		name = string(m.Kind)
	}
	return fmt.Sprintf("no driver for %s (%s) — not in this initramfs", Short(m.Modalias), name)
}

// Report is what a Run did.
type Report struct {
	Rounds  int
	Devices int      // with a modalias, at the last scan
	Loaded  []string // modules loaded (with softdeps), sorted
	Failed  map[string]error
	Missing []Missing
}

// Coldplug remembers which modules were tried and which missing devices
// were reported, across Run and Watch.
type Coldplug struct {
	opts Options

	mu       sync.Mutex
	tried    map[string]bool
	loaded   []string
	failed   map[string]error
	reported map[string]bool // device paths reported missing
	once     map[string]*loadOnce
}

type loadOnce struct {
	once sync.Once
	err  error
}

// New returns a Coldplug with opts' defaults filled in.
func New(opts Options) *Coldplug {
	if opts.Sysfs == "" {
		opts.Sysfs = "/sys"
	}
	if opts.Skip == nil {
		opts.Skip = DefaultSkip
	}
	if opts.Rounds <= 0 {
		opts.Rounds = DefaultRounds
	}
	if opts.Settle <= 0 {
		opts.Settle = DefaultSettle
	}
	if opts.Poll <= 0 {
		opts.Poll = DefaultPoll
	}
	if opts.Quiet <= 0 {
		opts.Quiet = DefaultQuiet
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.Aliases == nil {
		opts.Aliases = NewAliases(nil)
	}
	return &Coldplug{
		opts:     opts,
		tried:    map[string]bool{},
		failed:   map[string]error{},
		reported: map[string]bool{},
		once:     map[string]*loadOnce{},
	}
}

// Run scans and loads until a round finds nothing new to load (and, when
// something was loaded, a scan after Settle finds nothing either), or
// Rounds rounds have run. Missing
// drivers of storage and network devices are logged and reported.
func (c *Coldplug) Run(ctx context.Context) (*Report, error) {
	start := time.Now()
	rep := &Report{}
	settled, loadedAny := false, false
	var devs []Device
	for rep.Rounds < c.opts.Rounds {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		var err error
		devs, err = c.scan()
		if err != nil {
			return rep, err
		}
		rep.Rounds++
		want := c.pending(devs)
		if len(want) == 0 {
			// Only a load can make new devices appear: settle after one.
			if settled || !loadedAny {
				break
			}
			settled = true
			select {
			case <-time.After(c.opts.Settle):
			case <-ctx.Done():
				return rep, ctx.Err()
			}
			continue
		}
		settled, loadedAny = false, true
		c.loadAll(want)
	}
	rep.Devices = len(devs)
	rep.Missing = c.missing(devs)
	c.mu.Lock()
	rep.Loaded = slices.Sorted(slices.Values(c.loaded))
	rep.Failed = make(map[string]error, len(c.failed))
	for k, v := range c.failed {
		rep.Failed[k] = v
	}
	c.mu.Unlock()
	c.opts.Log.Info("coldplug done", "rounds", rep.Rounds, "devices", rep.Devices, "loaded", strings.Join(rep.Loaded, ","), "failed", len(rep.Failed), "duration", time.Since(start).Seconds())
	return rep, nil
}

// Watch keeps scanning every Poll, loading the modules new devices need
// (a USB disk that enumerates after Run returned) and reporting new devices
// without a driver, until ctx ends or the devices stay unchanged for Quiet.
func (c *Coldplug) Watch(ctx context.Context) {
	t := time.NewTicker(c.opts.Poll)
	defer t.Stop()
	last, changed := -1, time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		devs, err := c.scan()
		if err != nil {
			continue
		}
		if len(devs) != last {
			last, changed = len(devs), time.Now()
		} else if time.Since(changed) >= c.opts.Quiet {
			return
		}
		if want := c.pending(devs); len(want) > 0 {
			c.loadAll(want)
		}
		c.missing(devs)
	}
}

// scan is Scan without the skipped modaliases.
func (c *Coldplug) scan() ([]Device, error) {
	devs, err := Scan(c.opts.Sysfs)
	return slices.DeleteFunc(devs, func(d Device) bool {
		return slices.ContainsFunc(c.opts.Skip, func(p string) bool { return strings.HasPrefix(d.Modalias, p) })
	}), err
}

// pending returns the modules matching devices without a driver that were
// not tried yet, marking them tried.
func (c *Coldplug) pending(devs []Device) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var want []string
	for _, d := range devs {
		if d.Driver != "" {
			continue
		}
		for _, m := range c.opts.Aliases.Match(d.Modalias) {
			if !c.tried[m] {
				c.tried[m] = true
				want = append(want, m)
				c.opts.Log.Debug("coldplug match", "device", d.Path, "modalias", d.Modalias, "module", m)
			}
		}
	}
	return want
}

// missing logs (once per device) and returns the storage and network
// devices that have no driver and match no packed module.
func (c *Coldplug) missing(devs []Device) []Missing {
	var out []Missing
	for _, d := range devs {
		if d.Driver != "" || len(c.opts.Aliases.Match(d.Modalias)) > 0 {
			continue
		}
		kind, name := Describe(d.Modalias)
		if kind == Other {
			continue
		}
		m := Missing{Device: d, Kind: kind, Name: name}
		out = append(out, m)
		c.mu.Lock()
		seen := c.reported[d.Path]
		c.reported[d.Path] = true
		c.mu.Unlock()
		if !seen {
			c.opts.Log.Warn(m.String(), "device", d.Path, "modalias", d.Modalias)
		}
	}
	return out
}

// loadAll loads mods concurrently, each after its pre softdeps and before
// its post softdeps.
func (c *Coldplug) loadAll(mods []string) {
	var wg sync.WaitGroup
	for _, m := range mods {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.loadWithSoftdeps(m)
		}()
	}
	wg.Wait()
}

func (c *Coldplug) loadWithSoftdeps(m string) {
	sd := c.opts.Softdeps[m]
	for _, p := range sd.Pre {
		_ = c.load(p) // soft: a failed softdep does not stop the module
	}
	if err := c.load(m); err != nil {
		return
	}
	for _, p := range sd.Post {
		_ = c.load(p)
	}
}

// load loads one module once; concurrent callers wait for the first.
func (c *Coldplug) load(m string) error {
	c.mu.Lock()
	o := c.once[m]
	if o == nil {
		o = &loadOnce{}
		c.once[m] = o
	}
	c.mu.Unlock()
	o.once.Do(func() {
		start := time.Now()
		o.err = c.opts.Load(m)
		c.mu.Lock()
		defer c.mu.Unlock()
		if o.err != nil {
			c.failed[m] = o.err
			c.opts.Log.Debug("coldplug: module load failed", "module", m, "err", o.err)
			return
		}
		c.loaded = append(c.loaded, m)
		c.opts.Log.Debug("coldplug: module loaded", "module", m, "duration", time.Since(start).Seconds())
	})
	return o.err
}

// ReadModuleDir reads the modules.alias and modules.softdep of an image's
// module directory (/lib/modules/<ver>); either may be absent.
func ReadModuleDir(dir string) (*Aliases, map[string]Softdep, error) {
	var errs []error
	al := NewAliases(nil)
	if f, err := os.Open(dir + "/modules.alias"); err == nil {
		a, perr := ParseAliases(f)
		f.Close()
		if perr != nil {
			errs = append(errs, perr)
		} else {
			al = a
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, err)
	}
	sd := map[string]Softdep{}
	if f, err := os.Open(dir + "/modules.softdep"); err == nil {
		s, perr := ParseSoftdeps(f)
		f.Close()
		if perr != nil {
			errs = append(errs, perr)
		} else {
			sd = s
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, err)
	}
	return al, sd, errors.Join(errs...)
}
