package cloudcfg

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestBaseMerge checks that a base loaded once merges like Load, as often
// as asked, without being changed by the merges.
func TestBaseMerge(t *testing.T) {
	cmdline := "ro cc: runcmd: [base] end_cc"
	base := LoadBase(LoadOptions{Cmdline: cmdline})
	before := deepCopy(base.System)
	for _, o := range []LoadOptions{
		{Datasource: map[string]any{"datasource_list": []any{"None"}}},
		{UserConfig: map[string]any{"runcmd": []any{"user"}, "merge_how": "list(append)+dict()"}},
	} {
		got, gerr := base.Merge(o)
		o.Cmdline = cmdline
		want, werr := Load(o)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Merge differs from Load (-want +got):\n%s", diff)
		}
		if (gerr == nil) != (werr == nil) {
			t.Errorf("errors: Merge %v, Load %v", gerr, werr)
		}
	}
	if diff := cmp.Diff(before, any(base.System)); diff != "" {
		t.Errorf("the base changed (-before +after):\n%s", diff)
	}
}
