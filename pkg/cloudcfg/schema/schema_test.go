package schema

import (
	"encoding/json"
	"github.com/cloudroot/cloudroot/pkg/internal/golden"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"
)

const goldenDir = "../testdata/schema"

// TestGolden validates ../testdata/schema/<case>/cloud-config.yaml and
// compares WriteText's stdout+stderr with want.txt and Annotate's output
// with want-annotate.txt.
func TestGolden(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join(goldenDir, "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			doc, err := os.ReadFile(filepath.Join(dir, "cloud-config.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			r := ValidateUserData(doc, "cloud-config.yaml")
			var out, errOut strings.Builder
			if err := WriteText(&out, &errOut, r, ""); err != nil {
				t.Fatal(err)
			}
			golden.CheckString(t, filepath.Join(dir, "want.txt"), out.String()+errOut.String())
			golden.CheckString(t, filepath.Join(dir, "want-annotate.txt"), Annotate(doc, r))
		})
	}
}

func TestSchemaIsValidJSON(t *testing.T) {
	var v map[string]any
	if err := json.Unmarshal(JSON(), &v); err != nil {
		t.Fatal(err)
	}
	if v["$schema"] != "https://json-schema.org/draft/2020-12/schema" {
		t.Errorf("$schema = %v", v["$schema"])
	}
	if _, err := compiled(); err != nil {
		t.Fatal(err)
	}
}

// The modules cloudroot implements own these top-level keys
// (pkg/modules *.Keys); each must be described (not just accepted).
var implementedKeys = []string{
	"bootcmd", "runcmd", "write_files", "preserve_hostname", "hostname", "fqdn", "prefer_fqdn_over_hostname",
	"create_hostname_file", "manage_etc_hosts", "users", "user", "groups", "ssh_keys", "ssh_authorized_keys",
	"ssh_deletekeys", "ssh_genkeytypes", "disable_root", "disable_root_opts", "allow_public_ssh_keys",
	"ssh_quiet_keygen", "ssh_publish_hostkeys", "ssh_pwauth", "final_message", "power_state", "vendor_data",
	"chpasswd", "password", "timezone", "locale", "ntp", "ca_certs", "ca-certs", "keyboard", "random_seed", "manage_resolv_conf", "resolv_conf", "rsyslog",
}

