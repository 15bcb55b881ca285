package modules

import (
	"testing"
	"time"
)

// TestPowerStateShapes: power_state's odd shapes as the handler reads
// them (no action for null or a list; scalars only for mode, delay and
// message; a null timeout keeps the default; condition's type message).
func TestPowerStateShapes(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ps      any
		wantErr string
		check   func(*PowerAction) bool
	}{
		{"null", nil, "", func(a *PowerAction) bool { return a == nil }},
		{"list", []any{"poweroff"}, "", func(a *PowerAction) bool { return a == nil }},
		{"empty mapping", map[string]any{}, `power_state_change: power_state[mode] required, must be one of poweroff, halt, reboot. found: ""`, nil},
		{"mode a list", map[string]any{"mode": []any{"reboot"}}, `power_state_change: power_state[mode] required, must be one of poweroff, halt, reboot. found: ""`, nil},
		{"timeout null", map[string]any{"mode": "halt", "timeout": nil}, "", func(a *PowerAction) bool { return a.Timeout == 30*time.Second }},
		{"timeout float", map[string]any{"mode": "halt", "timeout": 1.5}, "", func(a *PowerAction) bool { return a.Timeout == 1500*time.Millisecond }},
		{"condition int", map[string]any{"mode": "halt", "condition": 3}, "power_state_change: power_state[condition] must be a bool, a string or a list, found int", nil},
		{"condition false", map[string]any{"mode": "halt", "condition": false}, "", func(a *PowerAction) bool { return a.ConditionShell == "false" }},
		{"message int", map[string]any{"mode": "reboot", "message": 5}, "", func(a *PowerAction) bool { return a.Message == "5" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _, _ := testContext(t, Config{"power_state": tc.ps}, nil)
			err := PowerStateChange.Run(t.Context(), c)
			if got := errString(err); got != tc.wantErr {
				t.Fatalf("error %q, want %q", got, tc.wantErr)
			}
			if tc.check != nil && !tc.check(c.Power) {
				t.Errorf("action %+v", c.Power)
			}
		})
	}
}
