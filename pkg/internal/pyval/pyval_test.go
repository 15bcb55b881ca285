package pyval

import (
	"math/big"
	"testing"
	"time"
)

func TestTruthy(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want bool
	}{
		{nil, false},
		{false, false},
		{true, true},
		{"", false},
		{"false", true},
		{0, false},
		{2, true},
		{int64(0), false},
		{int64(-1), true},
		{uint64(0), false},
		{uint64(7), true},
		{0.0, false},
		{0.5, true},
		{[]any{}, false},
		{[]any{nil}, true},
		{map[string]any{}, false},
		{map[string]any{"k": nil}, true},
		{struct{}{}, true},
	} {
		if got := Truthy(tc.v); got != tc.want {
			t.Errorf("Truthy(%#v) = %v, want %v", tc.v, got, tc.want)
		}
	}
}

func TestTypeName(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want string
	}{
		{nil, "NoneType"}, {true, "bool"}, {3, "int"}, {new(big.Int).Lsh(big.NewInt(1), 70), "int"}, {1.5, "float"},
		{"s", "str"}, {[]any{1}, "list"}, {map[string]any{}, "dict"}, {time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), "datetime"},
	} {
		if got := TypeName(tc.v); got != tc.want {
			t.Errorf("TypeName(%#v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}
