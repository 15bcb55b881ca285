package cli

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"github.com/cloudroot/cloudroot/pkg/internal/golden"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A CLI golden case is a directory testdata/<command>/<case>/ holding
//
//	args       the arguments after "cloud-init", one per line; $ROOT is the
//	           case's root and $CASE the case directory
//	tree       optional: a directory under testdata/ copied as the root
//	root/      optional: the root itself (copied over tree)
//	user       optional: "nonroot" runs with Env.IsRoot false
//	want.stdout, want.stderr, want.rc
//
// The root gets /var/lib/cloud/instance -> /var/lib/cloud/instances/<iid>
// when it holds exactly one instance, as the init stage links it.
// Directories starting with "_" hold shared trees, not cases.

var mimeBoundaryRE = regexp.MustCompile(`={15}\d{19}==(\.\d+)?`)

func runCLIGolden(t *testing.T, command string) {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join("testdata", command, "*"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, dir := range dirs {
		if strings.HasPrefix(filepath.Base(dir), "_") {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, "args")); err != nil {
			continue
		}
		n++
		t.Run(filepath.Base(dir), func(t *testing.T) { runCLICase(t, dir) })
	}
	if n == 0 {
		t.Fatalf("no cases under testdata/%s", command)
	}
}

func runCLICase(t *testing.T, dir string) {
	t.Helper()
	caseDir, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	if b, err := os.ReadFile(filepath.Join(dir, "tree")); err == nil {
		copyInto(t, filepath.Join("testdata", strings.TrimSpace(string(b))), root)
	}
	if _, err := os.Stat(filepath.Join(dir, "root")); err == nil {
		copyInto(t, filepath.Join(dir, "root"), root)
	}
	linkInstance(t, root)

	b, err := os.ReadFile(filepath.Join(dir, "args"))
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if len(b) == 0 {
			break
		}
		l = strings.ReplaceAll(l, "$ROOT", root)
		args = append(args, strings.ReplaceAll(l, "$CASE", caseDir))
	}
	env, out, errb := newTestEnv(root)
	env.IsRoot = true
	if u, err := os.ReadFile(filepath.Join(dir, "user")); err == nil && strings.TrimSpace(string(u)) == "nonroot" {
		env.IsRoot = false
	}
	rc := Run(context.Background(), env, args)
	mask := func(s string) string {
		s = strings.ReplaceAll(s, caseDir, "$CASE")
		s = strings.ReplaceAll(s, root, "$ROOT")
		s = strings.ReplaceAll(s, "cloud-init "+Version+"\n", "cloud-init $VERSION\n")
		return mimeBoundaryRE.ReplaceAllString(s, "===============BOUNDARY==")
	}
	golden.Check(t, filepath.Join(dir, "want.stdout"), []byte(mask(out.String())))
	golden.Check(t, filepath.Join(dir, "want.stderr"), []byte(mask(errb.String())))
	golden.Check(t, filepath.Join(dir, "want.rc"), []byte(strconv.Itoa(rc)+"\n"))
}

// copyInto copies the tree src into dst, keeping file modes' exec bits.
func copyInto(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatalf("copying %s: %v", src, err)
	}
}

func linkInstance(t *testing.T, root string) {
	t.Helper()
	link := filepath.Join(root, "var/lib/cloud/instance")
	if _, err := os.Lstat(link); err == nil {
		return
	}
	ents, err := os.ReadDir(filepath.Join(root, "var/lib/cloud/instances"))
	if err != nil || len(ents) != 1 {
		return
	}
	if err := os.Symlink("/var/lib/cloud/instances/"+ents[0].Name(), link); err != nil {
		t.Fatal(err)
	}
}

func TestQueryGolden(t *testing.T) { runCLIGolden(t, "query") }

func TestQueryPath(t *testing.T) {
	data := map[string]any{
		"v1": map[string]any{"local-hostname": "h", "n": json.Number("3")},
		"ds": map[string]any{"meta_data": map[string]any{"v1.0": map[string]any{"a-b": "x"}}},
		"s":  "str",
	}
	resp := instanceVars(data)
	aliased := plainValue(aliasedVars(data))
	for _, tc := range []struct {
		path    string
		want    any
		wantErr string
	}{
		{"v1.local_hostname", "h", ""},
		{"v1.local-hostname", "h", ""},
		{"local_hostname", "h", ""},
		{"n", json.Number("3"), ""},
		{"ds.meta_data.v1_0.a_b", "x", ""},
		{"ds.meta_data.v1_0", map[string]any{"a-b": "x"}, ""},
		{"bogus", nil, "Undefined instance-data key 'bogus'"},
		{"v1.bogus", nil, "instance-data 'v1' has no 'bogus'"},
		{"v1..x", nil, "instance-data 'v1' has no ''"},
		{"s.x", nil, "instance-data 's' has no 'x'"},
		{"ds.meta_data.v1.0", nil, "instance-data 'ds.meta_data' has no 'v1'"},
	} {
		got, err := queryPath(resp, aliased, tc.path)
		if tc.wantErr != "" {
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("%s: err = %v, want %q", tc.path, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.path, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.path, diff)
		}
	}
}

