package modules

// rh_subscription, as cloud-init 26.x's cc_rh_subscription: with
// `username`+`password` or `activation_key` (+`org`), a system that
// `subscription-manager identity` does not know is registered, then
// attached (`auto_attach`, with `service_level`), given `add_pool` pools
// that are available and not consumed, `enable_repo`/`disable_repo` repos
// toggled, and `release_version` set (the dnf and yum caches deleted).
// Every hyphenated spelling cloud-init still reads (`activation-key`,
// `auto-attach`, `rhsm-baseurl`...) is read when the underscored one is
// absent. A failing step is cloud-init's two warnings, not a module error.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
	"github.com/cloudroot/cloudroot/pkg/state"
)

// RHSubscription is cc_rh_subscription.
var RHSubscription = Module{
	Name:       "rh_subscription",
	Frequency:  state.PerInstance,
	Keys:       []string{"rh_subscription"},
	Distros:    []string{"fedora", "rhel"},
	ActivateBy: []string{"rh_subscription"},
	Run:        Typed(runRHSubscription),
}

// rhsm is the rh_subscription mapping; a nil field was not given.
type rhsm struct {
	org, user, password, release, baseURL, server, activationKey any
	pools, autoAttach, enableRepo, disableRepo, serviceLevel     any
}

// rhsmKeys is the rh_subscription mapping as given: the keys cloud-init
// reads with underscores or, when that spelling is absent, with hyphens
// (both spellings given: the underscore one, null included).
type rhsmKeys struct {
	Org            any       `cfg:"org"`
	User           any       `cfg:"username"`
	Password       any       `cfg:"password"`
	Release        any       `cfg:"release_version"`
	BaseURL        pyval.Opt `cfg:"rhsm_baseurl"`
	BaseURLH       any       `cfg:"rhsm-baseurl"`
	Server         pyval.Opt `cfg:"server_hostname"`
	ServerH        any       `cfg:"server-hostname"`
	Pools          pyval.Opt `cfg:"add_pool"`
	PoolsH         any       `cfg:"add-pool"`
	ActivationKey  pyval.Opt `cfg:"activation_key"`
	ActivationKeyH any       `cfg:"activation-key"`
	AutoAttach     pyval.Opt `cfg:"auto_attach"`
	AutoAttachH    any       `cfg:"auto-attach"`
	EnableRepo     pyval.Opt `cfg:"enable_repo"`
	EnableRepoH    any       `cfg:"enable-repo"`
	DisableRepo    pyval.Opt `cfg:"disable_repo"`
	DisableRepoH   any       `cfg:"disable-repo"`
	ServiceLevel   pyval.Opt `cfg:"service_level"`
	ServiceLevelH  any       `cfg:"service-level"`
}

func decodeRHSM(k rhsmKeys) rhsm {
	get := func(o pyval.Opt, hyphen any) any {
		if o.Given {
			return o.Value
		}
		return hyphen
	}
	return rhsm{
		org: k.Org, user: k.User, password: k.Password, release: k.Release,
		baseURL: get(k.BaseURL, k.BaseURLH), server: get(k.Server, k.ServerH), pools: get(k.Pools, k.PoolsH),
		activationKey: get(k.ActivationKey, k.ActivationKeyH), autoAttach: get(k.AutoAttach, k.AutoAttachH),
		enableRepo: get(k.EnableRepo, k.EnableRepoH), disableRepo: get(k.DisableRepo, k.DisableRepoH),
		serviceLevel: get(k.ServiceLevel, k.ServiceLevelH),
	}
}

// errSubscription is cloud-init's SubscriptionError: a warning, not a failure.
type errSubscription struct{ msg string }

func (e errSubscription) Error() string { return e.msg }

func subErr(format string, args ...any) error { return errSubscription{fmt.Sprintf(format, args...)} }

