package modules

// phone_home, as cloud-init 26.x's cc_phone_home does it: POST a form of
// the instance's SSH host keys, instance-id, hostname and fqdn (all, or the
// `post` list, in its order; an unknown name is sent as "N/A") to `url`,
// whose $INSTANCE_ID / ${INSTANCE_ID} are filled in. `tries` attempts (10
// by default; a non-integer is 10), 3 s apart. A POST that never succeeds
// is a warning, not a failure of the module, as upstream logs and goes on.
//
// HTTP goes through pkg/imds (the project's client policy): no proxy, no
// redirect to another host, bounded bodies, and — unlike cloud-init's
// url_helper — a 4xx answer other than 408/429 is final rather than retried.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cloudroot/cloudroot/pkg/imds"
	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
	"github.com/cloudroot/cloudroot/pkg/modules/internal/render"
	"github.com/cloudroot/cloudroot/pkg/state"
)

// PhoneHomePostAll is cloud-init's POST_LIST_ALL, in its order.
var PhoneHomePostAll = []string{"pub_key_rsa", "pub_key_ecdsa", "pub_key_ed25519", "instance_id", "hostname", "fqdn"}

// Phone-home defaults (cloud-init's).
const (
	DefaultPhoneHomeTries = 10
	DefaultPhoneHomeDelay = 3 * time.Second
	// DefaultPhoneHomeTimeout bounds one attempt (cloud-init sets none).
	DefaultPhoneHomeTimeout = 30 * time.Second
)

// PhoneHomeOptions tune the transport; the zero value is cloud-init's
// behaviour over imds' default transport.
type PhoneHomeOptions struct {
	HTTP    *http.Client
	Delay   time.Duration // between attempts; DefaultPhoneHomeDelay if 0
	Timeout time.Duration // per attempt; DefaultPhoneHomeTimeout if 0
}

// PhoneHome is cc_phone_home.
var PhoneHome = NewPhoneHome(PhoneHomeOptions{})

// NewPhoneHome builds the phone_home module with opts.
func NewPhoneHome(opts PhoneHomeOptions) Module {
	return Module{
		Name:       "phone_home",
		Frequency:  state.PerInstance,
		Keys:       []string{"phone_home"},
		ActivateBy: []string{"phone_home"},
		Run: Typed(func(ctx context.Context, c *Context, cfg phoneHomeKeys) error {
			return runPhoneHome(ctx, c, opts, cfg)
		}),
	}
}

// phoneHomeConfig is the phone_home key, decoded once.
type phoneHomeConfig struct {
	URL   string
	Post  []string
	Tries int
	// Notes are problems decoding found and recovered from.
	Notes []string
}

// phoneHomeKeys is the module's configuration: phone_home as given (its
// shape checked by decodePhoneHome) and, when it is a mapping, its keys.
type phoneHomeKeys struct {
	Present   bool             `cfg:"phone_home,present"`
	PhoneHome any              `cfg:"phone_home"`
	Section   phoneHomeSection `cfg:"phone_home,loose"`
}

// phoneHomeSection is the phone_home mapping, each key as given (post and
// tries are read with cloud-init's loose typing by decodePhoneHome).
type phoneHomeSection struct {
	URL   pyval.Opt `cfg:"url"`
	Post  any       `cfg:"post"`
	Tries pyval.Opt `cfg:"tries"`
}

// decodePhoneHome reads phone_home; ok is false when there is nothing to
// do (no key, or no url: cloud-init skips with a warning then).
func decodePhoneHome(cfg phoneHomeKeys) (p phoneHomeConfig, ok bool, err error) {
	raw, present := cfg.PhoneHome, cfg.Present
	if !present {
		return p, false, nil
	}
	if !isMapping(raw) {
		return p, false, fmt.Errorf("phone_home: expected a mapping, got %T", raw)
	}
	m := cfg.Section
	if !m.URL.Given {
		p.Notes = append(p.Notes, "Skipping module named phone_home, no 'url' found in 'phone_home' configuration")
		return p, false, nil
	}
	p.URL = scalarString(m.URL.Value)
	switch t := m.Post.(type) {
	case nil:
		p.Post = PhoneHomePostAll
	case string:
		if t == "all" {
			p.Post = PhoneHomePostAll
		} else {
			// Python iterates the string's characters, each unknown.
			for _, r := range t {
				p.Post = append(p.Post, string(r))
			}
		}
	case []any:
		for _, e := range t {
			p.Post = append(p.Post, scalarString(e))
		}
	default:
		return p, false, fmt.Errorf("phone_home.post: expected \"all\" or a list, got %T", t)
	}
	p.Tries = DefaultPhoneHomeTries
	if m.Tries.Given {
		n, convErr := pyInt(m.Tries.Value)
		if convErr != nil {
			p.Notes = append(p.Notes, fmt.Sprintf("Configuration entry 'tries' is not an integer, using %d instead", DefaultPhoneHomeTries))
		} else {
			p.Tries = n
		}
	} else {
		// cloud-init's int(None) fails too, and says so.
		p.Notes = append(p.Notes, fmt.Sprintf("Configuration entry 'tries' is not an integer, using %d instead", DefaultPhoneHomeTries))
	}
	return p, true, nil
}

