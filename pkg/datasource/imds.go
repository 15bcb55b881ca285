package datasource

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"strconv"
	"time"

	"github.com/cloudroot/cloudroot/pkg/imds"
)

// IMDSDefaults are a network source's own defaults for its metadata
// client; configuration and Env override them (see Env.IMDS).
type IMDSDefaults struct {
	// BaseURLs are the service's default base URLs, tried in order.
	BaseURLs []string
	// Headers are sent on every request (Metadata-Flavor: Google, ...).
	Headers http.Header
	// Timeout bounds each request; 0 means imds.DefaultTimeout.
	Timeout time.Duration
	// Budget bounds the whole probe when neither the configuration
	// (`max_wait`) nor Env.Budget does.
	Budget time.Duration
	// Retries after the first attempt; 0 means as many as the budget
	// allows.
	Retries int
	// MaxBytes limits a body; 0 means imds.DefaultMaxBytes.
	MaxBytes int64
}

// IMDS builds the metadata client for source name. Under a Policy
// (Env.Policy, the initramfs's search), the Policy gives the detection
// window, the per-request timeout, the backoff and the bound of one call,
// and the source's configuration overrides them:
//
//   - base URLs: `metadata_urls` (or `metadata_url`), else def.BaseURLs;
//   - detection window: `max_wait` (seconds; zero or negative means one
//     attempt per URL), else Policy.Probe;
//   - per-request timeout once the service answered: `timeout`, else
//     Policy.Timeout (def.Timeout is not used: a source's short default
//     would drop a slow but working service);
//   - retries: `retries`, else def.Retries.
//
// Without a Policy, in order of precedence:
//
//   - base URLs: the source's `metadata_urls` (or `metadata_url`), else
//     def.BaseURLs;
//   - total budget: `max_wait` (seconds; zero or negative means one
//     attempt per URL, as cloud-init's "do not wait"), else Env.Budget,
//     else def.Budget, else imds.DefaultBudget;
//   - per-request timeout: `timeout` (seconds), else def.Timeout;
//   - retries: `retries`, else def.Retries;
//   - transport Env.HTTP and logger Env.Log (with the datasource name).
//
// Malformed values are reported in the error, naming the key.
func (e Env) IMDS(name string, def IMDSDefaults) (*imds.Client, error) {
	c := &imds.Client{
		BaseURLs: def.BaseURLs,
		HTTP:     e.HTTP,
		Timeout:  def.Timeout,
		Retries:  def.Retries,
		MaxBytes: def.MaxBytes,
		Headers:  def.Headers,
		Budget:   def.Budget,
		Logger:   e.Logger(name),
	}
	if e.Policy != nil {
		e.Policy.Apply(c)
	} else if e.Budget > 0 {
		c.Budget = e.Budget
	}
	if urls := e.MetadataURLs(name); len(urls) > 0 {
		c.BaseURLs = urls
	}
	cfg := e.SourceConfig(name)
	if v, ok := cfg["max_wait"]; ok {
		s, err := Seconds(v)
		if err != nil {
			return nil, fmt.Errorf("datasource %s: max_wait: %w", name, err)
		}
		switch {
		case s <= 0:
			c.Retries = -1
		case e.Policy != nil:
			c.ProbeWindow = s
		default:
			c.Budget = s
		}
	}
	if v, ok := cfg["timeout"]; ok {
		s, err := Seconds(v)
		if err != nil {
			return nil, fmt.Errorf("datasource %s: timeout: %w", name, err)
		}
		if s > 0 {
			c.Timeout = s
		}
	}
	if v, ok := cfg["retries"]; ok {
		n, err := Seconds(v)
		if err != nil {
			return nil, fmt.Errorf("datasource %s: retries: %w", name, err)
		}
		switch r := int(n / time.Second); {
		case r <= 0:
			c.Retries = -1
		default:
			c.Retries = r
		}
	}
	if len(c.BaseURLs) == 0 {
		return nil, fmt.Errorf("datasource %s: no metadata URL", name)
	}
	return c, nil
}

