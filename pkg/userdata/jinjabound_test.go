package userdata

import (
	"errors"
	"strings"
	"testing"
)

// TestJinjaBombs: each template used to crash PID 1 (a Go stack
// overflow), take the machine's memory, or run for minutes; each now ends
// in an error of the part, quickly, and the same template within the
// bounds still renders.
func TestJinjaBombs(t *testing.T) {
	const h = "## template: jinja\n"
	for _, c := range []struct {
		name, tmpl string
		want       string // in the error
		bound      bool   // the error wraps ErrJinjaBound
	}{
		{"self include", `{% include "user-data-template" %}`, "cannot load", false},
		{"include other", `{% include "/etc/shadow" %}`, "cannot load", false},
		{"extends self", `{% extends "user-data-template" %}`, "cannot load", false},
		{"import self", `{% import "user-data-template" as x %}{{ x }}`, "cannot load", false},
		{"recursive macro", `{% macro m(n) %}{{ m(n + 1) }}{% endmacro %}{{ m(0) }}`, "nested more than", true},
		{"mutually recursive macros", `{% macro a() %}{{ b() }}{% endmacro %}{% macro b() %}{{ a() }}{% endmacro %}{{ a() }}`, "nested more than", true},
		{"macro fan-out", `{% macro m(n) %}{% if n < 40 %}{{ m(n + 1) }}{{ m(n + 1) }}{% endif %}{% endmacro %}{{ m(0) }}`, "macro", true},
		{"huge range", `{% for i in range(100000000) %}{% endfor %}`, "range() of more than", true},
		{"huge range list", `{% set x = range(100000000)|list %}{{ x|length }}`, "range() of more than", true},
		{"string multiply", `{{ "a" * 1000000000 }}`, "more than", true},
		{"string multiply in set", `{% set x = "a" * 1000000000 %}{{ x|length }}`, "more than", true},
		{"string doubling", `{% set s = "a" * 1000000 %}` + strings.Repeat(`{% set s = s + s %}`, 40) + `{{ s|length }}`, "more than", true},
		{"concat doubling", `{% set s = "a" * 1000000 %}` + strings.Repeat(`{% set s = s ~ s %}`, 40) + `{{ s|length }}`, "more than", true},
		{"nested loops", `{% for i in range(3000) %}{% for j in range(3000) %}{% for k in range(3000) %}{% endfor %}{% endfor %}{% endfor %}`, "loop iterations", true},
		{"many short loops", `{% for i in range(100) %}{% for j in range(100) %}{% for k in range(100) %}{% endfor %}{% endfor %}{% endfor %}`, "loop iterations", true},
		{"loop output", `{% set s = "x" * 1000000 %}{% for i in range(50000) %}{{ s }}{% endfor %}`, "more than", true},
		{"loop output in a macro", `{% macro m() %}{% set s = "x" * 1000000 %}{% for i in range(50000) %}{{ s }}{% endfor %}{% endmacro %}{% set y = m() %}`, "more than", true},
		{"filter width", `{{ "x"|center(1000000000) }}`, "filter center", true},
		{"method width", `{{ "x".ljust(1000000000) }}`, "method ljust", true},
		{"indent", `{% set s = "\n" * 1000000 %}{{ s|indent(1000) }}`, "filter indent", true},
		{"replace", `{% set s = "a" * 1000000 %}{{ s|replace("a", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb") }}`, "filter replace", true},
		{"lipsum", `{{ lipsum(100000000) }}`, "lipsum", true},
		{"recursive loop", `{% for x in [1] recursive %}{{ loop([1]) }}{% endfor %}`, "recursive for loops", true},
		{"deep brackets", "{{ " + strings.Repeat("(", 100000) + "1" + strings.Repeat(")", 100000) + " }}", "nested more than", true},
		{"deep blocks", strings.Repeat("{% if true %}", 100000) + strings.Repeat("{% endif %}", 100000), "nested more than", true},
		{"long unary chain", "{{ " + strings.Repeat("not ", 100000) + "1 }}", "tokens", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, _, err := RenderJinja([]byte(h+c.tmpl), map[string]any{"v1": map[string]any{}})
			if err == nil {
				t.Fatalf("rendered %d bytes, want an error", len(out))
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q, want it to say %q", err, c.want)
			}
			if c.bound != errors.Is(err, ErrJinjaBound) {
				t.Errorf("errors.Is(%v, ErrJinjaBound) = %v, want %v", err, !c.bound, c.bound)
			}
		})
	}
}

// TestJinjaWithinBounds: what the bounds allow renders as before.
func TestJinjaWithinBounds(t *testing.T) {
	const h = "## template: jinja\n"
	for _, c := range []struct{ tmpl, want string }{
		{`{% for i in range(3) %}{{ i }}{% endfor %}`, "012"},
		{`{% for i in range(10, 0, -3) %}{{ i }},{% endfor %}`, "10,7,4,1,"},
		{`{{ range(5)|list|length }} {{ range(5)|join("-") }}`, "5 0-1-2-3-4"},
		{`{{ "ab" * 3 }} {{ 2 * 3 }} {{ 1.5 * 2 }} {{ "a" + "b" }} {{ 1 + 2 }} {{ [1] + [2] }} {{ 1 ~ "x" }}`, "ababab 6 3.0 ab 3 [1, 2] 1x"},
		{`{% macro f(n) %}{% if n > 0 %}{{ n }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(5) }}`, "54321"},
		{`{% set s = "a" * 1000 %}{{ s|length }} {{ "x"|center(5) }}|{{ "ab".upper() }}|`, "1000   x  |AB|"},
		{`{% for i in range(300) %}{% for j in range(300) %}{% endfor %}{% endfor %}done`, "done"},
	} {
		out, _, err := RenderJinja([]byte(h+c.tmpl), map[string]any{"v1": map[string]any{}})
		if err != nil {
			t.Errorf("%s: %v", c.tmpl, err)
			continue
		}
		if got := strings.TrimSpace(string(out)); got != c.want {
			t.Errorf("%s = %q, want %q", c.tmpl, got, c.want)
		}
	}
}
