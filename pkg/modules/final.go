package modules

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
	"github.com/cloudroot/cloudroot/pkg/state"
)

// DefaultFinalMessage is cloud-init's default final_message.
const DefaultFinalMessage = "Cloud-init v. {{version}} finished at {{timestamp}}. Datasource {{datasource}}.  Up {{uptime}} seconds"

// RFC2822 is the timestamp layout cloud-init's util.time_rfc2822 produces.
const RFC2822 = "Mon, 02 Jan 2006 15:04:05 -0700"

var tmplVar = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}|\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)`)
})

// renderSimple substitutes {{ var }}, ${var} and $var (cloud-init's basic
// and jinja templates for final_message); unknown names are left as they are.
func renderSimple(tmpl string, vars map[string]string) string {
	tmpl = strings.TrimPrefix(tmpl, "## template: jinja\n")
	return tmplVar().ReplaceAllStringFunc(tmpl, func(m string) string {
		sm := tmplVar().FindStringSubmatch(m)
		name := sm[1] + sm[2] + sm[3]
		if v, ok := vars[name]; ok {
			return v
		}
		return m
	})
}

// FinalMessage is cc_final_message: print the final message to the console
// and write instance/boot-finished.
var FinalMessage = Module{
	Name:      "final_message",
	Frequency: state.PerAlways,
	Keys:      []string{"final_message"},
	Run: Typed(func(ctx context.Context, c *Context, cfg finalMessageConfig) error {
		msg := DefaultFinalMessage
		if cfg.Has {
			msg = cfg.Message
		}
		uptime := fmt.Sprintf("%.2f", c.Uptime())
		ts := c.Now().Format(RFC2822)
		vars := map[string]string{
			"uptime": uptime, "UPTIME": uptime,
			"timestamp": ts, "TIMESTAMP": ts,
			"version": c.Version, "VERSION": c.Version,
			"datasource": c.Datasource, "DATASOURCE": c.Datasource,
		}
		out := renderSimple(msg, vars)
		fmt.Fprintln(c.Out, out)
		c.Log.Info(out, "module", "final_message")
		bf := fmt.Sprintf("%s - %s - v. %s\n", uptime, ts, c.Version)
		if err := c.Root.WriteFile(c.InstanceDir()+"/boot-finished", []byte(bf), 0o644); err != nil {
			return fmt.Errorf("final_message: failed to write boot finished file: %w", err)
		}
		if strings.HasPrefix(c.Datasource, "DataSourceNone") {
			c.Warnf("Used fallback datasource")
		}
		return nil
	}),
}

// finalMessageConfig is final_message's configuration.
type finalMessageConfig struct {
	Has     bool   `cfg:"final_message,present"`
	Message string `cfg:"final_message,scalar"`
}

// PowerStateChange is cc_power_state_change. It validates power_state and
// leaves the action in c.Power; the agent carries it out once the final stage
// has finished and its status is on disk (cloud-init forks a child that waits
// for the process to exit; this is the same ordering without the fork).
var PowerStateChange = Module{
	Name:       "power_state_change",
	ActivateBy: []string{"power_state"},
	Frequency:  state.PerInstance,
	Keys:       []string{"power_state"},
	Run: Typed(func(ctx context.Context, c *Context, cfg powerStateConfig) error {
		ps := cfg.PowerState
		if ps == nil {
			c.Log.Debug("no power_state provided, doing nothing", "module", "power_state_change")
			return nil
		}
		a, err := ps.action()
		if err != nil {
			return fmt.Errorf("power_state_change: %w", err)
		}
		c.Power = a
		return nil
	}),
}

// powerStateConfig is power_state_change's configuration: power_state,
// nil when absent, null or not a mapping.
type powerStateConfig struct {
	PowerState *powerState `cfg:"power_state,loose"`
}

// powerState is the power_state mapping: the scalars as text ("" when
// absent, null, a list or a mapping), timeout as given, condition as
// decoded (its shapes checked by action).
type powerState struct {
	Mode      string    `cfg:"mode,scalar"`
	Delay     string    `cfg:"delay,scalar"`
	Message   string    `cfg:"message,scalar"`
	Timeout   pyval.Opt `cfg:"timeout"`
	Condition any       `cfg:"condition"`
}

// ParsePowerState validates cloud-init's power_state dict.
func ParsePowerState(m map[string]any) (*PowerAction, error) {
	var ps powerState
	if err := (&pyval.Decoder{}).Decode(m, &ps); err != nil {
		return nil, err
	}
	return ps.action()
}

// action validates power_state as cloud-init's handler does.
func (ps *powerState) action() (*PowerAction, error) {
	a := &PowerAction{Timeout: 30 * time.Second}
	a.Mode = ps.Mode
	switch a.Mode {
	case "poweroff", "reboot", "halt":
	default:
		return nil, fmt.Errorf("power_state[mode] required, must be one of poweroff, halt, reboot. found: %q", a.Mode)
	}
	delay := strings.TrimSpace(ps.Delay)
	switch {
	case delay == "" || delay == "now":
	default:
		n := strings.TrimPrefix(delay, "+")
		m, err := strconv.Atoi(n)
		if err != nil || m < 0 {
			return nil, fmt.Errorf("power_state[delay] must be 'now' or '+m' (minutes). found %q", delay)
		}
		a.Delay = time.Duration(m) * time.Minute
	}
	a.Message = ps.Message
	if t := ps.Timeout.Value; t != nil {
		f, err := strconv.ParseFloat(scalarString(t), 64)
		if err != nil {
			return nil, fmt.Errorf("power_state[timeout] must be a number. found %q", scalarString(t))
		}
		a.Timeout = time.Duration(f * float64(time.Second))
	}
	switch cond := ps.Condition.(type) {
	case nil:
	case bool:
		if !cond {
			a.ConditionShell = "false"
		}
	case string:
		a.ConditionShell = cond
	case []any:
		for _, e := range cond {
			a.Condition = append(a.Condition, scalarString(e))
		}
	default:
		return nil, fmt.Errorf("power_state[condition] must be a bool, a string or a list, found %T", cond)
	}
	return a, nil
}

// ShutdownArgv is the command cloud-init would run: shutdown -P|-r|-H
// (+minutes|now) [message].
func (a *PowerAction) ShutdownArgv() []string {
	opt := map[string]string{"poweroff": "-P", "reboot": "-r", "halt": "-H"}[a.Mode]
	when := "now"
	if a.Delay > 0 {
		when = fmt.Sprintf("+%d", int(a.Delay/time.Minute))
	}
	argv := []string{"shutdown", opt, when}
	if a.Message != "" {
		argv = append(argv, a.Message)
	}
	return argv
}
