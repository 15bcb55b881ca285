package jsonschema

import (
	"strconv"
	"strings"
)

// Position tells possible tokens in json.
type Position interface {
	collect(v any, ptr jsonPointer) map[jsonPointer]any
}

// --

type AllProp struct{}

func (AllProp) collect(v any, ptr jsonPointer) map[jsonPointer]any {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	m := map[jsonPointer]any{}
	for pname, pvalue := range obj {
		m[ptr.append(pname)] = pvalue
	}
	return m
}

// --

type AllItem struct{}

func (AllItem) collect(v any, ptr jsonPointer) map[jsonPointer]any {
	arr, ok := v.([]any)
	if !ok {
		return nil
	}
	m := map[jsonPointer]any{}
	for i, item := range arr {
		m[ptr.append(strconv.Itoa(i))] = item
	}
	return m
}

// --

type Prop string

func (p Prop) collect(v any, ptr jsonPointer) map[jsonPointer]any {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	pvalue, ok := obj[string(p)]
	if !ok {
		return nil
	}
	return map[jsonPointer]any{
		ptr.append(string(p)): pvalue,
	}
}

// --

type Item int

func (i Item) collect(v any, ptr jsonPointer) map[jsonPointer]any {
	arr, ok := v.([]any)
	if !ok {
		return nil
	}
	if i < 0 || int(i) >= len(arr) {
		return nil
	}
	return map[jsonPointer]any{
		ptr.append(strconv.Itoa(int(i))): arr[int(i)],
	}
}

// --

// SchemaPath tells where to look for subschema inside keyword.
type SchemaPath []Position

func schemaPath(path string) SchemaPath {
	var sp SchemaPath
	for _, tok := range strings.Split(path, "/") {
		var pos Position
		switch tok {
		case "*":
			pos = AllProp{}
		case "[]":
			pos = AllItem{}
		default:
			if i, err := strconv.Atoi(tok); err == nil {
				pos = Item(i)
			} else {
				pos = Prop(tok)
			}
		}
		sp = append(sp, pos)
	}
	return sp
}

func (sp SchemaPath) collect(v any, ptr jsonPointer) map[jsonPointer]any {
	mm := map[jsonPointer]any{}
	sp.collectInto(v, ptr, mm)
	return mm
}

// collectInto adds what collect returns to out, without the intermediate
// maps (cloudroot: collect ran for every keyword path of every schema
// object, and its maps were most of what compiling a schema allocated).
func (sp SchemaPath) collectInto(v any, ptr jsonPointer, out map[jsonPointer]any) {
	if len(sp) == 0 {
		out[ptr] = v
		return
	}
	p, rest := sp[0], sp[1:]
	switch p := p.(type) {
	case AllProp:
		if obj, ok := v.(map[string]any); ok {
			for pname, pvalue := range obj {
				rest.collectInto(pvalue, ptr.append(pname), out)
			}
		}
	case AllItem:
		if arr, ok := v.([]any); ok {
			for i, item := range arr {
				rest.collectInto(item, ptr.append(strconv.Itoa(i)), out)
			}
		}
	case Prop:
		if obj, ok := v.(map[string]any); ok {
			if pvalue, ok := obj[string(p)]; ok {
				rest.collectInto(pvalue, ptr.append(string(p)), out)
			}
		}
	case Item:
		if arr, ok := v.([]any); ok && p >= 0 && int(p) < len(arr) {
			rest.collectInto(arr[int(p)], ptr.append(strconv.Itoa(int(p))), out)
		}
	default:
		for ptr, v := range p.collect(v, ptr) {
			rest.collectInto(v, ptr, out)
		}
	}
}

func (sp SchemaPath) String() string {
	var sb strings.Builder
	for _, pos := range sp {
		if sb.Len() != 0 {
			sb.WriteByte('/')
		}
		switch pos := pos.(type) {
		case AllProp:
			sb.WriteString("*")
		case AllItem:
			sb.WriteString("[]")
		case Prop:
			sb.WriteString(string(pos))
		case Item:
			sb.WriteString(strconv.Itoa(int(pos)))
		}
	}
	return sb.String()
}
