package cloudcfg

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cloudroot/cloudroot/pkg/target"
)

func TestMerge(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []map[string]any
		want map[string]any
	}{
		{"later wins scalars", []map[string]any{{"a": 1, "b": 2}, {"a": 3}}, map[string]any{"a": 3, "b": 2}},
		{"lists replace (cloud-init mergemanydict)", []map[string]any{{"runcmd": []any{"a"}}, {"runcmd": []any{"b"}}}, map[string]any{"runcmd": []any{"b"}}},
		{"dicts recurse", []map[string]any{
			{"system_info": map[string]any{"default_user": map[string]any{"name": "debian", "shell": "/bin/bash"}}},
			{"system_info": map[string]any{"default_user": map[string]any{"name": "admin"}}},
		}, map[string]any{"system_info": map[string]any{"default_user": map[string]any{"name": "admin", "shell": "/bin/bash"}}}},
		{"scalar wins over dict", []map[string]any{{"a": map[string]any{"x": 1}}, {"a": 7}}, map[string]any{"a": 7}},
		// cloud-init quirk: the str merger returns the (lower) new mapping.
		{"lower dict replaces higher string", []map[string]any{{"a": map[string]any{"x": 1}}, {"a": "s"}}, map[string]any{"a": map[string]any{"x": 1}}},
		{"nothing", nil, map[string]any{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Merge(tc.in...)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestMergeDoesNotMutate(t *testing.T) {
	lo := map[string]any{"a": map[string]any{"x": 1}}
	hi := map[string]any{"a": map[string]any{"y": 2}}
	Merge(lo, hi)
	if diff := cmp.Diff(map[string]any{"a": map[string]any{"x": 1}}, lo); diff != "" {
		t.Errorf("input mutated: %s", diff)
	}
}

func TestLoadSystem(t *testing.T) {
	dir := t.TempDir()
	write := func(p, s string) {
		hp := filepath.Join(dir, p)
		os.MkdirAll(filepath.Dir(hp), 0o755)
		os.WriteFile(hp, []byte(s), 0o644)
	}
	write("etc/cloud/cloud.cfg", "users: [default]\nruncmd: [base]\n")
	write("etc/cloud/cloud.cfg.d/90_b.cfg", "runcmd: [b]\n")
	write("etc/cloud/cloud.cfg.d/10_a.cfg", "runcmd: [a]\nhostname: x\n")
	write("etc/cloud/cloud.cfg.d/README", "not: config\n")
	write("etc/cloud/cloud.cfg.d/50_bad.cfg", "a: [\n")
	write("run/cloud-init/cloud.cfg", "datasource_list: [ NoCloud, None ]\n")
	r, err := target.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	srcs, err := LoadSystem(r)
	if err == nil || !strings.Contains(err.Error(), "/etc/cloud/cloud.cfg.d/50_bad.cfg") {
		t.Errorf("error %v does not name the bad file", err)
	}
	var names []string
	var cfgs []map[string]any
	for _, s := range srcs {
		names = append(names, s.Name)
		cfgs = append(cfgs, s.Config)
	}
	want := []string{"/etc/cloud/cloud.cfg", "/etc/cloud/cloud.cfg.d/10_a.cfg", "/etc/cloud/cloud.cfg.d/90_b.cfg", "/run/cloud-init/cloud.cfg"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("sources (-want +got):\n%s", diff)
	}
	m := Merge(cfgs...)
	if diff := cmp.Diff([]any{"b"}, m["runcmd"]); diff != "" {
		t.Errorf("runcmd: %s", diff)
	}
	if m["hostname"] != "x" {
		t.Errorf("hostname = %v", m["hostname"])
	}
}

// A repeated key in cloud.cfg.d keeps its last value, as cloud-init's
// PyYAML does, and is reported with the file, line and column; YAML 1.1
// scalars (yes, 0644) are read as cloud-init reads them.
func TestLoadRepeatedKeyAndYAML11(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "etc/cloud/cloud.cfg.d"), 0o755)
	os.WriteFile(filepath.Join(dir, "etc/cloud/cloud.cfg.d/10_a.cfg"), []byte("runcmd: [a]\nssh_pwauth: yes\numask: 0027\nruncmd: [b]\n"), 0o644)
	r, err := target.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Load(LoadOptions{Files: ReadSystemFiles(r, r)})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]any{"runcmd": m.Config["runcmd"], "ssh_pwauth": m.Config["ssh_pwauth"], "umask": m.Config["umask"]}
	want := map[string]any{"runcmd": []any{"b"}, "ssh_pwauth": true, "umask": 23}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("-want +got:\n%s", diff)
	}
	if len(m.Warnings) != 1 || !strings.HasPrefix(m.Warnings[0], `/etc/cloud/cloud.cfg.d/10_a.cfg: line 4 column 1: duplicate key "runcmd" (first at line 1)`) {
		t.Errorf("warnings = %q", m.Warnings)
	}
}
