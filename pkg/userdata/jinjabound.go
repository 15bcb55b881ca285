package userdata

// The bounds of one Jinja render. A template is untrusted input of PID 1:
// gonja (the engine) has no limit of its own, a Go stack overflow cannot be
// recovered, and "a" * 1000000000 or range(100000000) would take the
// memory of the machine. The bounds are applied from outside the engine:
//
//   - the loader serves the template once: {% include %}, {% import %} and
//     {% extends %} of any name fail, as in cloud-init (its jinja2
//     Environment has no loader);
//   - the source is refused before parsing when brackets or blocks nest
//     deeper than JinjaMaxNesting, or a tag holds more than
//     JinjaMaxTagTokens tokens (gonja's parser recurses on both);
//   - the parsed tree is instrumented: macro bodies count their nesting
//     (JinjaMaxDepth) and calls, for loops count the items they walk, both
//     against JinjaMaxSteps; `recursive` loops are refused; the operators
//     * + ~, every filter and method, and every printed value are charged
//     with the bytes they produce, against JinjaMaxBytes plus the
//     template's size, before the engine builds them when the size can be
//     known from the operands; range() is capped at JinjaMaxRange items
//     (Jinja's sandbox MAX_RANGE) and lipsum() likewise;
//   - a render that takes longer than JinjaTimeout stops at the next
//     charge.
//
// The first bound hit ends the render with an error wrapping ErrJinjaBound;
// the part is then ignored as any jinja render failure is, and the boot
// goes on.

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/nikolalohinski/gonja/v2/builtins/control_structures"
	"github.com/nikolalohinski/gonja/v2/exec"
	"github.com/nikolalohinski/gonja/v2/nodes"
	"github.com/nikolalohinski/gonja/v2/tokens"
)

// Jinja bounds (docs/security.md, "Jinja bounds").
const (
	JinjaMaxDepth     = 100              // macro calls nested
	JinjaMaxSteps     = 100_000          // loop items, and macro calls at JinjaMacroSteps each, in all
	JinjaMacroSteps   = 10               // a macro call costs ten loop items (~20 µs against ~2)
	JinjaMaxBytes     = 4 << 20          // bytes produced, beyond the template's size
	JinjaMaxRange     = 100_000          // items of one range()
	JinjaMaxNesting   = 256              // brackets and blocks nested in the source
	JinjaMaxTagTokens = 10_000           // tokens in one {{ }} or {% %}
	JinjaTimeout      = 10 * time.Second // one render
)

// ErrJinjaBound is wrapped by the error of a render that passed a bound.
var ErrJinjaBound = errors.New("jinja template exceeds a bound")

// jinjaBudget is what one render may still spend.
type jinjaBudget struct {
	maxBytes int64
	bytes    int64
	steps    int
	depth    int
	deadline time.Time
	now      func() time.Time
	err      error

	ops   []tokens.Type // guarded operator by id
	lits  []int64       // literal bytes of a loop body or macro body by id
	stash map[int][]*exec.Value
}

func newJinjaBudget(srcLen int) *jinjaBudget {
	b := &jinjaBudget{maxBytes: JinjaMaxBytes + int64(srcLen), now: time.Now, stash: map[int][]*exec.Value{}}
	b.deadline = b.now().Add(JinjaTimeout)
	return b
}

func (b *jinjaBudget) fail(format string, args ...any) error {
	if b.err == nil {
		b.err = fmt.Errorf("%w: "+format, append([]any{ErrJinjaBound}, args...)...)
	}
	return b.err
}

// charge spends steps and bytes; what names the spender in the error.
func (b *jinjaBudget) charge(steps int, bytes int64, what string) error {
	if b.err != nil {
		return b.err
	}
	if bytes < 0 {
		bytes = 0
	}
	b.steps += steps
	b.bytes += bytes
	switch {
	case b.steps > JinjaMaxSteps:
		return b.fail("more than %d loop iterations and macro calls (%d steps each) (at %s)", JinjaMaxSteps, JinjaMacroSteps, what)
	case b.bytes > b.maxBytes:
		return b.fail("%s would make the template produce more than %d bytes", what, b.maxBytes)
	case b.now().After(b.deadline):
		return b.fail("rendering took longer than %v (at %s)", JinjaTimeout, what)
	}
	return nil
}

