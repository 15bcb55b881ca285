package userdata

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRenderJinja(t *testing.T) {
	data := map[string]any{
		"v1": map[string]any{"local-hostname": "h1", "instance_id": "i-1", "launch_index": 0.0,
			"public_ssh_keys": []any{"k1"}},
		"ds":                  map[string]any{"meta_data": map[string]any{"a.b": "x", "secret": "c2VjcmV0"}},
		"base64_encoded_keys": []any{"ds/meta_data/secret"},
	}
	for _, tc := range []struct {
		name, in, want string
		missing        []string
		errLine        int
	}{
		{name: "v1 and top level", in: "{{ v1.instance_id }} {{ instance_id }}\n", want: "i-1 i-1\n"},
		{name: "hyphen alias", in: "{{ local_hostname }} {{ v1['local-hostname'] }}\n", want: "h1 h1\n"},
		{name: "dot alias", in: "{{ ds.meta_data.a_b }}", want: "x"},
		{name: "base64 key", in: "{{ ds.meta_data.secret }}", want: "secret"},
		{name: "integers stay integers", in: "{{ launch_index }}", want: "0"},
		{name: "missing", in: "{{ nope }} {{ v1.nope }}\n", want: "CI_MISSING_JINJA_VAR/nope CI_MISSING_JINJA_VAR/nope\n", missing: []string{"nope"}},
		{name: "undefined is false", in: "{% if v1.nope %}y{% else %}n{% endif %}", want: "n"},
		{name: "defined test", in: "{{ v1.nope is defined }} {{ v1.instance_id is defined }}", want: "False True"},
		{name: "default filter", in: "{{ v1.nope | default('d') }}", want: "d"},
		{name: "set shadows", in: "{% set nope = 'local' %}{{ nope }}", want: "local"},
		{name: "trim_blocks", in: "{% for k in public_ssh_keys %}\n- {{ k }}\n{% endfor %}\n", want: "- k1\n"},
		{name: "trailing newline kept", in: "a\n\n", want: "a\n\n"},
		{name: "syntax error line", in: "a\nb\n{{ foo( }}\n", errLine: 4},
		{name: "lexer error line", in: "a\n{{ v1.x }\n", errLine: 3},
		{name: "syntax error without position", in: "{% if %}\n", errLine: -1},
		{name: "no file access", in: "{% include '/etc/passwd' %}", errLine: -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, missing, err := RenderJinja([]byte("## template: jinja\n"+tc.in), data)
			if tc.errLine != 0 {
				if err == nil {
					t.Fatalf("no error, got %q", out)
				}
				var se *JinjaSyntaxError
				if tc.errLine > 0 && (!errors.As(err, &se) || se.Line != tc.errLine) {
					t.Errorf("err = %v, want syntax error on line %d", err, tc.errLine)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, string(out)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.missing, missing); diff != "" {
				t.Errorf("missing (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRenderJinjaNotATemplate(t *testing.T) {
	if _, _, err := RenderJinja([]byte("#cloud-config\n"), nil); err == nil || !strings.Contains(err.Error(), "not a jinja template") {
		t.Errorf("err = %v", err)
	}
}
