package pyval

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/yaml11"
)

// Str is Python's str() of a decoded JSON or YAML value: a str as it is,
// anything else as its repr (None, True, 1.0, ['a'], {'k': 1}). It is the
// one str() in the tree: modules, netconfig and the CLI all print values
// through it.
func Str(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return Repr(v)
}

// NumberRepr is Python's repr of the value json.load makes of a JSON
// number: an int (any size) when the text has no fraction or exponent,
// else a float.
func NumberRepr(n json.Number) string {
	s := string(n)
	if !strings.ContainsAny(s, ".eE") {
		if i, ok := new(big.Int).SetString(s, 10); ok {
			return i.String()
		}
		return s
	}
	f, _ := strconv.ParseFloat(s, 64)
	return yaml11.PyFloatRepr(f)
}

// Deprecation is cloud-init's util.deprecate message (26.x): "WHAT is
// deprecated in VERSION and scheduled to be removed in VERSION+5. EXTRA",
// trailing space trimmed. Every deprecation cloudroot logs for a config
// key or value is worded by it.
func Deprecation(what, version, extra string) string {
	major, minor, _ := strings.Cut(version, ".")
	n := 0
	fmt.Sscanf(major, "%d", &n)
	return strings.TrimRight(fmt.Sprintf("%s is deprecated in %s and scheduled to be removed in %d.%s. %s", what, version, n+5, minor, extra), " \t\n")
}
