package modules

// ubuntu_pro, as cloud-init 26.x's cc_ubuntu_pro: `ubuntu_pro` (or one of
// the deprecated `ubuntu_advantage`/`ubuntu-advantage`, with cloud-init's
// warning; both deprecated keys are an error) installs
// ubuntu-advantage-tools when `pro` is missing, applies `config` (`pro
// config set KEY=VALUE` / `unset KEY` for null; proxy keys must be http(s)
// URLs), then attaches: automatically on an Ubuntu Pro image (unless
// `features.disable_auto_attach`), else with `token` (`pro attach`, then
// `pro enable --format json` for `enable`).
//
// cloud-init asks the pro client's Python API whether to auto-attach and
// to auto-attach; cloudroot asks the same endpoints through the target's
// client: `pro api u.pro.attach.auto.should_auto_attach.v1` and `pro api
// u.pro.attach.auto.full_auto_attach.v1 --data JSON`.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
	"github.com/cloudroot/cloudroot/pkg/state"
	"github.com/cloudroot/cloudroot/pkg/target"
)

// UbuntuPro is cc_ubuntu_pro.
var UbuntuPro = Module{
	Name:       "ubuntu_pro",
	Frequency:  state.PerInstance,
	Keys:       []string{"ubuntu_pro", "ubuntu_advantage", "ubuntu-advantage"},
	Distros:    []string{"ubuntu"},
	ActivateBy: []string{"ubuntu_pro", "ubuntu_advantage", "ubuntu-advantage"},
	Run:        Typed(runUbuntuPro),
}

var proConfigProps = []string{"http_proxy", "https_proxy", "global_apt_http_proxy", "global_apt_https_proxy",
	"ua_apt_http_proxy", "ua_apt_https_proxy"}

// failf records msg as cloud-init's LOG.error before raising, and returns it.
func failf(c *Context, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	c.Warnf("%s", msg)
	return errors.New(msg)
}

// ubuntuProConfig is the module's configuration: ubuntu_pro and its two
// deprecated spellings as given (cloud-init refuses both old ones
// together, and warns rather than logs a deprecation).
type ubuntuProConfig struct {
	HasPro bool `cfg:"ubuntu_pro,present"`
	Pro    any  `cfg:"ubuntu_pro"`
	HasUA1 bool `cfg:"ubuntu-advantage,present"`
	UA1    any  `cfg:"ubuntu-advantage"`
	HasUA2 bool `cfg:"ubuntu_advantage,present"`
	UA2    any  `cfg:"ubuntu_advantage"`
	// The sections when they are mappings, one per spelling.
	ProSec proSection `cfg:"ubuntu_pro,loose"`
	UA1Sec proSection `cfg:"ubuntu-advantage,loose"`
	UA2Sec proSection `cfg:"ubuntu_advantage,loose"`
}

// proSection is the ubuntu_pro mapping, its keys as given (checked by the
// module with cloud-init's messages).
type proSection struct {
	// All is the whole mapping: attach runs when it has any key but
	// features.
	All         map[string]any `cfg:",all"`
	HasCommands bool           `cfg:"commands,present"`
	Config      any            `cfg:"config"`
	// ConfigMap is config when it is a mapping: each property is set or
	// unset in turn (unknown ones warned about).
	ConfigMap   map[string]any `cfg:"config,loose"`
	Features    pyval.Opt      `cfg:"features"`
	FeatureKeys struct {
		DisableAutoAttach pyval.Opt `cfg:"disable_auto_attach"`
	} `cfg:"features,loose"`
	Token      any       `cfg:"token"`
	Enable     pyval.Opt `cfg:"enable"`
	EnableBeta pyval.Opt `cfg:"enable_beta"`
}

