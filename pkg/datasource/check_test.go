package datasource

import "testing"

func TestInstanceIDMatches(t *testing.T) {
	for _, tc := range []struct {
		iid, dmi string
		want     bool
	}{
		{"", "", false},
		{"abc", "", false},
		{"", "abc", false},
		{"5F0E4C8B-1111-2222-3333-444455556666", "5f0e4c8b-1111-2222-3333-444455556666\n", true},
		{"i-0123", "i-0124", false},
	} {
		if got := InstanceIDMatches(tc.iid, tc.dmi); got != tc.want {
			t.Errorf("InstanceIDMatches(%q, %q) = %v, want %v", tc.iid, tc.dmi, got, tc.want)
		}
	}
}
