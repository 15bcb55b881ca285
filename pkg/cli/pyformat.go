package cli

// Python-compatible printing: cloud-init prints status, query and cloud-id
// output with Python's json.dumps and PyYAML's dump, and scripts compare it
// byte for byte. These printers reproduce both (key order kept, numbers and
// string escapes as Python writes them).

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"

	"github.com/cloudroot/cloudroot/pkg/yaml11"
)

func jsonFloat(v any) float64 {
	n, ok := v.(json.Number)
	if !ok {
		return 0
	}
	f, _ := strconv.ParseFloat(string(n), 64)
	return f
}

// jsonObject is a JSON object that remembers key order, as Python's dict does.
type jsonObject struct {
	keys []string
	vals map[string]any
}

func newJSONObject() *jsonObject { return &jsonObject{vals: map[string]any{}} }

func (o *jsonObject) lookup(k string) (any, bool) {
	v, ok := o.vals[k]
	return v, ok
}

func (o *jsonObject) get(k string) any { return o.vals[k] }

// set stores v under k; a new key goes last, an existing one keeps its place.
func (o *jsonObject) set(k string, v any) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

// decodeOrderedJSON decodes b into nil, bool, string, json.Number, []any and
// *jsonObject values.
func decodeOrderedJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	v, err := decodeJSONValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("trailing data after JSON value")
	}
	return v, nil
}

func decodeJSONValue(dec *json.Decoder) (any, error) {
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t {
	case json.Delim('{'):
		o := newJSONObject()
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := decodeJSONValue(dec)
			if err != nil {
				return nil, err
			}
			o.set(kt.(string), v)
		}
		_, err := dec.Token()
		return o, err
	case json.Delim('['):
		l := []any{}
		for dec.More() {
			v, err := decodeJSONValue(dec)
			if err != nil {
				return nil, err
			}
			l = append(l, v)
		}
		_, err := dec.Token()
		return l, err
	}
	return t, nil
}

// pyYAMLDump renders v as cloud-init's safeyaml.dumps: PyYAML SafeDumper,
// indent 4, width 80, block style, sorted keys, explicit --- and ...
func pyYAMLDump(v any) string { return yaml11.SafeDumps(v) }

// Keys and Get let yaml11.Dump and pyval.JSONDumps walk a decoded JSON object.
func (o *jsonObject) Keys() []string { return o.keys }

// Get is the value of k.
func (o *jsonObject) Get(k string) any { return o.vals[k] }
