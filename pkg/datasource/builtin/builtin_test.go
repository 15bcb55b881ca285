package builtin

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/identify"
	"github.com/cloudroot/cloudroot/pkg/internal/golden"
)

const (
	docPath  = "../../../docs/datasources.md"
	beginGen = "<!-- BEGIN GENERATED: datasources (go test ./pkg/datasource/builtin -run TestDocs -update) -->"
	endGen   = "<!-- END GENERATED: datasources -->"
)

func TestRegistry(t *testing.T) {
	reg := Registry()
	order := append(CloudInitList(), "None")
	last := -1
	for _, s := range reg {
		i := slices.Index(order, s.Name())
		if i < 0 {
			t.Errorf("%s is not a cloud-init datasource name", s.Name())
		}
		if i <= last {
			t.Errorf("%s is out of cloud-init's order", s.Name())
		}
		last = i
		if identify.NormalizeName(strings.ToLower(s.Name())) != s.Name() {
			t.Errorf("identify does not know %s", s.Name())
		}
		if got, ok := reg.Lookup(strings.ToUpper(s.Name())); !ok || got != s {
			t.Errorf("Lookup(%s) failed", s.Name())
		}
	}
	sel, missing := reg.Select([]string{"Ec2", "NoSuchCloud", "NoCloud", "None"})
	if diff := cmp.Diff([]string{"Ec2", "NoCloud", "None"}, sel.Names()); diff != "" {
		t.Errorf("Select (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"NoSuchCloud"}, missing); diff != "" {
		t.Errorf("Select missing (-want +got):\n%s", diff)
	}
	if &Registry()[0] == &reg[0] {
		t.Error("Registry returns a shared slice")
	}
}

// pkgDir is the directory of the package a source is defined in, relative
// to this one.
func pkgDir(s datasource.Source) string {
	p := reflect.TypeOf(s).Elem().PkgPath()
	return filepath.Join("..", p[strings.LastIndex(p, "/")+1:])
}

// TestTested: no source is listed as working without tests: its Doc says
// how it is tested, its package has tests, and golden cases when it says
// so.
func TestTested(t *testing.T) {
	for _, s := range Registry() {
		doc, ok := s.(datasource.Documented)
		if !ok || doc.Doc().Tests == "" || doc.Doc().Reads == "" {
			t.Errorf("%s does not document what it reads and how it is tested", s.Name())
			continue
		}
		dir := pkgDir(s)
		tests, _ := filepath.Glob(filepath.Join(dir, "*_test.go"))
		if len(tests) == 0 {
			t.Errorf("%s (%s) has no tests", s.Name(), dir)
		}
		if strings.Contains(doc.Doc().Tests, "golden") {
			wants, _ := filepath.Glob(filepath.Join(dir, "testdata", "*", "want.json"))
			if len(wants) == 0 {
				t.Errorf("%s claims golden tests but %s/testdata has no want.json", s.Name(), dir)
			}
		}
	}
}

func cell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}

// table renders docs/datasources.md's generated part.
func table() string {
	rules := map[string]string{}
	for _, d := range identify.Datasources() {
		rules[d.Name] = d.Rule
	}
	reg := Registry()
	var b strings.Builder
	b.WriteString("| # | datasource | status | stage | detection (pkg/identify) | reads | network config | tested by |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for i, name := range append(CloudInitList(), "None") {
		rule := rules[name]
		if name == "None" {
			rule = "never detected: ends every `datasource_list` as the fallback"
		}
		if rule == "" {
			rule = "—"
		}
		s, ok := reg.Lookup(name)
		if !ok {
			fmt.Fprintf(&b, "| %d | %s | not yet implemented | — | %s | — | — | — |\n", i+1, name, cell(rule))
			continue
		}
		doc := s.(datasource.Documented).Doc()
		stage := "local"
		if doc.Network {
			stage = "network"
		}
		fmt.Fprintf(&b, "| %d | %s | implemented (`%s`) | %s | %s | %s | %s | %s |\n", i+1, name,
			strings.TrimPrefix(reflect.TypeOf(s).Elem().PkgPath(), "github.com/cloudroot/cloudroot/"),
			stage, cell(rule), cell(doc.Reads), cell(doc.NetworkConfig), cell(doc.Tests))
	}
	return b.String()
}

// TestDocs keeps docs/datasources.md's table in step with the registry.
func TestDocs(t *testing.T) {
	b, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i, j := strings.Index(doc, beginGen), strings.Index(doc, endGen)
	if i < 0 || j < i {
		t.Fatalf("%s: generated-table markers missing", docPath)
	}
	want := doc[:i+len(beginGen)] + "\n" + table() + doc[j:]
	if golden.Update() {
		if err := os.WriteFile(docPath, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if diff := cmp.Diff(want, doc); diff != "" {
		t.Errorf("%s is stale; run go test ./pkg/datasource/builtin -run TestDocs -update (-want +got):\n%s", docPath, diff)
	}
}