func runUbuntuPro(ctx context.Context, c *Context, cfg ubuntuProConfig) error {
	var section any
	found := false
	var deprecated []string
	var oldV []any
	var oldSec []proSection
	for _, k := range []struct {
		has  bool
		name string
		v    any
		sec  proSection
	}{{cfg.HasUA1, "ubuntu-advantage", cfg.UA1, cfg.UA1Sec}, {cfg.HasUA2, "ubuntu_advantage", cfg.UA2, cfg.UA2Sec}} {
		if k.has {
			deprecated = append(deprecated, k.name)
			oldV, oldSec = append(oldV, k.v), append(oldSec, k.sec)
		}
	}
	var pro proSection
	if len(deprecated) > 1 {
		return fmt.Errorf("Unable to configure Ubuntu Pro. Multiple deprecated config keys provided: %s", strings.Join(deprecated, ", "))
	}
	if len(deprecated) == 1 {
		c.Warnf("Deprecated configuration key(s) provided: %s. Expected \"ubuntu_pro\"; will attempt to continue.", deprecated[0])
		section, pro, found = oldV[0], oldSec[0], true
	}
	if cfg.HasPro {
		if len(deprecated) == 1 {
			c.Warnf("Ignoring deprecated key %s and preferring ubuntu_pro config", deprecated[0])
		}
		section, pro, found = cfg.Pro, cfg.ProSec, true
	}
	if !found || section == nil {
		c.Log.Debug("Skipping module named ubuntu_pro, no 'ubuntu_pro' configuration found")
		return nil
	}
	if !isMapping(section) {
		return failf(c, "'ubuntu_pro' should be a dict, not a %s", pyval.TypeName(section))
	}
	if pro.HasCommands {
		return failf(c, `Deprecated configuration "ubuntu-advantage: commands" provided. Expected "token"`)
	}
	if !c.Which("pro") {
		if err := c.InstallPackages(ctx, c.Facts(), []string{"ubuntu-advantage-tools"}); err != nil {
			c.Logexc("Failed to install ubuntu-advantage-tools")
			return err
		}
	}
	if err := proConfig(ctx, c, pro.Config, pro.ConfigMap); err != nil {
		return err
	}
	disable := false
	if f := pro.Features; f.Given {
		if !isMapping(f.Value) {
			return failf(c, "'ubuntu_pro.features' should be a dict, not a %s", pyval.TypeName(f.Value))
		}
		if d := pro.FeatureKeys.DisableAutoAttach; d.Given {
			d := d.Value
			b, ok := d.(bool)
			if !ok {
				return failf(c, "'ubuntu_pro.features.disable_auto_attach' should be a bool, not a %s", pyval.TypeName(d))
			}
			disable = b
		}
	}
	if !disable && proShouldAutoAttach(ctx, c) {
		return proAutoAttach(ctx, c, pro)
	}
	for k := range pro.All {
		if k != "features" {
			return proAttach(ctx, c, pro)
		}
	}
	return nil
}