// valueSize is about the bytes a value holds (strings by length, lists
// and mappings by item).
func valueSize(v *exec.Value) int64 {
	switch {
	case v == nil || v.IsError():
		return 0
	case v.IsString():
		return int64(len(v.String()))
	case v.IsList() || v.IsDict():
		return 16 * int64(v.Len())
	}
	return 8
}

// nestingError checks the token stream of a template: brackets and blocks
// nested past JinjaMaxNesting, or a tag past JinjaMaxTagTokens tokens.
func nestingError(toks []*tokens.Token) error {
	depth, blocks, inTag := 0, 0, 0
	for i, t := range toks {
		switch t.Type {
		case tokens.LeftParenthesis, tokens.LeftBracket, tokens.LeftBrace:
			depth++
		case tokens.RightParenthesis, tokens.RightBracket, tokens.RightBrace:
			depth--
		case tokens.BlockBegin, tokens.VariableBegin:
			inTag = 0
			if t.Type == tokens.BlockBegin && i+1 < len(toks) && toks[i+1].Type == tokens.Name {
				name := toks[i+1].Val
				switch {
				case strings.HasPrefix(name, "end"):
					blocks--
				case jinjaBlockOpeners()[name]:
					blocks++
				}
			}
		}
		// Closers without openers are syntax errors the parser reports
		// before it recurses; they must not buy depth for what follows.
		depth, blocks = max(depth, 0), max(blocks, 0)
		inTag++
		if depth+blocks > JinjaMaxNesting {
			return fmt.Errorf("%w: brackets and blocks nested more than %d deep on line %d", ErrJinjaBound, JinjaMaxNesting, t.Line)
		}
		if inTag > JinjaMaxTagTokens {
			return fmt.Errorf("%w: a tag of more than %d tokens on line %d", ErrJinjaBound, JinjaMaxTagTokens, t.Line)
		}
	}
	return nil
}

// jinjaBlockOpeners are the tags with an end tag ({% set %} has one only
// in its block form, and is left out).
var jinjaBlockOpeners = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"if": true, "for": true, "macro": true, "call": true, "filter": true, "with": true,
		"block": true, "autoescape": true, "raw": true, "trans": true,
	}
})

// Names of the instrumenting filters (a template may call them too: they
// only charge the budget and pass values on).
const (
	guardOpFilter   = "_cloudroot_op"
	takeOpFilter    = "_cloudroot_take"
	chargeFilter    = "_cloudroot_out"
	iterFilter      = "_cloudroot_iter"
	macroInFilter   = "_cloudroot_macro_in"
	macroOutFilter  = "_cloudroot_macro_out"
	guardedOpTokens = "* + ~"
)

// instrument rewrites the parsed tree in place (see the file comment).
func (b *jinjaBudget) instrument(root *nodes.Template) error {
	seen := map[uintptr]bool{}
	var err error
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		if err != nil {
			return
		}
		switch v.Kind() {
		case reflect.Interface:
			if !v.IsNil() {
				walk(v.Elem())
			}
		case reflect.Pointer:
			if v.IsNil() || seen[v.Pointer()] {
				return
			}
			seen[v.Pointer()] = true
			// Reach fields behind unexported ones ({% set %}'s
			// expression) as settable values.
			p := reflect.NewAt(v.Type().Elem(), unsafe.Pointer(v.Pointer()))
			if e := b.rewrite(p.Interface()); e != nil {
				err = e
				return
			}
			walk(p.Elem())
		case reflect.Struct:
			for i := range v.NumField() {
				f := v.Field(i)
				if !f.CanInterface() && f.CanAddr() {
					f = reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
				}
				walk(f)
			}
		case reflect.Slice, reflect.Array:
			for i := range v.Len() {
				walk(v.Index(i))
			}
		case reflect.Map:
			it := v.MapRange()
			for it.Next() {
				walk(it.Value())
			}
		}
	}
	walk(reflect.ValueOf(root))
	return err
}

func filtered(e nodes.Expression, at *tokens.Token, name string, args ...nodes.Expression) nodes.Expression {
	return &nodes.FilteredExpression{Expression: e, Filters: []*nodes.FilterCall{{Token: at, Name: name, Args: args}}}
}

