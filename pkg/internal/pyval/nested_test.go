package pyval

import "testing"

func TestKeyInNested(t *testing.T) {
	tests := []struct {
		m    map[string]any
		want bool
	}{
		{map[string]any{"k": nil}, true},
		{map[string]any{"a": map[string]any{"b": map[string]any{"k": 1}}}, true},
		{map[string]any{"users": []any{"x", map[string]any{"k": []any{}}}}, true},
		{map[string]any{"a": []any{[]any{map[string]any{"k": 1}}}}, false}, // a list in a list is not searched
		{map[string]any{"a": "k", "b": []any{"k"}}, false},
		{nil, false},
	}
	for i, tt := range tests {
		if got := KeyInNested(tt.m, "k"); got != tt.want {
			t.Errorf("%d: %v, want %v", i, got, tt.want)
		}
	}
}