// proAPI runs `pro api ENDPOINT [--data JSON]` and returns its answer's
// data attributes, or the first error's code and message.
func proAPI(ctx context.Context, c *Context, endpoint string, data []byte) (json.RawMessage, string, error) {
	argv := []string{"pro", "api", endpoint}
	if data != nil {
		argv = append(argv, "--data", string(data))
	}
	r, runErr := c.RunCapture(ctx, argv...)
	var resp struct {
		Result string `json:"result"`
		Data   struct {
			// Attributes is the endpoint's answer, decoded by the
			// caller (an object or null, else the answer is refused).
			Attributes json.RawMessage `json:"attributes"`
		} `json:"data"`
		Errors []struct {
			Code    string `json:"code"`
			Title   string `json:"title"`
			Message string `json:"message"`
		} `json:"errors"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &resp); err != nil {
		return nil, "", errors.Join(runErr, fmt.Errorf("pro api %s: answer is not JSON: %w", endpoint, err))
	}
	if a := resp.Data.Attributes; len(a) > 0 {
		if err := json.Unmarshal(a, &struct{}{}); err != nil {
			return nil, "", errors.Join(runErr, fmt.Errorf("pro api %s: answer is not JSON: %w", endpoint, err))
		}
	}
	if resp.Result != "success" || len(resp.Errors) > 0 {
		code, msg := "", "failure"
		if len(resp.Errors) > 0 {
			code, msg = resp.Errors[0].Code, resp.Errors[0].Title
			if msg == "" {
				msg = resp.Errors[0].Message
			}
		}
		return nil, code, errors.New(msg)
	}
	return resp.Data.Attributes, "", nil
}

func proShouldAutoAttach(ctx context.Context, c *Context) bool {
	attrs, _, err := proAPI(ctx, c, "u.pro.attach.auto.should_auto_attach.v1", nil)
	if err != nil {
		c.Log.Debug(fmt.Sprintf("Error during `should_auto_attach`: %v", err))
		c.Warnf("Unable to determine if this is an Ubuntu Pro instance. Fallback to normal Pro attach.")
		return false
	}
	// Anything but a JSON true is false.
	var a struct {
		ShouldAutoAttach bool `json:"should_auto_attach"`
	}
	_ = json.Unmarshal(attrs, &a)
	return a.ShouldAutoAttach
}

func proAutoAttach(ctx context.Context, c *Context, pro proSection) error {
	opts := map[string]any{}
	for _, k := range []struct {
		name string
		o    pyval.Opt
	}{{"enable", pro.Enable}, {"enable_beta", pro.EnableBeta}} {
		if k.o.Value != nil {
			opts[k.name] = k.o.Value
		}
	}
	data, err := json.Marshal(opts)
	if err != nil {
		return fmt.Errorf("ubuntu_pro: %w", err)
	}
	_, code, err := proAPI(ctx, c, "u.pro.attach.auto.full_auto_attach.v1", data)
	switch {
	case err == nil:
	case code == "already-attached":
		if len(opts) > 0 {
			c.Warnf("The instance is already attached to Pro. Leaving enabled services untouched. Ignoring config directives ubuntu_pro: enable and enable_beta")
		}
	default:
		return failf(c, "Error during `full_auto_attach`: %v", err)
	}
	return nil
}

// pyReEscape is Python's re.escape (3.7+).
func pyReEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune("()[]{}?*+-|^$\\.&~# \t\n\r\v\f", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

var (
	whitespace = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\s`) })
	schemeRE   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([A-Za-z][A-Za-z0-9+.-]*):`) })
)

// urlScheme is urllib.parse.urlparse(s).scheme, lowercased: lenient,
// unlike net/url, about what follows it.
func urlScheme(s string) string {
	if m := schemeRE().FindStringSubmatch(s); m != nil {
		return strings.ToLower(m[1])
	}
	return ""
}

// v is config as given, cfg its contents when it is a mapping.
func proConfig(ctx context.Context, c *Context, v any, cfg map[string]any) error {
	if v == nil {
		return nil
	}
	if !isMapping(v) {
		return fmt.Errorf("ubuntu_pro: config should be a dict, not a %s; skipping enabling config parameters", pyval.TypeName(v))
	}
	keys := sortedKeys(cfg)
	var bad []string
	for _, k := range keys {
		val := cfg[k]
		switch {
		case !slices.Contains(proConfigProps, k):
			c.Warnf("Not validating unknown ubuntu_pro.config.%s property", k)
			continue
		case val == nil:
			continue
		}
		s, isStr := val.(string)
		if !isStr {
			bad = append(bad, "Expected a URL for ua:config:"+k)
			continue
		}
		if sch := urlScheme(s); sch != "http" && sch != "https" {
			bad = append(bad, "Expected URL scheme http/https for ua:config:"+k)
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("Invalid ubuntu_pro configuration:\n%s", strings.Join(bad, "\n"))
	}
	var failed []string
	for _, k := range keys {
		val := cfg[k]
		argv := []string{"pro", "config", "unset", k}
		if val != nil {
			s := pyval.Str(val)
			if whitespace().MatchString(s) {
				s = pyReEscape(s)
			}
			argv = []string{"pro", "config", "set", k + "=" + s}
		}
		if _, err := c.RunCapture(ctx, argv...); err != nil {
			msg := err.Error()
			if val != nil {
				msg = strings.ReplaceAll(msg, pyval.Str(val), "REDACTED")
			}
			c.Warnf("Failure enabling/disabling \"%s\":\n%s", k, msg)
			failed = append(failed, `"`+k+`"`)
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("Failure enabling/disabling Ubuntu Pro config(s): %s", strings.Join(failed, ", "))
	}
	return nil
}

func proAttach(ctx context.Context, c *Context, pro proSection) error {
	token := pyval.Str(pro.Token)
	if !pyval.Truthy(pro.Token) {
		return failf(c, "`ubuntu_pro.token` required in non-Pro Ubuntu instances.")
	}
	var enable []string
	switch t := pro.Enable.Value.(type) {
	case nil:
	case string:
		c.Warnf("ubuntu_pro: enable should be a list, not a string; treating as a single enable")
		enable = []string{t}
	case []any:
		for _, e := range t {
			enable = append(enable, pyval.Str(e))
		}
	default:
		c.Warnf("ubuntu_pro: enable should be a list, not a %s; skipping enabling services", pyval.TypeName(t))
	}
	argv := []string{"pro", "attach", token}
	if len(enable) > 0 {
		argv = []string{"pro", "attach", "--no-auto-enable", token}
	}
	if _, err := c.RunCapture(ctx, argv...); err != nil {
		var xe *target.ExitError
		if !errors.As(err, &xe) || xe.Code != 2 {
			msg := "Failure attaching Ubuntu Pro:\n" + strings.ReplaceAll(err.Error(), token, "REDACTED")
			c.Logexc("%s", msg)
			return errors.New(msg)
		}
	}
	if len(enable) == 0 {
		return nil
	}
	r, err := c.RunCapture(ctx, append([]string{"pro", "enable", "--assume-yes", "--format", "json"}, enable...)...)
	if err != nil {
		var xe *target.ExitError
		if !errors.As(err, &xe) || xe.Code != 1 {
			return fmt.Errorf("Error while enabling service(s): %s: %w", strings.Join(enable, ", "), err)
		}
	}
	// Each error's fields are any JSON value (pyval.Str prints them as
	// Python does); Service is nil when absent or null.
	var resp struct {
		Errors []struct {
			MessageCode any `json:"message_code"`
			Service     any `json:"service"`
			Message     any `json:"message"`
			Type        any `json:"type"`
		} `json:"errors"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &resp); err != nil {
		return fmt.Errorf("Pro response was not json: %s", r.Stdout)
	}
	var services []string
	failed := false
	for _, e := range resp.Errors {
		if e.MessageCode == "service-already-enabled" {
			continue
		}
		failed = true
		if e.Service != nil {
			services = append(services, pyval.Str(e.Service))
			c.Logexc("Failure enabling `%s`: %s", pyval.Str(e.Service), pyval.Str(e.Message))
		} else {
			c.Logexc("Failure of type `%s`: %s", pyval.Str(e.Type), pyval.Str(e.Message))
		}
	}
	if failed {
		return fmt.Errorf("Failure enabling Ubuntu Pro service(s): %s", strings.Join(services, ", "))
	}
	return nil
}
