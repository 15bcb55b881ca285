//go:build !cloudroot_front

package cli

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCommandIndex: the front binary's list of subcommand names and help
// lines is the full agent's, so both print the same help and errors.
func TestCommandIndex(t *testing.T) {
	type entry struct{ Name, Short string }
	var got, want []entry
	for _, c := range Commands() {
		want = append(want, entry{c.Name, c.Short})
	}
	for _, c := range commandIndex() {
		got = append(got, entry{c.Name, c.Short})
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("commandIndex (-agent's Commands +index):\n%s", diff)
	}
}
