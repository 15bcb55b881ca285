package users

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/cloudroot/cloudroot/pkg/modules/internal/famtest"
)

// TestSSHImportIDGolden: cloudroot's own record of each case
// (testdata/modgolden/ssh_import_id/<case>/want.txt; -update rewrites).
func TestSSHImportIDGolden(t *testing.T) { famtest.Golden(t, SSHImportID) }

// TestSetPasswordsGolden: the same for set_passwords.
func TestSetPasswordsGolden(t *testing.T) { famtest.Golden(t, SetPasswords) }

// TestSSHImportIDUpstream holds ssh_import_id to what upstream's handler
// did on the same cases, as scripts/goldens/vendor.py recorded it in
// pkg/modules/testdata/vendor-upstream.json with the other vendor
// modules: the commands run in order, the warnings and whether the module
// failed (it writes no files and installs nothing).
func TestSSHImportIDUpstream(t *testing.T) {
	b, err := os.ReadFile("../testdata/vendor-upstream.json")
	if err != nil {
		t.Fatal(err)
	}
	var up map[string]struct {
		Files     map[string]string `json:"files"`
		Deleted   []string          `json:"deleted"`
		Commands  []string          `json:"commands"`
		Installed []string          `json:"installed"`
		Warnings  []string          `json:"warnings"`
		Error     string            `json:"error"`
	}
	if err := json.Unmarshal(b, &up); err != nil {
		t.Fatal(err)
	}
	dirs, _ := filepath.Glob("testdata/modgolden/ssh_import_id/*")
	n := 0
	for key, want := range up {
		name, ok := strings.CutPrefix(key, "ssh_import_id/")
		if !ok {
			continue
		}
		n++
		t.Run(name, func(t *testing.T) {
			if len(want.Files)+len(want.Deleted)+len(want.Installed) > 0 {
				t.Fatalf("upstream wrote files or installed packages: %+v", want)
			}
			g := famtest.Setup(t, filepath.Join("testdata/modgolden/ssh_import_id", name))
			runErr := SSHImportID.Run(t.Context(), g.C)
			if (runErr != nil) != (want.Error != "") {
				t.Errorf("error %v, upstream %q", runErr, want.Error)
			}
			if diff := cmp.Diff(want.Commands, g.Runner.Log, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("commands (-upstream +cloudroot):\n%s", diff)
			}
			if diff := cmp.Diff(want.Warnings, g.Warnings, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("warnings (-upstream +cloudroot):\n%s", diff)
			}
		})
	}
	if n != len(dirs) {
		t.Errorf("%d cases, %d in upstream's record: run scripts/goldens/vendor.py", len(dirs), n)
	}
}

// TestImportIDs: the top-level ssh_import_id as get_cfg_option_list and
// uniq_merge read it.
func TestImportIDs(t *testing.T) {
	tests := []struct {
		v    any
		want []string
	}{
		{nil, nil},
		{"gh:a, lp:b", []string{"gh:a, lp:b"}}, // a string is one id, not split
		{[]any{" gh:a ", "lp:b", "gh:a", "", nil, 3}, []string{"gh:a", "lp:b", "3"}},
		{true, []string{"true"}},
		{map[string]any{"x": 1}, nil},
	}
	for _, tt := range tests {
		var got importIDs
		if err := got.UnmarshalPy(nil, tt.v); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, []string(got), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%#v (-want +got):\n%s", tt.v, diff)
		}
	}
}