func TestImplementedKeysHaveShapes(t *testing.T) {
	var v struct {
		Properties map[string]map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(JSON(), &v); err != nil {
		t.Fatal(err)
	}
	for _, k := range implementedKeys {
		p, ok := v.Properties[k]
		if !ok {
			t.Errorf("%s: not in the schema", k)
			continue
		}
		if len(p) == 0 {
			t.Errorf("%s: accepted without checks", k)
		}
	}
	for _, d := range Deprecations() {
		top, _, _ := strings.Cut(d.Path, ".")
		if _, ok := v.Properties[top]; !ok {
			t.Errorf("deprecated %s: top-level key %s is not in the schema (it would be reported unknown)", d.Path, top)
		}
	}
}

func TestValidateFindings(t *testing.T) {
	for _, tc := range []struct {
		name string
		doc  string
		want []Finding
	}{
		{"empty", "#cloud-config\n", nil},
		{"sudo type", "users:\n  - name: a\n    sudo: 5\n",
			// cloud-init 26.x: one "is not of type" per alternative.
			[]Finding{
				{Path: "users.0.sudo", Line: 3, Column: 5, Severity: Error, Message: "5 is not of type 'array'"},
				{Path: "users.0.sudo", Line: 3, Column: 5, Severity: Error, Message: "5 is not of type 'boolean'"},
				{Path: "users.0.sudo", Line: 3, Column: 5, Severity: Error, Message: "5 is not of type 'null', 'string'"},
			}},
		{"hostname type", "hostname: [a]\n",
			[]Finding{{Path: "hostname", Line: 1, Column: 1, Severity: Error, Message: "['a'] is not of type 'string'"}}},
		{"unknown nested", "power_state:\n  mode: halt\n  foo: 1\n",
			// An error on the mapping, as cloud-init 26.x reports it.
			[]Finding{{Path: "power_state", Line: 1, Column: 1, Severity: Error, Message: "Additional properties are not allowed ('foo' was unexpected)"}}},
		{"required", "write_files:\n- content: x\n",
			[]Finding{{Path: "write_files.0", Line: 2, Column: 3, Severity: Error, Message: "'path' is a required property"}}},
		{"enum", "write_files:\n- {path: /a, encoding: zip}\n",
			[]Finding{{Path: "write_files.0.encoding", Line: 2, Column: 14, Severity: Error,
				Message: "'zip' is not one of ['gz', 'gzip', 'gz+base64', 'gzip+base64', 'gz+b64', 'gzip+b64', 'b64', 'base64', 'text/plain']"}}},
		{"deprecated user key in dict form", "users:\n  bob:\n    lock-passwd: true\n",
			[]Finding{{Path: "users.bob.lock-passwd", Line: 3, Column: 5, Severity: Deprecation, Message: " Deprecated in version 22.3. Use **lock_passwd** instead."}}},
		{"item type", "bootcmd:\n  - [ls, 1]\n",
			[]Finding{{Path: "bootcmd.0.1", Line: 2, Column: 10, Severity: Error, Message: "1 is not of type 'string'"}}},
		{"alias bomb bounded", "a: &a [1,1,1,1,1,1,1,1,1,1]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: [*f,*f,*f,*f,*f,*f,*f,*f,*f,*f]\n",
			nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Validate([]byte(tc.doc), "x")
			got := r.Findings
			if tc.name == "alias bomb bounded" {
				if len(got) == 0 || !strings.Contains(got[0].Message, "too many nodes") {
					t.Fatalf("findings = %v", got)
				}
				return
			}
			var filtered []Finding
			for _, f := range got {
				if f.Severity == Warning && !strings.HasPrefix(tc.name, "unknown") {
					continue
				}
				filtered = append(filtered, f)
			}
			if diff := cmp.Diff(tc.want, filtered); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestAnnotateUnchangedWhenValid(t *testing.T) {
	doc := []byte("#cloud-config\nhostname: a\n")
	if got := Annotate(doc, Validate(doc, "x")); got != string(doc) {
		t.Errorf("got %q", got)
	}
}

// FuzzValidate checks Validate never panics and that every finding's line
// is inside the document and, for key paths, points at a line holding the
// last key of the path.
func FuzzValidate(f *testing.F) {
	dirs, _ := filepath.Glob(filepath.Join(goldenDir, "*", "cloud-config.yaml"))
	for _, p := range dirs {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("a: &x [*x]\n"))
	f.Add([]byte("<<: {a: 1}\n"))
	f.Fuzz(func(t *testing.T, doc []byte) {
		r := Validate(doc, "fuzz")
		nlines := strings.Count(string(doc), "\n") + 1
		var root yaml.Node
		parsed := yaml.Unmarshal(doc, &root) == nil
		lines := strings.Split(string(doc), "\n")
		for _, fd := range r.Findings {
			if fd.Line < 0 || fd.Line > nlines+1 {
				t.Fatalf("finding %+v outside a %d-line document", fd, nlines)
			}
			if !parsed || fd.Path == "" || fd.Line == 0 || fd.Line > len(lines) {
				continue
			}
			last := fd.Path[strings.LastIndex(fd.Path, ".")+1:]
			if _, err := yaml.Marshal(last); err == nil && !strings.ContainsAny(last, "\"'\\:#{}[],&*!|>%@`<\n\t ") && last != "" &&
				!isIndex(last) && !strings.ContainsAny(string(doc), "*&!") && !strings.Contains(string(doc), "<<") &&
				last != "None" && last != "True" && last != "False" && !isNumber(last) &&
				!strings.Contains(lines[fd.Line-1], last) && !strings.Contains(string(doc), "\r") {
				t.Fatalf("finding %+v: line %d %q does not mention %q", fd, fd.Line, lines[fd.Line-1], last)
			}
		}
		_ = Annotate(doc, r)
		var out strings.Builder
		_ = WriteText(&out, &out, r, "")
	})
}

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

func isIndex(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// errorPaths are the key paths of a "Cloud config schema errors: p: msg,
// p: msg" line.
func errorPaths(line string) []string {
	_, list, _ := strings.Cut(line, "schema errors: ")
	seen := map[string]bool{}
	var out []string
	for _, m := range errorPathRE.FindAllStringSubmatch(", "+list, -1) {
		if !seen[m[1]] {
			seen[m[1]] = true
			out = append(out, m[1])
		}
	}
	sort.Strings(out)
	return out
}

var errorPathRE = regexp.MustCompile(`, ([A-Za-z0-9_.\-]+): `)

// TestUpstreamErrorPaths: for cases with upstream-errors.txt (the errors
// line of upstream's `cloud-init schema -c` on the same file), cloudroot
// rejects exactly the same key paths (the libraries word messages apart).
func TestUpstreamErrorPaths(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(goldenDir, "*", "upstream-errors.txt"))
	for _, fn := range files {
		dir := filepath.Dir(fn)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			up, err := os.ReadFile(fn)
			if err != nil {
				t.Fatal(err)
			}
			ours, err := os.ReadFile(filepath.Join(dir, "want.txt"))
			if err != nil {
				t.Fatal(err)
			}
			var line string
			for l := range strings.SplitSeq(string(ours), "\n") {
				if strings.Contains(l, "schema errors: ") {
					line = l
				}
			}
			if diff := cmp.Diff(errorPaths(string(up)), errorPaths(line)); diff != "" {
				t.Errorf("rejected paths (-upstream +cloudroot):\n%s", diff)
			}
		})
	}
}

// TestSensitiveValuesNotQuoted: a mistyped password field is reported by
// its path, never with its value (findings reach status.json, 0644).
func TestSensitiveValuesNotQuoted(t *testing.T) {
	for _, doc := range []string{
		"#cloud-config\nusers:\n  - name: ann\n    plain_text_passwd: [Hunter2Secret]\n",
		"#cloud-config\nusers:\n  - name: ann\n    hashed_passwd: {x: Hunter2Secret}\n",
		"#cloud-config\nchpasswd:\n  users:\n    - {name: ann, password: [Hunter2Secret]}\n",
		"#cloud-config\npassword: [Hunter2Secret]\n",
	} {
		r := Validate([]byte(doc), "x")
		if len(r.Findings) == 0 {
			t.Errorf("%q: no finding", doc)
		}
		for _, f := range r.Findings {
			if strings.Contains(f.Message, "Hunter2Secret") {
				t.Errorf("%q: finding %s quotes the secret: %s", doc, f.Path, f.Message)
			}
		}
	}
}
