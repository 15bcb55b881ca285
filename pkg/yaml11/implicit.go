package yaml11

// PyYAML's implicit resolvers (resolver.py) as hand-written matchers.
// Each function accepts exactly the strings its resolver's regular
// expression accepts (the expressions are kept beside them in
// implicit_test.go, which compares the two on generated strings, and
// FuzzImplicit on any). They replace regexps compiled in every process that
// reads YAML: compiling the five was ~25 page faults of fresh heap, about
// half a millisecond of a `cloudroot schema` on the VM measured in
// docs/performance.md, and a boot reads YAML in every stage.

// implicitBool: yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF
func implicitBool(v string) bool {
	switch v {
	case "yes", "Yes", "YES", "no", "No", "NO",
		"true", "True", "TRUE", "false", "False", "FALSE",
		"on", "On", "ON", "off", "Off", "OFF":
		return true
	}
	return false
}

// implicitNull: ~|null|Null|NULL|(empty)
func implicitNull(v string) bool {
	switch v {
	case "~", "null", "Null", "NULL", "":
		return true
	}
	return false
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// span returns the end of the run of bytes of s from i that ok accepts.
func span(s string, i int, ok func(byte) bool) int {
	for i < len(s) && ok(s[i]) {
		i++
	}
	return i
}

func isDigitUnderscore(c byte) bool { return isDigit(c) || c == '_' }

// all reports whether s is non-empty and ok accepts every byte of it.
func all(s string, ok func(byte) bool) bool {
	return s != "" && span(s, 0, ok) == len(s)
}

// stripSign removes one leading - or +.
func stripSign(v string) (string, bool) {
	if v != "" && (v[0] == '-' || v[0] == '+') {
		return v[1:], true
	}
	return v, false
}

// sexagesimal matches (?::[0-5]?[0-9])+ at s[i:] and returns where it
// ends, or -1 when there is not at least one such group.
func sexagesimal(s string, i int) int {
	n := 0
	for i < len(s) && s[i] == ':' {
		j := span(s, i+1, isDigit)
		switch {
		case j == i+2:
		case j == i+3 && s[i+1] <= '5':
		default:
			return -1
		}
		i = j
		n++
	}
	if n == 0 {
		return -1
	}
	return i
}

// exponentEnd reports whether s[i:] is (?:[eE][-+][0-9]+)? and nothing else.
func exponentEnd(s string, i int) bool {
	if i == len(s) {
		return true
	}
	return len(s)-i >= 3 && (s[i] == 'e' || s[i] == 'E') && (s[i+1] == '-' || s[i+1] == '+') && all(s[i+2:], isDigit)
}

// implicitFloat: [-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?
// | \.[0-9][0-9_]*(?:[eE][-+][0-9]+)? | [-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*
// | [-+]?\.(?:inf|Inf|INF) | \.(?:nan|NaN|NAN)
func implicitFloat(v string) bool {
	switch v {
	case ".nan", ".NaN", ".NAN":
		return true
	}
	s, signed := stripSign(v)
	switch {
	case s == ".inf" || s == ".Inf" || s == ".INF":
		return true
	case s == "":
		return false
	case s[0] == '.':
		if signed || len(s) < 2 || !isDigit(s[1]) {
			return false
		}
		return exponentEnd(s, span(s, 2, isDigitUnderscore))
	case !isDigit(s[0]):
		return false
	}
	i := span(s, 1, isDigitUnderscore)
	if i == len(s) {
		return false
	}
	if s[i] == '.' {
		return exponentEnd(s, span(s, i+1, isDigitUnderscore))
	}
	i = sexagesimal(s, i)
	if i < 0 || i == len(s) || s[i] != '.' {
		return false
	}
	return span(s, i+1, isDigitUnderscore) == len(s)
}

// implicitInt: [-+]?0b[0-1_]+ | [-+]?0[0-7_]+ | [-+]?(?:0|[1-9][0-9_]*)
// | [-+]?0x[0-9a-fA-F_]+ | [-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+
func implicitInt(v string) bool {
	s, _ := stripSign(v)
	switch {
	case s == "":
		return false
	case s == "0":
		return true
	case len(s) >= 2 && s[:2] == "0b":
		return all(s[2:], func(c byte) bool { return c == '0' || c == '1' || c == '_' })
	case len(s) >= 2 && s[:2] == "0x":
		return all(s[2:], func(c byte) bool {
			return isDigitUnderscore(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
		})
	case s[0] == '0':
		return all(s[1:], func(c byte) bool { return (c >= '0' && c <= '7') || c == '_' })
	case !isDigit(s[0]):
		return false
	}
	i := span(s, 1, isDigitUnderscore)
	return i == len(s) || sexagesimal(s, i) == len(s)
}

// implicitTimestamp: [0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]
// | [0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9]
// (?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?
func implicitTimestamp(v string) bool {
	// digits returns the end of a run of min..max digits at i, or -1.
	digits := func(i, lo, hi int) int {
		j := span(v, i, isDigit)
		if j-i < lo || j-i > hi {
			return -1
		}
		return j
	}
	// lit returns i+1 when v[i] is c, or -1.
	lit := func(i int, c byte) int {
		if i < 0 || i >= len(v) || v[i] != c {
			return -1
		}
		return i + 1
	}
	isBlank := func(c byte) bool { return c == ' ' || c == '\t' }
	i := digits(0, 4, 4)
	if i < 0 {
		return false
	}
	if i = lit(i, '-'); i < 0 {
		return false
	}
	if i = digits(i, 1, 2); i < 0 {
		return false
	}
	if i = lit(i, '-'); i < 0 {
		return false
	}
	if i = digits(i, 1, 2); i < 0 {
		return false
	}
	if i == len(v) {
		return i == 10 // the date alone: two-digit month and day
	}
	switch {
	case v[i] == 'T' || v[i] == 't':
		i++
	case isBlank(v[i]):
		i = span(v, i, isBlank)
	default:
		return false
	}
	if i = digits(i, 1, 2); i < 0 {
		return false
	}
	for range 2 {
		if i = lit(i, ':'); i < 0 {
			return false
		}
		if i = digits(i, 2, 2); i < 0 {
			return false
		}
	}
	if i < len(v) && v[i] == '.' {
		i = span(v, i+1, isDigit)
	}
	if i == len(v) {
		return true
	}
	i = span(v, i, isBlank)
	switch {
	case i == len(v):
		return false
	case v[i] == 'Z':
		return i+1 == len(v)
	case v[i] == '-' || v[i] == '+':
	default:
		return false
	}
	if i = digits(i+1, 1, 2); i < 0 {
		return false
	}
	if i == len(v) {
		return true
	}
	if i = lit(i, ':'); i < 0 {
		return false
	}
	return digits(i, 2, 2) == len(v)
}
