package yaml11

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"
)

func TestLoadMapAndWarnings(t *testing.T) {
	doc := "#cloud-config\npackages: [a]\nssh_pwauth: yes\npackages: [b]\nwrite_files:\n- {path: /x, permissions: 0644}\n"
	m, w, err := LoadMap("user-data", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"packages":    []any{"b"},
		"ssh_pwauth":  true,
		"write_files": []any{map[string]any{"path": "/x", "permissions": 420}},
	}
	if d := cmp.Diff(want, m); d != "" {
		t.Errorf("-want +got:\n%s", d)
	}
	wantW := []Warning{{Source: "user-data", Key: "packages", Line: 4, Column: 1, FirstLine: 2}}
	if d := cmp.Diff(wantW, w); d != "" {
		t.Errorf("warnings -want +got:\n%s", d)
	}
	if got := w[0].String(); !strings.HasPrefix(got, `user-data: line 4 column 1: duplicate key "packages" (first at line 2)`) {
		t.Errorf("warning text %q", got)
	}
}

func TestErrorsNamePosition(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{"a: 1\nb: !!python/object:os.system x\n", "user-data: line 2 column 4: could not determine a constructor for the tag 'tag:yaml.org,2002:python/object:os.system'"},
		{"a: [1\n", "user-data: line 1: "},
		{"- a\n- b\n", "user-data: expected a mapping at the top level, got a list"},
		{"a: &x 1\nb: &x 2\n", `user-data: line 2 column 4: found duplicate anchor "x"`},
		{"a: 1\n---\nb: 2\n", "user-data: line 2 column 1: expected a single document"},
	} {
		_, _, err := LoadMap("user-data", []byte(tc.doc))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want prefix %q", tc.doc, err, tc.want)
		}
	}
}

func TestUnmarshalTyped(t *testing.T) {
	var cfg struct {
		Enabled bool   `yaml:"enabled"`
		Mode    int    `yaml:"mode"`
		Delay   int    `yaml:"delay"`
		Name    string `yaml:"name"`
		Count   int    `yaml:"count"`
	}
	w, err := Unmarshal("cloud.cfg", []byte("enabled: on\nmode: 0755\ndelay: 1:30\nname: yes\nname: 'off'\ncount: 0x10\n"), &cfg)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Enabled != true || cfg.Mode != 0o755 || cfg.Delay != 90 || cfg.Name != "off" || cfg.Count != 16 || len(w) != 1 {
		t.Errorf("got %+v, warnings %v", cfg, w)
	}
}

func TestExpansionLimit(t *testing.T) {
	doc := "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	prev := "a"
	for i := range 8 {
		name := string(rune('b' + i))
		doc += name + ": &" + name + " [" + strings.Repeat("*"+prev+", ", 9) + "*" + prev + "]\n"
		prev = name
	}
	_, err := Parse("user-data", []byte(doc))
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("billion laughs: got %v, want ErrTooLarge", err)
	}
	if _, err := ParseWith("x", []byte("a: &a [1, 2]\nb: [*a, *a]\n"), Options{Limit: 20}); err != nil {
		t.Errorf("small document refused: %v", err)
	}
}

func TestPyFloatRepr(t *testing.T) {
	for f, want := range map[float64]string{1: "1.0", 1e16: "1e+16", 1e15: "1000000000000000.0", 0.0001: "0.0001",
		0.00001: "1e-05", -1.5: "-1.5", 685230.15: "685230.15", 1.5e-300: "1.5e-300", 123456789012345678: "1.2345678901234568e+17"} {
		if got := PyFloatRepr(f); got != want {
			t.Errorf("PyFloatRepr(%v) = %q, want %q", f, got, want)
		}
	}
}

// BenchmarkLoad loads cloud-init's cloud-config.txt example (what a boot
// pays per cloud-config part).
func BenchmarkLoad(b *testing.B) {
	doc, err := os.ReadFile("testdata/corpus/ex-cloud-config.yaml")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		if _, _, err := Load("user-data", doc); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkYAMLv3 is the same document through plain yaml.v3, for
// comparison.
func BenchmarkYAMLv3(b *testing.B) {
	doc, err := os.ReadFile("testdata/corpus/ex-cloud-config.yaml")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		var n yaml.Node
		if err := yaml.Unmarshal(doc, &n); err != nil {
			b.Fatal(err)
		}
	}
}