func intNode(at *tokens.Token, i int) nodes.Expression {
	return &nodes.Integer{Location: &tokens.Token{Type: tokens.Integer, Val: fmt.Sprint(i), Line: at.Line, Col: at.Col}, Val: i}
}

// rewrite instruments one node of the tree.
func (b *jinjaBudget) rewrite(n any) error {
	switch n := n.(type) {
	case *nodes.BinaryExpression:
		if n.Operator == nil || n.Operator.Token == nil || !strings.Contains(guardedOpTokens, n.Operator.Token.Val) {
			return nil
		}
		if n.Left == nil || n.Right == nil {
			return nil
		}
		// L op R becomes (L|op(R, id)) op (0|take(id)): the guard sees
		// both operands before the engine combines them, and R is
		// evaluated once.
		at := n.Operator.Token
		id := len(b.ops)
		b.ops = append(b.ops, n.Operator.Token.Type)
		n.Left = filtered(n.Left, at, guardOpFilter, n.Right, intNode(at, id))
		n.Right = filtered(intNode(at, 0), at, takeOpFilter, intNode(at, id))
	case *nodes.Output:
		if n.Expression != nil && n.Start != nil {
			n.Expression = filtered(n.Expression, n.Start, chargeFilter)
		}
		if n.Alternative != nil && n.Start != nil {
			n.Alternative = filtered(n.Alternative, n.Start, chargeFilter)
		}
	case *controlStructures.ForControlStructure:
		at := n.Position()
		if n.Recursive {
			return fmt.Errorf("%w: recursive for loops are not supported (line %d)", ErrJinjaBound, at.Line)
		}
		id := len(b.lits)
		b.lits = append(b.lits, literalBytes(n.BodyWrapper))
		n.ObjectEvaluator = filtered(n.ObjectEvaluator, at, iterFilter, intNode(at, id))
	case *nodes.Macro:
		if n.Wrapper == nil || n.Location == nil {
			return nil
		}
		at := n.Location
		id := len(b.lits)
		b.lits = append(b.lits, literalBytes(n.Wrapper))
		in := &nodes.Output{Start: at, Expression: filtered(intNode(at, id), at, macroInFilter)}
		out := &nodes.Output{Start: at, Expression: filtered(intNode(at, id), at, macroOutFilter)}
		n.Wrapper.Nodes = append(append([]nodes.Node{in}, n.Wrapper.Nodes...), out)
	}
	return nil
}

// literalBytes is the template text a wrapper writes on each run.
func literalBytes(w *nodes.Wrapper) int64 {
	if w == nil {
		return 0
	}
	var n int64
	for _, c := range w.Nodes {
		if d, ok := c.(*nodes.Data); ok && d.Data != nil {
			n += int64(len(d.Data.Val))
		}
	}
	return n
}

