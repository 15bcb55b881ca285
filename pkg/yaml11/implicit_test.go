package yaml11

import (
	"math/rand/v2"
	"regexp"
	"testing"
)

// PyYAML's resolver.py expressions, which implicit.go's matchers replace.
var implicitRegexps = []struct {
	name  string
	re    *regexp.Regexp
	match func(string) bool
}{
	{"bool", regexp.MustCompile(`^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$`), implicitBool},
	{"float", regexp.MustCompile(`^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$`), implicitFloat},
	{"int", regexp.MustCompile(`^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$`), implicitInt},
	{"null", regexp.MustCompile(`^(?:~|null|Null|NULL|)$`), implicitNull},
	{"timestamp", regexp.MustCompile(`^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$`), implicitTimestamp},
}

// The dumper's expression: every resolver, whatever the first character.
var implicitAny = regexp.MustCompile(`^(?:` +
	`yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF` +
	`|[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?` +
	`|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)` +
	`|[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+` +
	`|<<|~|null|Null|NULL|` +
	`|[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]` +
	`|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?` +
	`|=` +
	`)$`)

// implicitSeeds are strings at the edges of each expression.
var implicitSeeds = []string{
	"", "~", "null", "Null", "NULL", "nULL", "yes", "Yes", "YES", "yEs", "on", "ON", "oN", "off", "y", "n",
	"0", "-0", "+0", "00", "08", "07", "0_7", "0b", "0b0", "0b2", "-0b1_1", "0x", "0xfF_", "0xg", "0X1",
	"1", "1_000", "-1", "+", "-", "1:2", "1:60", "1:59", "1:5:09", "190:20:30", "0:1", "1:", ":1", "1::2",
	"1.", "1.5", "-1.5e+3", "1.5e3", "1.5E-3", "1e+3", ".5", "+.5", "-.5", "._5", ".5_", ".5e-1", ".", "..",
	"1:20.5", "1:2:3.", "1:20:.5", "1:200.5", ".inf", "-.inf", "+.Inf", ".INF", ".nan", "-.nan", ".NaN", ".Nan",
	"2001-12-14", "2001-1-14", "2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10 -5",
	"2001-12-15T02:59:43.1Z", "2001-12-14 21:59:43.10", "2001-12-14\t\t1:59:43", "2002-12-14 ", "2001-12-14T21:59:43 Z",
	"2001-12-14T21:59:43Z ", "2001-12-14T21:59:43+0", "2001-12-14T21:59:43+001", "2001-12-14T21:59:43+01:0",
	"2001-12-14T21:59:431", "2001-12-14T211:59:43", "20011-12-14", "2001-123-14 1:00:00", "2001-12-14T21:59:43.",
	"<<", "=",
}

func checkImplicit(t *testing.T, s string) {
	t.Helper()
	for _, r := range implicitRegexps {
		if want, got := r.re.MatchString(s), r.match(s); want != got {
			t.Errorf("%s(%q) = %v, the expression says %v", r.name, s, got, want)
		}
	}
	if want, got := !implicitAny.MatchString(s), yamlResolvesToStr(s); want != got {
		t.Errorf("yamlResolvesToStr(%q) = %v, the expression says %v", s, got, want)
	}
}

// TestImplicitMatchesRegexps compares the matchers with PyYAML's
// expressions on the seeds and on random strings over the bytes the
// expressions care about.
func TestImplicitMatchesRegexps(t *testing.T) {
	for _, s := range implicitSeeds {
		checkImplicit(t, s)
	}
	const alphabet = "0123456789012345_:.-+eEbxaAfFTtZ \tinfNnaIly~<=:-"
	rng := rand.New(rand.NewPCG(27, 1))
	buf := make([]byte, 0, 32)
	for range 200000 {
		buf = buf[:0]
		if rng.IntN(2) == 0 {
			// A seed, mutated.
			buf = append(buf, implicitSeeds[rng.IntN(len(implicitSeeds))]...)
			for range 1 + rng.IntN(3) {
				c := alphabet[rng.IntN(len(alphabet))]
				switch i := rng.IntN(len(buf) + 1); rng.IntN(3) {
				case 0:
					buf = append(buf[:i], append([]byte{c}, buf[i:]...)...)
				case 1:
					if i < len(buf) {
						buf[i] = c
					}
				default:
					if i < len(buf) {
						buf = append(buf[:i], buf[i+1:]...)
					}
				}
			}
		} else {
			for range rng.IntN(14) {
				buf = append(buf, alphabet[rng.IntN(len(alphabet))])
			}
		}
		checkImplicit(t, string(buf))
		if t.Failed() {
			return
		}
	}
}

func FuzzImplicit(f *testing.F) {
	for _, s := range implicitSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkImplicit(t, s) })
}
