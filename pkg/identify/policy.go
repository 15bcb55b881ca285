package identify

import (
	"fmt"
	"strings"
)

// Mode is the first field of a policy.
type Mode string

// Modes.
const (
	ModeDisabled Mode = "disabled" // disable cloud-init
	ModeEnabled  Mode = "enabled"  // enable it, write nothing
	ModeSearch   Mode = "search"   // write the datasources found
	ModeReport   Mode = "report"   // write them under di_report: (dry run)
)

// OnFound says which found datasources are written.
type OnFound string

// OnFound values.
const (
	FoundAll   OnFound = "all"
	FoundFirst OnFound = "first"
)

// OnMaybe says whether maybes are written when nothing was found.
type OnMaybe string

// OnMaybe values.
const (
	MaybeAll  OnMaybe = "all"
	MaybeNone OnMaybe = "none"
)

// OnNotFound says whether cloud-init runs when nothing was found.
type OnNotFound string

// OnNotFound values.
const (
	NotFoundEnabled  OnNotFound = "enabled"
	NotFoundDisabled OnNotFound = "disabled"
)

// Policy is `<mode>,found=…,maybe=…,notfound=…`.
type Policy struct {
	Mode     Mode       `json:"mode"`
	Found    OnFound    `json:"found"`
	Maybe    OnMaybe    `json:"maybe"`
	NotFound OnNotFound `json:"notfound"`
}

// DefaultPolicy returns ds-identify 26.x's builtin policy, the same on
// every architecture.
func DefaultPolicy() Policy {
	return Policy{Mode: ModeSearch, Found: FoundAll, Maybe: MaybeNone, NotFound: NotFoundDisabled}
}

// DefaultPolicyString is DefaultPolicy as written in ds-identify.cfg.
const DefaultPolicyString = "search,found=all,maybe=none,notfound=disabled"

// String renders the policy in ds-identify.cfg syntax.
func (p Policy) String() string {
	return fmt.Sprintf("%s,found=%s,maybe=%s,notfound=%s", p.Mode, p.Found, p.Maybe, p.NotFound)
}

// ParsePolicy parses a policy string over def, as parse_policy does:
// comma-separated tokens; a bare mode (enabled, disabled, search, report);
// found=, maybe=, notfound= with a known value. An unknown value of a known
// key keeps def's value and adds a warning (ds-identify's parse_warn);
// unknown tokens are ignored silently. It never fails.
func ParsePolicy(s string, def Policy) (Policy, []string) {
	p := def
	var warns []string
	bad := func(key, val, use string) {
		warns = append(warns, fmt.Sprintf("WARN: invalid value '%s' for key '%s'. Using %s=%s.", val, key, key, use))
	}
	for _, tok := range strings.Split(s, ",") {
		key, val, hasVal := strings.Cut(tok, "=")
		if !hasVal {
			switch Mode(tok) {
			case ModeEnabled, ModeDisabled, ModeSearch, ModeReport:
				p.Mode = Mode(tok)
			}
			continue
		}
		switch key {
		case "found":
			switch OnFound(val) {
			case FoundAll, FoundFirst:
				p.Found = OnFound(val)
			default:
				bad(key, val, string(def.Found))
				p.Found = def.Found
			}
		case "maybe":
			switch OnMaybe(val) {
			case MaybeAll, MaybeNone:
				p.Maybe = OnMaybe(val)
			default:
				bad(key, val, string(def.Maybe))
				p.Maybe = def.Maybe
			}
		case "notfound":
			switch OnNotFound(val) {
			case NotFoundEnabled, NotFoundDisabled:
				p.NotFound = OnNotFound(val)
			default:
				bad(key, val, string(def.NotFound))
				p.NotFound = def.NotFound
			}
		}
	}
	return p, warns
}