// Seconds reads a configuration value that is a number of seconds: a
// YAML/JSON number or a numeric string (without surrounding space). The
// error says what v is; callers name the key.
func Seconds(v any) (time.Duration, error) {
	var f float64
	switch t := v.(type) {
	case int:
		f = float64(t)
	case int64:
		f = float64(t)
	case float64:
		f = t
	case string:
		p, err := strconv.ParseFloat(t, 64)
		if err != nil {
			return 0, fmt.Errorf("%q is not a number", t)
		}
		f = p
	default:
		return 0, fmt.Errorf("%v (%T) is not a number", v, v)
	}
	return time.Duration(f * float64(time.Second)), nil
}

// Optional is the outcome of fetching a document that may be absent
// (user-data, vendor-data): a 404 (imds.ErrNotFound) is none, (nil, nil);
// an answer with an empty body is empty, not nil; any other failure is
// returned as is.
func Optional(r imds.Result) ([]byte, error) {
	if errors.Is(r.Err, imds.ErrNotFound) {
		return nil, nil
	}
	if r.Err == nil && r.Data == nil {
		return []byte{}, nil
	}
	return r.Data, r.Err
}

// Lease is what the ephemeral network's DHCP exchange told the initramfs,
// for sources that find their service through it (CloudStack's virtual
// router is the DHCP server; Azure's wireserver is in option 245).
type Lease struct {
	// Iface is the interface the lease is on.
	Iface string
	// Addr is the leased IPv4 address with its prefix.
	Addr netip.Prefix
	// Router is the first router (option 3).
	Router netip.Addr
	// ServerID is the DHCP server identifier (option 54).
	ServerID netip.Addr
	// Options holds the raw bytes of the DHCPv4 options the lease carried
	// that have no field above, by option code (Azure's 245).
	Options map[uint8][]byte
	// Hostname, Domain, DNS and NTP are DHCP options 12, 15, 6 and 42, as
	// a network-booted machine's DHCP server (dnsmasq, MAAS, Tinkerbell)
	// hands them out.
	Hostname string
	Domain   string
	DNS      []netip.Addr
	NTP      []netip.Addr
}

// Patient sets c up for a service that is probably there, when the
// configuration gave no `retries` (c.Retries is still the source's
// default, absent): a failure without an answer (refused, timed out) is
// retried absent times, as before, so a machine without the service is not
// held up; an answer that retrying may fix (5xx, 408, 429) up to read
// times, as cloud-init's reads are. It reports whether it did; the caller
// then drops the hook (Retry = nil) for the reads that follow the probe.
func (e Env) Patient(name string, c *imds.Client, absent, read int) bool {
	if _, set := e.SourceConfig(name)["retries"]; set || c.Retries != absent {
		return false
	}
	c.Retries = read
	c.Retry = func(err *imds.Error) bool {
		if err.Status == 0 {
			return imds.Retryable(err) && err.Attempts <= absent
		}
		return imds.Retryable(err)
	}
	return true
}

// Service is the start every metadata-service Get shares: ErrNeedNetwork
// while the network is down, the client IMDS builds for name from the
// configuration and def, and ctx bounded by the client's budget (cancel
// releases it; it is never nil). Errors are prefixed with tag.
func (e Env) Service(ctx context.Context, name, tag string, def IMDSDefaults) (context.Context, context.CancelFunc, *imds.Client, error) {
	if !e.NetworkUp {
		return ctx, func() {}, nil, fmt.Errorf("%s: %w", tag, ErrNeedNetwork)
	}
	c, err := e.IMDS(name, def)
	if err != nil {
		return ctx, func() {}, nil, fmt.Errorf("%s: %w", tag, err)
	}
	ctx, cancel := c.WithBudget(ctx)
	return ctx, cancel, c, nil
}
