package userdata

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/nikolalohinski/gonja/v2/builtins"
	"github.com/nikolalohinski/gonja/v2/config"
	"github.com/nikolalohinski/gonja/v2/exec"
	"github.com/nikolalohinski/gonja/v2/loaders"
	"github.com/nikolalohinski/gonja/v2/parser"
	"github.com/nikolalohinski/gonja/v2/tokens"
)

// JinjaSyntaxError is a template that does not parse. Line counts the
// "## template: jinja" header as line 1, as cloud-init reports it.
type JinjaSyntaxError struct {
	Line int
	Msg  string
	Text string // the offending line, trimmed
}

func (e *JinjaSyntaxError) Error() string {
	if e.Line <= 0 {
		return "Unable to parse Jinja template due to syntax error: " + e.Msg
	}
	return fmt.Sprintf("Unable to parse Jinja template due to syntax error: %s on line %d: %s", e.Msg, e.Line, e.Text)
}

var (
	jinjaHeader  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)^##\s*template:\s*jinja\s*$`) })
	missingVarRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(regexp.QuoteMeta(MissingJinjaVar) + `[^\s]+`) })
	// operatorRe is Jinja's lexer operator set: keys containing one get an
	// underscore alias.
	operatorRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`//|\*\*|==|!=|>=|<=|[-+/*%~\[\](){}<>=.:|,;]`) })
	versionKey = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^v\d+$`) })
)

// jinja renders a text/jinja2 part and hands the result to the handler its
// new first line selects (cloud-config, jsonp, scripts, boothook).
func (p *processor) jinja(pt *pending) {
	name := pt.Filename
	if p.opts.InstanceData == nil {
		p.addError(name, 0, ErrNoInstanceData)
		return
	}
	out, missing, err := RenderJinja(pt.Content, p.opts.InstanceData)
	if err != nil {
		var se *JinjaSyntaxError
		line := 0
		if errors.As(err, &se) {
			line = se.Line
		}
		p.addError(name, line, fmt.Errorf("ignoring jinja template: %w", err))
		return
	}
	if len(missing) > 0 {
		q := make([]string, len(missing))
		for i, m := range missing {
			q[i] = "'" + m + "'"
		}
		p.warnf(name, "Could not render jinja template variables in file '%s': %s", name, strings.Join(q, ", "))
	}
	pt.Content = out
	pt.Template = "jinja"
	if len(out) == 0 {
		return
	}
	sub := typeFromStartsWith(out, "")
	switch sub {
	case TypeCloudConfig, TypeCloudConfigJSONP, TypeShellScript, TypeBoothook,
		TypeShellPerBoot, TypeShellPerInstance, TypeShellPerOnce:
		pt.Type = sub
		pt.parsed = false
		p.handle(pt)
	default:
		if sub == "" {
			sub = "None"
		}
		p.warnf(name, "Ignoring jinja template for %s. Could not find supported sub-handler for type %s", name, sub)
	}
}

// RenderJinja renders a "## template: jinja" document the way cloud-init
// does: the header line removed, variables from JinjaVars(instanceData),
// trim_blocks on, the trailing newline kept, an undefined variable rendered
// as CI_MISSING_JINJA_VAR/<name> and returned in missing. Templates cannot
// include, import or extend other files.
func RenderJinja(tmpl []byte, instanceData map[string]any) (out []byte, missing []string, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, missing, err = nil, nil, fmt.Errorf("rendering jinja template: the template engine failed: %v", r)
		}
	}()
	first, rest, _ := strings.Cut(string(tmpl), "\n")
	if !jinjaHeader().MatchString(strings.TrimRight(first, "\r")) {
		return nil, nil, errors.New("not a jinja template: the first line is not '## template: jinja'")
	}
	vars := JinjaVars(instanceData)

	cfg := config.New()
	cfg.TrimBlocks = true
	cfg.KeepTrailingNewline = true

	budget := newJinjaBudget(len(rest))
	env := jinjaEnv(budget)
	// Every name the template mentions that nothing defines renders as
	// cloud-init's marker; set/for bindings shadow these at run time.
	stream := tokens.LexAll(rest, cfg)
	lexLine := 0
	var toks []*tokens.Token
	for t := stream.Current(); t != nil; t = stream.Current() {
		toks = append(toks, t)
		if t.Type == tokens.Error && lexLine == 0 {
			lexLine = t.Line
			if lexLine == 0 && t.Pos >= 0 && t.Pos <= len(rest) {
				lexLine = strings.Count(rest[:t.Pos], "\n") + 1
			}
		}
		if stream.End() {
			break
		}
		if t.Type == tokens.Name && !jinjaKeywords()[t.Val] {
			if _, ok := vars[t.Val]; !ok && !env.Context.Has(t.Val) {
				vars[t.Val] = newUndefined(t.Val)
			}
		}
		stream.Next()
	}

	if err := nestingError(toks); err != nil {
		return nil, nil, fmt.Errorf("rendering jinja template: %w", err)
	}
	toks = nil

	const id = "user-data-template"
	t, err := exec.NewTemplate(id, cfg, &sourceLoader{id: id, src: rest}, env)
	if err != nil {
		var se *parser.SyntaxError
		if errors.As(err, &se) {
			lines := strings.Split(rest, "\n")
			if se.Line >= 1 && se.Line <= len(lines) {
				return nil, nil, &JinjaSyntaxError{Line: se.Line + 1, Msg: se.Message, Text: strings.TrimSpace(lines[se.Line-1])}
			}
			msg := se.Message
			if se.Raw != "" {
				msg += " (" + se.Raw + ")"
			}
			if lexLine >= 1 && lexLine <= len(lines) {
				return nil, nil, &JinjaSyntaxError{Line: lexLine + 1, Msg: msg, Text: strings.TrimSpace(lines[lexLine-1])}
			}
			return nil, nil, &JinjaSyntaxError{Msg: msg}
		}
		// The outer error quotes the whole template; keep only the cause.
		if inner := errors.Unwrap(err); inner != nil {
			return nil, nil, &JinjaSyntaxError{Msg: inner.Error()}
		}
		return nil, nil, &JinjaSyntaxError{Msg: "template does not parse"}
	}
	if err := budget.instrument(t.Root()); err != nil {
		return nil, nil, fmt.Errorf("rendering jinja template: %w", err)
	}
	s, err := t.ExecuteToString(exec.NewContext(vars))
	if budget.err != nil {
		// The engine's error quotes the expression; the bound says what.
		return nil, nil, fmt.Errorf("rendering jinja template: %w", budget.err)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("rendering jinja template: %w", err)
	}
	seen := map[string]bool{}
	for _, m := range missingVarRe().FindAllString(s, -1) {
		m = strings.TrimPrefix(m, MissingJinjaVar)
		if !seen[m] {
			seen[m] = true
			missing = append(missing, m)
		}
	}
	return []byte(s), missing, nil
}

var jinjaKeywords = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"true": true, "false": true, "none": true, "True": true, "False": true, "None": true,
		"and": true, "or": true, "not": true, "in": true, "is": true, "if": true, "else": true,
		"elif": true, "endif": true, "for": true, "endfor": true, "set": true, "endset": true,
		"macro": true, "endmacro": true, "call": true, "endcall": true, "filter": true,
		"endfilter": true, "block": true, "endblock": true, "extends": true, "include": true,
		"import": true, "from": true, "with": true, "endwith": true, "do": true, "raw": true,
		"endraw": true, "autoescape": true, "endautoescape": true, "recursive": true, "loop": true,
		"as": true, "ignore": true, "missing": true, "context": true, "without": true,
	}
})

// jinjaEnv is gonja's default environment with cloud-init's undefined
// semantics: markers are undefined for `defined`/`undefined`/`default`.
func jinjaEnv(b *jinjaBudget) *exec.Environment {
	filters := exec.NewFilterSet(map[string]exec.FilterFunction{}).Update(builtins.Filters)
	if orig, ok := filters.Get("default"); ok {
		_ = filters.Replace("default", func(e *exec.Evaluator, in *exec.Value, params *exec.VarArgs) *exec.Value {
			if isUndefined(in) {
				in = exec.AsValue(nil)
			}
			return orig(e, in, params)
		})
		_ = filters.Replace("d", func(e *exec.Evaluator, in *exec.Value, params *exec.VarArgs) *exec.Value {
			if isUndefined(in) {
				in = exec.AsValue(nil)
			}
			return orig(e, in, params)
		})
	}
	tests := exec.NewTestSet(map[string]exec.TestFunction{}).Update(builtins.Tests)
	_ = tests.Replace("defined", func(_ *exec.Context, in *exec.Value, _ *exec.VarArgs) (bool, error) {
		return !(in.IsError() || in.IsNil() || isUndefined(in)), nil
	})
	_ = tests.Replace("undefined", func(_ *exec.Context, in *exec.Value, _ *exec.VarArgs) (bool, error) {
		return in.IsError() || in.IsNil() || isUndefined(in), nil
	})
	ctx := exec.EmptyContext().Update(builtins.GlobalFunctions).Update(builtins.GlobalVariables)
	ctx.Set("range", b.rangeFunc)
	if orig, ok := ctx.Get("lipsum"); ok {
		if f, ok := orig.(func(*exec.Evaluator, *exec.VarArgs) *exec.Value); ok {
			ctx.Set("lipsum", b.lipsum(f))
		} else {
			ctx.Set("lipsum", nil)
		}
	}
	return &exec.Environment{
		Context:           ctx,
		Filters:           b.filters(filters),
		Tests:             tests,
		ControlStructures: builtins.ControlStructures,
		Methods:           b.methods(builtins.Methods),
	}
}

// undefinedVar renders as cloud-init's missing-variable marker and is false
// and empty in tests and loops, like Jinja's Undefined: an empty slice whose
// one-element capacity holds the name.
type undefinedVar []string

func newUndefined(name string) undefinedVar {
	s := make([]string, 1)
	s[0] = name
	return undefinedVar(s[:0])
}

func (u undefinedVar) name() string {
	if cap(u) < 1 {
		return ""
	}
	return u[:1][0]
}

func (u undefinedVar) String() string { return MissingJinjaVar + u.name() }

func isUndefined(v *exec.Value) bool {
	if v == nil || !v.Val.IsValid() || !v.Val.CanInterface() {
		return false
	}
	_, ok := v.Val.Interface().(undefinedVar)
	return ok
}

// jinjaDict is a mapping whose missing keys are undefinedVar markers.
type jinjaDict map[string]any

func (d jinjaDict) GetAttribute(name string) (*exec.Value, bool) {
	if v, ok := d[name]; ok {
		return exec.ToValue(v), true
	}
	return exec.AsValue(newUndefined(name)), true
}

func (d jinjaDict) GetItem(key any) (*exec.Value, bool) {
	if k, ok := key.(string); ok {
		return d.GetAttribute(k)
	}
	return exec.AsValue(nil), false
}

// JinjaVars converts instance data into template variables as cloud-init
// does: base64-encoded keys decoded, every v<N> mapping also copied to the
// top level, keys containing a Jinja operator ("-", ".") aliased with
// underscores, integral numbers made integers.
func JinjaVars(instanceData map[string]any) map[string]any {
	var decode []string
	for _, k := range []string{"base64_encoded_keys", "base64-encoded-keys"} {
		if l, ok := instanceData[k].([]any); ok {
			for _, p := range l {
				if s, ok := p.(string); ok {
					decode = append(decode, strings.ReplaceAll(s, "-", "_"))
				}
			}
		}
	}
	return map[string]any(convertVars(instanceData, "", decode))
}

func convertVars(data map[string]any, prefix string, decode []string) jinjaDict {
	out := jinjaDict{}
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := data[k]
		path := k
		if prefix != "" {
			path = prefix + "/" + k
		}
		for _, d := range decode {
			if d == path {
				if s, ok := v.(string); ok {
					if b, err := base64.StdEncoding.DecodeString(s); err == nil {
						v = string(b)
					}
				}
			}
		}
		if m, ok := v.(map[string]any); ok {
			sub := convertVars(m, path, decode)
			out[k] = sub
			if versionKey().MatchString(k) {
				for sk, sv := range sub {
					out[sk] = sv
				}
			}
		} else {
			out[k] = convertValue(v)
		}
		if alias := operatorRe().ReplaceAllString(k, "_"); alias != k {
			out[alias] = out[k]
		}
	}
	return out
}

func convertValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		return convertVars(t, "", nil)
	case []any:
		l := make([]any, len(t))
		for i, e := range t {
			l[i] = convertValue(e)
		}
		return l
	case float64:
		if t == math.Trunc(t) && math.Abs(t) < 1<<53 {
			return int64(t)
		}
	}
	return v
}

// sourceLoader serves the one template and refuses every other path, so a
// template cannot read files ({% include %}, {% import %}, {% extends %}).
type sourceLoader struct {
	id, src string
	served  bool // the template is read once: a second read is a self-include or extends
}

var _ loaders.Loader = (*sourceLoader)(nil)

func (l *sourceLoader) Read(p string) (io.Reader, error) {
	if p == l.id && !l.served {
		l.served = true
		return bytes.NewReader([]byte(l.src)), nil
	}
	return nil, fmt.Errorf("templates cannot load %q", p)
}

func (l *sourceLoader) Resolve(p string) (string, error) {
	if p == l.id && !l.served {
		return p, nil
	}
	return "", fmt.Errorf("templates cannot load %q", p)
}

func (l *sourceLoader) Inherit(string) (loaders.Loader, error) { return l, nil }
