package cloudcfg

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/internal/golden"
)

// loadCase reads testdata/merge/<case>/source-N.yaml (and source-N.header,
// a Merge-Type header) in order.
func loadCase(t testing.TB, dir string) []Part {
	t.Helper()
	var parts []Part
	for i := 1; ; i++ {
		b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("source-%d.yaml", i)))
		if errors.Is(err, os.ErrNotExist) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		m, err := datasource.DecodeYAMLMap(b)
		if err != nil {
			t.Fatalf("source-%d.yaml: %v", i, err)
		}
		hdr, _ := os.ReadFile(filepath.Join(dir, fmt.Sprintf("source-%d.header", i)))
		parts = append(parts, Part{Name: fmt.Sprintf("part-%d", i), Config: m, MergeHow: strings.TrimSpace(string(hdr))})
	}
	if len(parts) == 0 {
		t.Fatalf("%s: no source-N.yaml", dir)
	}
	return parts
}

// TestMergeGolden runs testdata/merge/<case>: parts-* cases through
// MergeParts, sources-* cases through MergeSources (source-1 lowest).
// want-error.txt, when present, holds a substring of the expected error.
func TestMergeGolden(t *testing.T) {
	dirs, err := filepath.Glob("testdata/merge/*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	for _, dir := range dirs {
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			parts := loadCase(t, dir)
			var got map[string]any
			var gotErr error
			switch {
			case strings.HasPrefix(name, "parts-"):
				got, gotErr = MergeParts(parts)
			case strings.HasPrefix(name, "sources-"):
				var srcs []Named
				for _, p := range parts {
					srcs = append(srcs, Named{Name: p.Name, Config: p.Config})
				}
				got, gotErr = MergeNamed(srcs...)
			default:
				t.Fatalf("case name must start with parts- or sources-")
			}
			wantErr, _ := os.ReadFile(filepath.Join(dir, "want-error.txt"))
			if w := strings.TrimSpace(string(wantErr)); w == "" && gotErr != nil {
				t.Errorf("unexpected error: %v", gotErr)
			} else if w != "" && (gotErr == nil || !strings.Contains(gotErr.Error(), w)) {
				t.Errorf("error %v, want it to contain %q", gotErr, w)
			}
			wantPath := filepath.Join(dir, "want.yaml")
			if golden.Update() {
				b, err := yaml.Marshal(got)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(wantPath, b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			b, err := os.ReadFile(wantPath)
			if err != nil {
				t.Fatal(err)
			}
			want, err := datasource.DecodeYAMLMap(b)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("merged (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseMergeHow(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      any
		want    Mergers
		wantErr string
	}{
		{"nil", nil, nil, ""},
		{"empty", "", nil, ""},
		{"string form", "list(append)+dict(recurse_array)+str()",
			Mergers{{"list", []string{"append"}}, {"dict", []string{"recurse_array"}}, {"str", nil}}, ""},
		{"case, spaces, dashes, prefix", " List( Append , ) + m_DICT(no-replace,recurse-list) ",
			Mergers{{"list", []string{"append"}}, {"dict", []string{"no_replace", "recurse_list"}}}, ""},
		{"empty segments", "+list()++", Mergers{{"list", nil}}, ""},
		{"list of mappings", []any{map[string]any{"name": "list", "settings": []any{"append"}}, map[string]any{"name": "Dict", "settings": []any{}}},
			Mergers{{"list", []string{"append"}}, {"dict", []string{}}}, ""},
		{"list of lists", []any{[]any{"list", "prepend"}, []any{"str"}}, Mergers{{"list", []string{"prepend"}}, {"str", []string{}}}, ""},
		{"settings string", []any{map[string]any{"name": "str", "settings": "append"}}, Mergers{{"str", []string{"append"}}}, ""},
		{"missing paren", "list(append", nil, `merger 1 "list(append": not in name(options) form`},
		{"no parens", "list", nil, "not in name(options) form"},
		{"unknown merger", "list()+set()", nil, `merger 2: unknown merger "set"`},
		{"missing settings", []any{map[string]any{"name": "list"}}, nil, "merger 1 (list): settings missing"},
		{"name not string", []any{map[string]any{"name": 3, "settings": nil}}, nil, "name must be a string, got number"},
		{"bad item", []any{"list(append)"}, nil, "want a mapping {name, settings} or a list [name, option...], got string"},
		{"bad type", map[string]any{"name": "list"}, nil, "want a string or a list, got mapping"},
		{"bad setting", []any{[]any{"list", 1}}, nil, "item 2: want a string, got number"},
		{"unknown option", "dict(sideways)", Mergers{{"dict", []string{"sideways"}}}, `unknown merge option "sideways" for merger dict`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseMergeHow(tc.in)
			if tc.wantErr == "" && err != nil {
				t.Fatalf("error: %v", err)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("error %v, want %q", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestDefaultMergersMatchStrings(t *testing.T) {
	for s, want := range map[string]Mergers{DefaultPartMergeHow: defaultPartMergers(), DefaultMergeHow: defaultMergers()} {
		got, err := ParseMergeHow(s)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b []string) bool { return slices.Equal(a, b) })); diff != "" {
			t.Errorf("%s (-want +got):\n%s", s, diff)
		}
	}
}

func TestMergersString(t *testing.T) {
	m, err := ParseMergeHow("list(append)+dict(no_replace,recurse_list)+str()")
	if err != nil {
		t.Fatal(err)
	}
	if got := m.String(); got != "list(append)+dict(no_replace,recurse_list)+str()" {
		t.Errorf("String() = %q", got)
	}
}

func TestMergePartsDoesNotMutate(t *testing.T) {
	p1 := map[string]any{"runcmd": []any{"a"}, "d": map[string]any{"x": 1}}
	p2 := map[string]any{"runcmd": []any{"b"}, "d": map[string]any{"y": 2}, "merge_how": "dict(recurse_array,no_replace)+list(append)"}
	if _, err := MergeParts([]Part{{Config: p1}, {Config: p2}}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"runcmd": []any{"b"}, "d": map[string]any{"y": 2}, "merge_how": "dict(recurse_array,no_replace)+list(append)"}, p2); diff != "" {
		t.Errorf("part mutated: %s", diff)
	}
	if diff := cmp.Diff(map[string]any{"runcmd": []any{"a"}, "d": map[string]any{"x": 1}}, p1); diff != "" {
		t.Errorf("part mutated: %s", diff)
	}
}

func TestMergePartsMergeTypeKeptWithMergeHow(t *testing.T) {
	// dict_extract_mergers pops merge_how, and merge_type only without it.
	got, err := MergeParts([]Part{{Config: map[string]any{"merge_how": "dict(replace)", "merge_type": "list(append)", "a": 1}}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"a": 1, "merge_type": "list(append)"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestMergeWith(t *testing.T) {
	ms, _ := ParseMergeHow("dict(no_replace,recurse_list)+list(append)")
	lo := map[string]any{"a": []any{1}}
	got, err := MergeWith(lo, map[string]any{"a": []any{2}, "b": true}, ms)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"a": []any{1, 2}, "b": true}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{"a": []any{1}}, lo); diff != "" {
		t.Errorf("input mutated: %s", diff)
	}
}

func TestModesDocumentEveryOption(t *testing.T) {
	// Every option compile() looks at is in the registry.
	for _, o := range []struct{ merger, opt string }{
		{"dict", "replace"}, {"dict", "no_replace"}, {"dict", "allow_delete"}, {"dict", "recurse_array"},
		{"dict", "recurse_list"}, {"dict", "recurse_str"}, {"dict", "recurse_dict"},
		{"list", "append"}, {"list", "prepend"}, {"list", "replace"}, {"list", "no_replace"},
		{"list", "recurse_dict"}, {"list", "recurse_array"}, {"list", "recurse_list"}, {"list", "recurse_str"},
		{"str", "append"},
	} {
		if !knownOption(o.merger, o.opt) {
			t.Errorf("%s(%s) missing from Modes()", o.merger, o.opt)
		}
	}
}

func FuzzMergeHow(f *testing.F) {
	for _, s := range []string{DefaultMergeHow, DefaultPartMergeHow, "list(append)+dict(recurse_array)+str()",
		"dict(allow_delete,no_replace)+list()", "m_list(prepend)", "list(", "+", "a(b(c))", "dict(replace)+dict(no_replace)"} {
		f.Add(s)
	}
	lo := map[string]any{"a": []any{"x", map[string]any{"k": "v"}}, "s": "str", "d": map[string]any{"n": 1, "l": []any{"q"}}, "n": nil}
	hi := map[string]any{"a": []any{[]any{"y"}, map[string]any{"k": "w"}, "z"}, "s": map[string]any{"x": 1}, "d": map[string]any{"n": nil, "l": "chars"}, "n": 3}
	f.Fuzz(func(t *testing.T, s string) {
		ms, err := ParseMergeHow(s)
		if err != nil && !errors.Is(err, ErrUnknownOption) {
			return
		}
		// Round trip through the string form.
		again, err2 := ParseMergeHow(ms.String())
		if (err2 == nil) != (err == nil) && !errors.Is(err2, ErrUnknownOption) {
			t.Fatalf("%q → %q: %v / %v", s, ms.String(), err, err2)
		}
		if len(again) != len(ms) {
			t.Fatalf("%q → %q: %d mergers, then %d", s, ms.String(), len(ms), len(again))
		}
		// Merging never panics, never mutates its inputs.
		lo2, hi2 := deepCopy(lo), deepCopy(hi)
		_, _ = MergeWith(lo, hi, ms)
		if !cmp.Equal(lo, lo2) || !cmp.Equal(hi, hi2) {
			t.Fatal("inputs mutated")
		}
		_, _ = MergeParts([]Part{{Config: lo}, {Config: hi, MergeHow: s}})
	})
}

// bigConfig is a cloud-config with n users, files and commands.
func bigConfig(n int, tag string) map[string]any {
	var users, files, cmds []any
	for i := range n {
		users = append(users, map[string]any{"name": fmt.Sprintf("%s%d", tag, i), "groups": []any{"adm", "wheel"},
			"ssh_authorized_keys": []any{"ssh-ed25519 AAAA" + tag}, "shell": "/bin/bash"})
		files = append(files, map[string]any{"path": fmt.Sprintf("/etc/%s/%d", tag, i), "content": strings.Repeat("x", 64), "permissions": "0644"})
		cmds = append(cmds, []any{"echo", tag, fmt.Sprint(i)})
	}
	return map[string]any{"users": users, "write_files": files, "runcmd": cmds,
		"system_info": map[string]any{"default_user": map[string]any{"name": tag}, "distro": "debian"}}
}

func BenchmarkMergeLargeConfig(b *testing.B) {
	sys := bigConfig(1000, "sys")
	vendor := bigConfig(1000, "vendor")
	user := bigConfig(1000, "user")
	user["merge_how"] = "list(append)+dict(no_replace,recurse_list)+str()"
	parts := []Part{{Config: bigConfig(500, "p1")}, {Config: user}}
	b.ReportAllocs()
	for b.Loop() {
		u, err := MergeParts(parts)
		if err != nil {
			b.Fatal(err)
		}
		_ = MergeSources(Builtin(), sys, vendor, u)
	}
}
