package pyval

import (
	"reflect"
	"testing"
)

func TestDeepCopy(t *testing.T) {
	orig := map[string]any{"users": []any{map[string]any{"name": "a", "groups": []any{"x"}}}, "n": 1}
	cp := DeepCopy(orig).(map[string]any)
	if !reflect.DeepEqual(orig, cp) {
		t.Fatalf("copy %v differs from %v", cp, orig)
	}
	u := cp["users"].([]any)[0].(map[string]any)
	u["name"] = "b"
	u["groups"].([]any)[0] = "y"
	cp["n"] = 2
	want := map[string]any{"users": []any{map[string]any{"name": "a", "groups": []any{"x"}}}, "n": 1}
	if !reflect.DeepEqual(orig, want) {
		t.Errorf("changing the copy changed the original: %v", orig)
	}
	if DeepCopy(nil) != nil || DeepCopy("s") != "s" {
		t.Error("scalars are returned as they are")
	}
}