// rhSubscriptionConfig is the module's configuration: rh_subscription as given, its shape
// checked by the module with the module's own message.
type rhSubscriptionConfig struct {
	HasRHSubscription bool     `cfg:"rh_subscription,present"`
	RHSubscription    any      `cfg:"rh_subscription"`
	Keys              rhsmKeys `cfg:"rh_subscription,loose"`
}

func runRHSubscription(ctx context.Context, c *Context, cfg rhSubscriptionConfig) error {
	if raw := cfg.RHSubscription; cfg.HasRHSubscription && !isMapping(raw) {
		return fmt.Errorf("rh_subscription: expected a mapping, got %s", pyval.TypeName(raw))
	}
	s := decodeRHSM(cfg.Keys)
	if !((pyval.Truthy(s.user) && pyval.Truthy(s.password)) || pyval.Truthy(s.activationKey)) {
		return nil
	}
	sm := func(args ...string) (CmdResult, error) {
		return c.RunCapture(ctx, append([]string{"subscription-manager"}, args...)...)
	}
	if _, err := sm("identity"); err == nil {
		c.Log.Info("System is already registered")
		return nil
	}
	err := rhsmRegister(ctx, c, s, sm)
	var se errSubscription
	if errors.As(err, &se) {
		c.Warnf("%s", se.msg)
		c.Warnf("rh_subscription plugin did not complete successfully")
		return nil
	}
	if err == nil {
		c.Log.Info("rh_subscription plugin completed successfully")
	}
	return err
}

func rhsmRegister(ctx context.Context, c *Context, s rhsm, sm func(...string) (CmdResult, error)) error {
	if s.autoAttach != nil && !(pyval.IsTrue(s.autoAttach) || pyval.IsFalse(s.autoAttach)) {
		return subErr("The key auto_attach must be a boolean value (True/False)")
	}
	autoOn := pyval.Truthy(s.autoAttach)
	if s.serviceLevel != nil && (!autoOn || pyval.IsFalse(pyval.Str(s.autoAttach))) {
		return subErr("The service_level key must be used in conjunction with the auto_attach key.  Please re-run with auto_attach: True")
	}
	var args []string
	switch {
	case s.activationKey != nil && s.org != nil:
		args = []string{"register", "--activationkey=" + pyval.Str(s.activationKey), "--org=" + pyval.Str(s.org)}
	case s.user != nil && s.password != nil:
		args = []string{"register", "--username=" + pyval.Str(s.user), "--password=" + pyval.Str(s.password)}
	default:
		c.Warnf("Unable to register system due to incomplete information.")
		c.Warnf("Use either activationkey and org *or* userid and password")
		return subErr("Registration failed or did not run completely")
	}
	if s.baseURL != nil {
		args = append(args, "--baseurl="+pyval.Str(s.baseURL))
	}
	if s.server != nil {
		args = append(args, "--serverurl="+pyval.Str(s.server))
	}
	r, err := sm(args...)
	if err != nil {
		if r.Stdout == "" {
			c.Warnf("Registration failed due to: %s", r.Stderr)
		}
		return subErr("Registration failed or did not run completely")
	}
	if _, id, ok := strings.Cut(r.Stdout, "ID: "); !ok {
		return fmt.Errorf("rh_subscription: no ID in the output of subscription-manager register")
	} else {
		c.Log.Debug("Registered successfully with ID " + strings.TrimRight(id, " \t\r\n"))
	}
	switch {
	case autoOn && s.serviceLevel != nil:
		r, err := sm("attach", "--auto", "--servicelevel="+pyval.Str(s.serviceLevel))
		if err != nil {
			if strings.TrimRight(r.Stdout, " \t\r\n") != "" {
				for _, l := range strings.Split(r.Stdout, "\n") {
					if l != "" {
						c.Warnf("%s", l)
					}
				}
			} else {
				c.Warnf("Setting the service level failed with: %s", strings.TrimSpace(r.Stderr))
			}
			return subErr("Setting of service_level failed")
		}
	case autoOn:
		if _, err := sm("attach", "--auto"); err != nil {
			c.Warnf("auto_attach failed with: %v", err)
			return subErr("Setting auto_attach failed")
		}
	}
	if s.pools != nil {
		pools, ok := s.pools.([]any)
		if !ok {
			return subErr("Pools must in the format of a list")
		}
		if !rhsmPools(c, pools, sm) {
			return subErr("Unable to attach pools %s", pyval.Repr(anyStrings(pools)))
		}
	}
	if !rhsmRepos(c, s, sm) {
		return subErr("Unable to add or remove repos")
	}
	if pyval.Truthy(s.release) {
		if _, err := sm("release", "--set="+pyval.Str(s.release)); err != nil {
			return subErr("Unable to set release_version using: %s", pyval.Repr([]string{"release", "--set=" + pyval.Str(s.release)}))
		}
		for _, d := range []string{"/var/cache/dnf", "/var/cache/yum"} {
			if fi, err := c.Root.Stat(d); err != nil || !fi.IsDir() {
				return subErr("Unable to delete the package manager cache")
			}
			if err := c.Root.RemoveAll(d); err != nil {
				return subErr("Unable to delete the package manager cache")
			}
		}
	}
	return nil
}