func TestJSONDumps(t *testing.T) {
	v, err := decodeInstanceJSON([]byte(`{"b": [1, 2.50, 1e400, {}, []], "a": {"é": "\u2603\ud83d\ude00", "n": null, "t": true}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n \"a\": {\n  \"n\": null,\n  \"t\": true,\n  \"\\u00e9\": \"\\u2603\\ud83d\\ude00\"\n },\n \"b\": [\n  1,\n  2.5,\n  Infinity,\n  {},\n  []\n ]\n}"
	if diff := cmp.Diff(want, jsonDumps(v)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestLoadUserData(t *testing.T) {
	dir := t.TempDir()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("#cloud-config\nhostname: gz\n"))
	zw.Close()
	files := map[string][]byte{
		"text":   []byte("#!/bin/sh\necho ü\n"),
		"gzip":   gz.Bytes(),
		"binary": {0xff, 0xfe, 0x00},
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, want := range map[string]string{
		"text":    "#!/bin/sh\necho ü\n",
		"gzip":    "#cloud-config\nhostname: gz\n",
		"binary":  "ci-b64://4A",
		"missing": "",
	} {
		if got := loadUserData(filepath.Join(dir, name)); got != want {
			t.Errorf("%s: got %q, want %q", name, got, want)
		}
	}
}

func TestArgParser(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		want    string // flags/values/positionals, or the error
		wantErr bool
	}{
		{[]string{"-al"}, "dump_all list_keys", false},
		{[]string{"--all", "--list", "v1"}, "dump_all list_keys pos=v1", false},
		{[]string{"-i", "f", "-u=g", "--vendor=h"}, "instance_data=f user_data=g vendor_data=h", false},
		{[]string{"-ifile", "--format={{x}}"}, "format={{x}} instance_data=file", false},
		{[]string{"-lf", "{{ a }}"}, "format={{ a }} list_keys", false},
		{[]string{"--", "-x"}, "pos=-x", false},
		{[]string{"-1"}, "pos=-1", false},
		{[]string{"-i"}, "argument -i/--instance-data: expected one argument", true},
		{[]string{"-i", "-a"}, "argument -i/--instance-data: expected one argument", true},
		{[]string{"--bogus"}, "unrecognized arguments: --bogus", true},
		{[]string{"a", "b", "c"}, "unrecognized arguments: b c", true},
		{[]string{"--all=1"}, "argument -a/--all: ignored explicit argument '1'", true},
		{[]string{"-ax"}, "argument -a/--all: ignored explicit argument 'x'", true},
		{[]string{"--h"}, "help requested", true},
	} {
		a, err := queryArgs.parse(tc.args)
		var got string
		if err != nil {
			got = err.Error()
		} else {
			var parts []string
			for _, o := range queryArgs.opts {
				if a.flag(o.dest) {
					parts = append(parts, o.dest)
				}
				if v := a.value(o.dest); v != "" {
					parts = append(parts, o.dest+"="+v)
				}
			}
			for _, p := range a.pos {
				parts = append(parts, "pos="+p)
			}
			sortStrings(parts)
			got = strings.Join(parts, " ")
		}
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("%q: got %q (err %v), want %q", tc.args, got, err, tc.want)
		}
	}
	// Ambiguous prefixes, as argparse reports them.
	if _, err := schemaArgs.parse([]string{"--s"}); err == nil || !strings.Contains(err.Error(), "ambiguous option: --s could match --schema-type, --system") {
		t.Errorf("ambiguous: %v", err)
	}
	if _, err := schemaArgs.parse([]string{"-t", "bogus"}); err == nil || err.Error() != "argument -t/--schema-type: invalid choice: 'bogus' (choose from 'cloud-config', 'network-config')" {
		t.Errorf("choices: %v", err)
	}
	if _, err := renderArgs.parse(nil); err == nil || err.Error() != "the following arguments are required: user_data" {
		t.Errorf("required: %v", err)
	}
	if _, err := queryArgs.parse([]string{"-h"}); !errors.Is(err, errArgHelp) {
		t.Errorf("-h: %v", err)
	}
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// FuzzQueryPath: the dot-path walker never panics, and a path it resolves
// keeps resolving to the same value when every part is written as its
// underscore alias.
func FuzzQueryPath(f *testing.F) {
	for _, s := range []string{"v1", "v1.local_hostname", "ds.meta_data.v1_0", "a..b", ".", "", "ds.meta_data.local-hostname", "v1.public_ssh_keys.0"} {
		f.Add(s)
	}
	b, err := os.ReadFile("testdata/query/_trees/nocloud/run/cloud-init/instance-data-sensitive.json")
	if err != nil {
		f.Fatal(err)
	}
	data, err := decodeInstanceJSON(b)
	if err != nil {
		f.Fatal(err)
	}
	resp := instanceVars(data)
	aliased := plainValue(aliasedVars(data))
	f.Fuzz(func(t *testing.T, p string) {
		v, err := queryPath(resp, aliased, p)
		if err != nil {
			var qe *queryError
			if !errors.As(err, &qe) {
				t.Fatalf("%q: unexpected error type %T", p, err)
			}
			return
		}
		_ = jsonDumps(v)
		parts := strings.Split(p, ".")
		for i, part := range parts {
			parts[i] = jinjaOperatorRE().ReplaceAllString(part, "_")
		}
		v2, err := queryPath(resp, aliased, strings.Join(parts, "."))
		if err != nil {
			return // an alias with a "." in it splits differently
		}
		if jsonDumps(v) != jsonDumps(v2) {
			t.Fatalf("%q: alias path resolves elsewhere", p)
		}
	})
}

// TestArgsGolden: argument errors, help and version of every subcommand
// against upstream's answers (scripts/goldens/cli-args.sh).
func TestArgsGolden(t *testing.T) { runCLIGolden(t, "args") }