// filters is fs with every filter charged and the instrumenting ones added.
func (b *jinjaBudget) filters(fs *exec.FilterSet) *exec.FilterSet {
	out := map[string]exec.FilterFunction{}
	it := unexported(fs, "filters").MapRange()
	for it.Next() {
		name, fn := it.Key().String(), it.Value().Interface().(exec.FilterFunction)
		out[name] = func(e *exec.Evaluator, in *exec.Value, params *exec.VarArgs) *exec.Value {
			if err := b.charge(0, estimate(name, valueSize(in), params), "filter "+name); err != nil {
				return exec.AsValue(err)
			}
			v := fn(e, in, params)
			if err := b.charge(0, valueSize(v), "filter "+name); err != nil {
				return exec.AsValue(err)
			}
			return v
		}
	}
	out[guardOpFilter] = b.guardOp
	out[takeOpFilter] = func(_ *exec.Evaluator, _ *exec.Value, params *exec.VarArgs) *exec.Value {
		id := argInt(params, 0)
		s := b.stash[id]
		if len(s) == 0 {
			return exec.AsValue(fmt.Errorf("%s used outside its operator", takeOpFilter))
		}
		v := s[len(s)-1]
		if len(s) == 1 {
			delete(b.stash, id)
		} else {
			b.stash[id] = s[:len(s)-1]
		}
		return v
	}
	out[chargeFilter] = func(_ *exec.Evaluator, in *exec.Value, _ *exec.VarArgs) *exec.Value {
		if err := b.charge(0, int64(len(in.String())), "output"); err != nil {
			return exec.AsValue(err)
		}
		return in
	}
	out[iterFilter] = func(_ *exec.Evaluator, in *exec.Value, params *exec.VarArgs) *exec.Value {
		n := 0
		if in.IsList() || in.IsDict() || in.IsString() {
			n = in.Len()
		}
		lit := int64(0)
		if id := argInt(params, 0); id >= 0 && id < len(b.lits) {
			lit = b.lits[id]
		}
		if err := b.charge(n, int64(n)*lit, "a for loop"); err != nil {
			return exec.AsValue(err)
		}
		return in
	}
	out[macroInFilter] = func(_ *exec.Evaluator, in *exec.Value, _ *exec.VarArgs) *exec.Value {
		b.depth++
		if b.depth > JinjaMaxDepth {
			return exec.AsValue(b.fail("macro calls nested more than %d deep", JinjaMaxDepth))
		}
		lit := int64(0)
		if id := in.Integer(); id >= 0 && id < len(b.lits) {
			lit = b.lits[id]
		}
		if err := b.charge(JinjaMacroSteps, lit, "a macro call"); err != nil {
			return exec.AsValue(err)
		}
		return exec.AsValue("")
	}
	out[macroOutFilter] = func(_ *exec.Evaluator, _ *exec.Value, _ *exec.VarArgs) *exec.Value {
		b.depth--
		return exec.AsValue("")
	}
	return exec.NewFilterSet(out)
}

// guardOp checks l op r (op by id) before the engine computes it, and
// stashes r for the take on the right.
func (b *jinjaBudget) guardOp(_ *exec.Evaluator, l *exec.Value, params *exec.VarArgs) *exec.Value {
	if len(params.Args) < 2 {
		return exec.AsValue(fmt.Errorf("%s needs two arguments", guardOpFilter))
	}
	r, id := params.Args[0], argInt(params, 1)
	if id < 0 || id >= len(b.ops) {
		return exec.AsValue(fmt.Errorf("%s: no operator %d", guardOpFilter, id))
	}
	var size int64
	switch b.ops[id] {
	case tokens.Multiply:
		if l.IsString() && !l.IsFloat() && !r.IsFloat() {
			n, k := int64(len(l.String())), int64(r.Integer())
			if k > 0 && n > 0 && k > (b.maxBytes+1)/n {
				size = b.maxBytes + 1
			} else {
				size = n * k
			}
		}
	case tokens.Addition:
		switch {
		case l.IsList():
			size = valueSize(l) + valueSize(r)
		case l.IsFloat() || r.IsFloat():
		case l.IsString() || r.IsString():
			size = int64(len(l.String()) + len(r.String()))
		}
	case tokens.Tilde:
		size = int64(len(l.String()) + len(r.String()))
	}
	if err := b.charge(0, size, "an operator"); err != nil {
		return exec.AsValue(err)
	}
	b.stash[id] = append(b.stash[id], r)
	return l
}

// estimate is an upper bound of what a filter or method makes of an input
// of n bytes: string arguments may replace every byte, integer arguments
// are widths (indent's for each line).
func estimate(name string, n int64, params *exec.VarArgs) int64 {
	if params == nil {
		return n
	}
	var strs, ints int64
	add := func(v *exec.Value) {
		switch {
		case v == nil:
		case v.IsString():
			strs += int64(len(v.String()))
		case v.IsInteger():
			if i := int64(v.Integer()); i > 0 {
				ints += i
			}
		}
	}
	for _, a := range params.Args {
		add(a)
	}
	for _, a := range params.KwArgs {
		add(a)
	}
	est := n*(1+strs) + ints
	if name == "indent" {
		est += n * ints
	}
	if est < 0 { // overflow
		return 1 << 62
	}
	return est
}

func argInt(params *exec.VarArgs, i int) int {
	if params == nil || i >= len(params.Args) {
		return -1
	}
	return params.Args[i].Integer()
}