func anyStrings(l []any) []string {
	out := make([]string, len(l))
	for i, v := range l {
		out[i] = pyval.Str(v)
	}
	return out
}

func lines(s string) []string { return strings.Split(strings.TrimRight(s, " \t\r\n"), "\n") }

func rhsmPools(c *Context, pools []any, sm func(...string) (CmdResult, error)) bool {
	if len(pools) == 0 {
		return true
	}
	avail, err := sm("list", "--available", "--pool-only")
	if err != nil {
		return false
	}
	consumed, err := sm("list", "--consumed", "--pool-only")
	if err != nil {
		return false
	}
	a, cons := lines(avail.Stdout), lines(consumed.Stdout)
	args := []string{"attach"}
	for _, p := range anyStrings(pools) {
		if !slices.Contains(cons, p) && slices.Contains(a, p) {
			args = append(args, "--pool="+p)
		} else {
			c.Warnf("Pool %s is not available", p)
		}
	}
	if len(args) == 1 {
		return false
	}
	if _, err := sm(args...); err != nil {
		c.Warnf("Unable to attach pool %s due to %v", pyval.Str(pools[len(pools)-1]), err)
		return false
	}
	return true
}

func rhsmRepos(c *Context, s rhsm, sm func(...string) (CmdResult, error)) bool {
	list := func(v any) ([]string, bool) {
		if v == nil {
			return nil, true
		}
		l, ok := v.([]any)
		return anyStrings(l), ok
	}
	erepos, ok1 := list(s.enableRepo)
	drepos, ok2 := list(s.disableRepo)
	if !ok1 || !ok2 {
		c.Warnf("Repo IDs must in the format of a list.")
		return false
	}
	if len(erepos) == 0 && len(drepos) == 0 {
		return true
	}
	repoIDs := func(args ...string) []string {
		r, _ := sm(args...)
		var ids []string
		for _, l := range strings.Split(r.Stdout, "\n") {
			if strings.Contains(l, "Repo ID:") {
				ids = append(ids, strings.TrimSpace(strings.Split(l, ":")[1]))
			}
		}
		return ids
	}
	active := repoIDs("repos", "--list-enabled")
	inactive := repoIDs("repos", "--list-disabled")
	var enable, disable []string
	for _, r := range erepos {
		switch {
		case slices.Contains(inactive, r):
			enable = append(enable, "--enable="+r)
		case !slices.Contains(active, r):
			c.Warnf("Repo %s does not appear to exist", r)
		}
	}
	for _, r := range drepos {
		if slices.Contains(active, r) {
			disable = append(disable, "--disable="+r)
		}
	}
	args := append(append([]string{"repos"}, disable...), enable...)
	if _, err := sm(args...); err != nil {
		c.Warnf("Unable to alter repos due to %v", err)
		return false
	}
	return true
}
