package yaml11

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The constructor's timestamp pattern (looser than the resolver's), used
// only on a scalar resolved as a timestamp; the resolvers are in implicit.go.
var (
	reTimeParts = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^([0-9][0-9][0-9][0-9])-([0-9][0-9]?)-([0-9][0-9]?)(?:(?:[Tt]|[ \t]+)([0-9][0-9]?):([0-9][0-9]):([0-9][0-9])(?:\.([0-9]*))?(?:[ \t]*(Z|([-+])([0-9][0-9]?)(?::([0-9][0-9]))?))?)?$`)
	})
)

// resolveImplicit is PyYAML's Resolver.resolve for a plain scalar: the
// resolvers registered for the first character, in registration order
// (bool, float, int, merge, null, timestamp, value).
func resolveImplicit(v string) string {
	if v == "" {
		return tagNull
	}
	switch c := v[0]; {
	case strings.IndexByte("yYnNtTfFoO", c) >= 0 && implicitBool(v):
		return tagBool
	case strings.IndexByte("-+0123456789.", c) >= 0 && implicitFloat(v):
		return tagFloat
	case strings.IndexByte("-+0123456789", c) >= 0 && implicitInt(v):
		return tagInt
	case v == "<<":
		return tagMerge
	case strings.IndexByte("~nN", c) >= 0 && implicitNull(v):
		return tagNull
	case c >= '0' && c <= '9' && implicitTimestamp(v):
		return tagTimestamp
	case v == "=":
		return tagValue
	}
	return tagStr
}

var errUndefined = errors.New("no constructor")

// construct applies SafeConstructor's constructor for tag to a scalar's
// text and returns the canonical text of the result.
func construct(tag, v string) (string, error) {
	switch tag {
	case tagStr:
		return v, nil
	case tagNull:
		return "null", nil
	case tagBool:
		switch strings.ToLower(v) {
		case "yes", "true", "on":
			return "true", nil
		case "no", "false", "off":
			return "false", nil
		}
		return "", fmt.Errorf("cannot construct a boolean from %q", v)
	case tagInt:
		i, err := constructInt(v)
		if err != nil {
			return "", err
		}
		return i.String(), nil
	case tagFloat:
		f, err := constructFloat(v)
		if err != nil {
			return "", err
		}
		if math.IsNaN(f) && !sharedNaN(v) {
			// float("nan") makes a new object: a distinct mapping key.
			return "nan", nil
		}
		return canonFloat(f), nil
	case tagTimestamp:
		return constructTimestamp(v)
	case tagBinary:
		b, err := constructBinary(v)
		if err != nil {
			return "", err
		}
		return base64.StdEncoding.EncodeToString(b), nil
	}
	return "", errUndefined
}

// sharedNaN reports whether construct_yaml_float returns its one shared
// nan_value for v (".nan" after sign and underscores), rather than
// float("nan"), a new object.
func sharedNaN(v string) bool {
	t := strings.ToLower(strings.ReplaceAll(v, "_", ""))
	t = strings.TrimLeft(t[:min(1, len(t))], "+-") + t[min(1, len(t)):]
	return t == ".nan"
}

// pyInt is Python's int(s, base) (base 2, 8, 10 or 16).
func pyInt(s string, base int) (*big.Int, error) {
	t := strings.Trim(s, " \t\n\r\v\f")
	neg := false
	if t != "" && (t[0] == '-' || t[0] == '+') {
		neg = t[0] == '-'
		t = t[1:]
	}
	if base != 10 && len(t) > 2 && t[0] == '0' {
		p := strings.ToLower(t[:2])
		if (base == 2 && p == "0b") || (base == 8 && p == "0o") || (base == 16 && p == "0x") {
			t = t[2:]
		}
	}
	i, ok := new(big.Int).SetString(t, base)
	if t == "" || !ok || strings.ContainsAny(t, "+-_") {
		return nil, fmt.Errorf("invalid literal for int() with base %d: %s", base, strconv.Quote(s))
	}
	if neg {
		i.Neg(i)
	}
	return i, nil
}

// constructInt is construct_yaml_int.
func constructInt(s string) (*big.Int, error) {
	v := strings.ReplaceAll(s, "_", "")
	if v == "" {
		return nil, fmt.Errorf("cannot construct an integer from an empty value")
	}
	neg := v[0] == '-'
	if v[0] == '-' || v[0] == '+' {
		v = v[1:]
	}
	var i *big.Int
	var err error
	switch {
	case v == "0":
		return new(big.Int), nil
	case strings.HasPrefix(v, "0b"):
		i, err = pyInt(v[2:], 2)
	case strings.HasPrefix(v, "0x"):
		i, err = pyInt(v[2:], 16)
	case strings.HasPrefix(v, "0"):
		i, err = pyInt(v, 8)
	case strings.Contains(v, ":"):
		i = new(big.Int)
		base := big.NewInt(1)
		parts := strings.Split(v, ":")
		for j := len(parts) - 1; j >= 0; j-- {
			d, perr := pyInt(parts[j], 10)
			if perr != nil {
				return nil, perr
			}
			i.Add(i, d.Mul(d, base))
			base.Mul(base, big.NewInt(60))
		}
	default:
		i, err = pyInt(v, 10)
	}
	if err != nil {
		return nil, err
	}
	if neg {
		i.Neg(i)
	}
	return i, nil
}

// pyFloat is Python's float(s).
func pyFloat(s string) (float64, error) {
	t := strings.Trim(s, " \t\n\r\v\f")
	bad := t == "" || strings.ContainsAny(t, "xXpP_")
	f, err := strconv.ParseFloat(t, 64)
	if err != nil {
		var ne *strconv.NumError
		if !errors.As(err, &ne) || ne.Err != strconv.ErrRange {
			bad = true
		}
	}
	if bad {
		return 0, fmt.Errorf("could not convert string to float: %s", strconv.Quote(s))
	}
	return f, nil
}

// constructFloat is construct_yaml_float.
func constructFloat(s string) (float64, error) {
	v := strings.ToLower(strings.ReplaceAll(s, "_", ""))
	if v == "" {
		return 0, fmt.Errorf("cannot construct a float from an empty value")
	}
	sign := 1.0
	if v[0] == '-' {
		sign = -1
	}
	if v[0] == '-' || v[0] == '+' {
		v = v[1:]
	}
	switch {
	case v == ".inf":
		return sign * math.Inf(1), nil
	case v == ".nan":
		return math.NaN(), nil
	case strings.Contains(v, ":"):
		parts := strings.Split(v, ":")
		base, val := 1.0, 0.0
		for j := len(parts) - 1; j >= 0; j-- {
			d, err := pyFloat(parts[j])
			if err != nil {
				return 0, err
			}
			val += d * base
			base *= 60
		}
		return sign * val, nil
	}
	f, err := pyFloat(v)
	if err != nil {
		return 0, err
	}
	return sign * f, nil
}

// canonFloat writes a float as normalized nodes hold it: Python's repr,
// with YAML's spellings of the infinities and NaN.
func canonFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return ".nan"
	case math.IsInf(f, 1):
		return ".inf"
	case math.IsInf(f, -1):
		return "-.inf"
	}
	return PyFloatRepr(f)
}

// PyFloatRepr is Python's repr(float): the shortest text that reads back,
// positional for exponents -4..15 (with ".0" when integral), else
// scientific with a signed two-digit exponent.
func PyFloatRepr(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // -d.ddde±XX
	sign := ""
	if e[0] == '-' {
		sign, e = "-", e[1:]
	}
	mant, expS, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expS)
	digits := strings.Replace(mant, ".", "", 1)
	if exp >= -4 && exp < 16 {
		var s string
		switch {
		case exp < 0:
			s = "0." + strings.Repeat("0", -exp-1) + digits
		case exp+1 >= len(digits):
			s = digits + strings.Repeat("0", exp+1-len(digits)) + ".0"
		default:
			s = digits[:exp+1] + "." + digits[exp+1:]
		}
		return sign + s
	}
	m := digits[:1]
	if len(digits) > 1 {
		m += "." + digits[1:]
	}
	es := "+"
	if exp < 0 {
		es, exp = "-", -exp
	}
	return fmt.Sprintf("%s%se%s%02d", sign, m, es, exp)
}

func floatOf(canon string) float64 {
	switch canon {
	case ".nan":
		return math.NaN()
	case ".inf":
		return math.Inf(1)
	case "-.inf":
		return math.Inf(-1)
	}
	f, _ := strconv.ParseFloat(canon, 64)
	return f
}

func bigOfFloat(f float64) string {
	b, _ := new(big.Float).SetFloat64(f).Int(nil)
	return b.String()
}

// constructTimestamp is construct_yaml_timestamp; the result is Python's
// isoformat() of the date or datetime.
func constructTimestamp(s string) (string, error) {
	m := reTimeParts().FindStringSubmatch(s)
	if m == nil {
		return "", fmt.Errorf("cannot construct a timestamp from %q", s)
	}
	atoi := func(x string) int { i, _ := strconv.Atoi(x); return i }
	year, month, day := atoi(m[1]), atoi(m[2]), atoi(m[3])
	if year < 1 {
		return "", fmt.Errorf("year %d is out of range", year)
	}
	if month < 1 || month > 12 {
		return "", fmt.Errorf("month must be in 1..12")
	}
	if day < 1 || day > time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day() {
		return "", fmt.Errorf("day is out of range for month")
	}
	date := fmt.Sprintf("%04d-%02d-%02d", year, month, day)
	if m[4] == "" {
		return date, nil
	}
	hour, minute, second := atoi(m[4]), atoi(m[5]), atoi(m[6])
	switch {
	case hour > 23:
		return "", fmt.Errorf("hour must be in 0..23")
	case minute > 59:
		return "", fmt.Errorf("minute must be in 0..59")
	case second > 59:
		return "", fmt.Errorf("second must be in 0..59")
	}
	out := fmt.Sprintf("%sT%02d:%02d:%02d", date, hour, minute, second)
	if frac := m[7]; frac != "" {
		if len(frac) > 6 {
			frac = frac[:6]
		}
		frac += strings.Repeat("0", 6-len(frac))
		if frac != "000000" {
			out += "." + frac
		}
	}
	switch {
	case m[9] != "":
		mins := atoi(m[10])*60 + atoi(m[11])
		if mins >= 24*60 {
			return "", fmt.Errorf("offset must be a timedelta strictly between -timedelta(hours=24) and timedelta(hours=24)")
		}
		sign := m[9]
		if mins == 0 {
			sign = "+"
		}
		out += fmt.Sprintf("%s%02d:%02d", sign, mins/60, mins%60)
	case m[8] == "Z":
		out += "+00:00"
	}
	return out, nil
}

// constructBinary is construct_yaml_binary: ASCII only, decoded as
// base64.decodebytes does (characters outside the alphabet are skipped,
// decoding ends at complete padding).
func constructBinary(s string) ([]byte, error) {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return nil, fmt.Errorf("failed to convert base64 data into ascii")
		}
	}
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	var clean []byte
	quad, pads := 0, 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '=' {
			if quad >= 2 {
				pads++
				if quad+pads >= 4 {
					quad = 0
					break
				}
			}
			continue
		}
		if strings.IndexByte(alphabet, c) < 0 {
			continue
		}
		if pads > 0 {
			// Data after partial padding: CPython (non-strict) resets the
			// padding count and goes on.
			pads = 0
		}
		clean = append(clean, c)
		quad = (quad + 1) % 4
	}
	if quad == 1 {
		return nil, fmt.Errorf("failed to decode base64 data: Invalid base64-encoded string: number of data characters (%d) cannot be 1 more than a multiple of 4", len(clean))
	}
	if quad != 0 {
		return nil, fmt.Errorf("failed to decode base64 data: Incorrect padding")
	}
	out, err := base64.RawStdEncoding.DecodeString(string(clean))
	if err != nil {
		return nil, fmt.Errorf("failed to decode base64 data: %w", err)
	}
	return out, nil
}

// PlainTag is the tag PyYAML's resolver gives a plain scalar with text s:
// "!!str" when it stays a string, else "!!bool", "!!int", "!!float",
// "!!null", "!!timestamp", "!!merge" or "!!value". A YAML writer quotes s
// when it is not "!!str".
func PlainTag(s string) string { return resolveImplicit(s) }