// unexported reads a struct field the engine keeps unexported (its filter
// and method tables offer no way to list them).
func unexported(ptr any, field string) reflect.Value {
	v := reflect.ValueOf(ptr).Elem().FieldByName(field)
	return reflect.NewAt(v.Type(), unsafe.Pointer(v.UnsafeAddr())).Elem()
}

// methods is ms with every method charged like a filter.
func methodsOf[I any](b *jinjaBudget, ms *exec.MethodSet[I]) *exec.MethodSet[I] {
	out := map[string]exec.Method[I]{}
	it := unexported(ms, "methods").MapRange()
	for it.Next() {
		name, fn := it.Key().String(), it.Value().Interface().(exec.Method[I])
		out[name] = func(self I, sv *exec.Value, args *exec.VarArgs) (any, error) {
			if err := b.charge(0, estimate(name, valueSize(sv), args), "method "+name); err != nil {
				return nil, err
			}
			v, err := fn(self, sv, args)
			if err == nil {
				err = b.charge(0, valueSize(exec.AsValue(v)), "method "+name)
			}
			return v, err
		}
	}
	return exec.NewMethodSet(out)
}

func (b *jinjaBudget) methods(m exec.Methods) exec.Methods {
	return exec.Methods{
		Bool: methodsOf(b, m.Bool), Int: methodsOf(b, m.Int), Float: methodsOf(b, m.Float),
		Str: methodsOf(b, m.Str), Dict: methodsOf(b, m.Dict), List: methodsOf(b, m.List),
	}
}

// lipsum is the engine's lipsum() charged with its largest output (n
// paragraphs of up to max words of up to 12 bytes) before it runs.
func (b *jinjaBudget) lipsum(orig func(*exec.Evaluator, *exec.VarArgs) *exec.Value) func(*exec.Evaluator, *exec.VarArgs) *exec.Value {
	return func(e *exec.Evaluator, params *exec.VarArgs) *exec.Value {
		n, words := int64(5), int64(100)
		if len(params.Args) > 0 && params.Args[0].IsInteger() {
			n = int64(params.Args[0].Integer())
		}
		if v, ok := params.KwArgs["n"]; ok && v.IsInteger() {
			n = int64(v.Integer())
		}
		if len(params.Args) > 3 && params.Args[3].IsInteger() {
			words = int64(params.Args[3].Integer())
		}
		if v, ok := params.KwArgs["max"]; ok && v.IsInteger() {
			words = int64(v.Integer())
		}
		if n > JinjaMaxRange || words > JinjaMaxRange {
			return exec.AsValue(b.fail("lipsum() of more than %d paragraphs or words", JinjaMaxRange))
		}
		if err := b.charge(0, n*words*12, "lipsum()"); err != nil {
			return exec.AsValue(err)
		}
		return orig(e, params)
	}
}

// rangeFunc is Jinja's range() as a list of at most JinjaMaxRange items.
func (b *jinjaBudget) rangeFunc(_ *exec.Evaluator, params *exec.VarArgs) ([]int, error) {
	start, stop, step := 0, 0, 1
	ints := make([]int, len(params.Args))
	for i, a := range params.Args {
		if !a.IsInteger() {
			return nil, errors.New("range: expected signature is [start, ]stop[, step] where all arguments are integers")
		}
		ints[i] = a.Integer()
	}
	switch len(ints) {
	case 1:
		stop = ints[0]
	case 2:
		start, stop = ints[0], ints[1]
	case 3:
		start, stop, step = ints[0], ints[1], ints[2]
	default:
		return nil, errors.New("range: expected signature is [start, ]stop[, step] where all arguments are integers")
	}
	if step == 0 {
		return nil, errors.New("range: step cannot be 0")
	}
	n := 0
	switch {
	case step > 0 && stop > start:
		n = (stop - start + step - 1) / step
	case step < 0 && stop < start:
		n = (start - stop - step - 1) / -step
	}
	if n > JinjaMaxRange || n < 0 {
		return nil, b.fail("range() of more than %d items", JinjaMaxRange)
	}
	if err := b.charge(0, 8*int64(n), "range()"); err != nil {
		return nil, err
	}
	out := make([]int, n)
	for i := range out {
		out[i] = start + i*step
	}
	return out, nil
}