// pyInt is Python's int() on a YAML scalar.
func pyInt(v any) (int, error) {
	switch t := v.(type) {
	case int:
		return t, nil
	case float64:
		return int(t), nil
	case bool:
		if t {
			return 1, nil
		}
		return 0, nil
	case string:
		return strconv.Atoi(strings.TrimSpace(t))
	}
	return 0, fmt.Errorf("not an integer: %T", v)
}

// phoneHomeForm builds the body: the requested keys in order, each once,
// form-encoded as Python's urlencode does.
func phoneHomeForm(c *Context, post []string) string {
	hostname, _ := dsHostname(c, false)
	fqdn, _ := dsHostname(c, true)
	all := map[string]string{"instance_id": c.InstanceID, "hostname": hostname, "fqdn": fqdn}
	for name, p := range map[string]string{
		"pub_key_rsa":     "/etc/ssh/ssh_host_rsa_key.pub",
		"pub_key_ecdsa":   "/etc/ssh/ssh_host_ecdsa_key.pub",
		"pub_key_ed25519": "/etc/ssh/ssh_host_ed25519_key.pub",
	} {
		if !slices.Contains(post, name) {
			continue
		}
		b, err := c.Root.ReadFile(p)
		if err != nil {
			c.Warnf("%s: failed to open, can not phone home that data!", p)
			continue
		}
		all[name] = string(b)
	}
	var seen []string
	var fields []string
	for _, k := range post {
		if slices.Contains(seen, k) {
			continue
		}
		seen = append(seen, k)
		v, ok := all[k]
		if !ok {
			c.Warnf("Requested key %s from 'post' configuration list not available", k)
			v = "N/A"
		}
		fields = append(fields, url.QueryEscape(k)+"="+url.QueryEscape(v))
	}
	return strings.Join(fields, "&")
}

func runPhoneHome(ctx context.Context, c *Context, opts PhoneHomeOptions, cfg phoneHomeKeys) error {
	p, ok, err := decodePhoneHome(cfg)
	for _, n := range p.Notes {
		c.Warnf("%s", n)
	}
	if err != nil || !ok {
		return err
	}
	u, err := render.Basic(p.URL, map[string]string{"INSTANCE_ID": c.InstanceID})
	if err != nil {
		return fmt.Errorf("phone_home url: %w", err)
	}
	body := phoneHomeForm(c, p.Post)
	delay := opts.Delay
	if delay <= 0 {
		delay = DefaultPhoneHomeDelay
	}
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultPhoneHomeTimeout
	}
	retries := p.Tries - 1
	if retries <= 0 {
		retries = -1
	}
	client := &imds.Client{
		BaseURLs: []string{u},
		HTTP:     opts.HTTP,
		Timeout:  timeout,
		Retries:  retries,
		// A fixed delay: Initial = Max, and a negligible random part.
		Backoff: imds.Backoff{Initial: delay, Max: delay, Jitter: 1e-9},
		Budget:  -1,
		Headers: http.Header{"User-Agent": {"Cloud-Init/" + c.Version}},
		Logger:  c.Log,
	}
	_, err = client.Do(ctx, imds.Request{
		Method: http.MethodPost,
		Header: http.Header{"Content-Type": {"application/x-www-form-urlencoded"}},
		Body:   []byte(body),
	})
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return err
		}
		tries := max(p.Tries, 1)
		c.Warnf("Failed to post phone home data to %s in %d tries: %v", u, tries, err)
	}
	return nil
}
