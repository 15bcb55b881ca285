package userdata

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	jsonpatch "github.com/evanphx/json-patch/v5"
)

// ApplyJSONPatches applies #cloud-config-jsonp patches in order to a copy of
// cfg. A patch that does not apply is reported and skipped (the config keeps
// the previous value), as cloud-init does; the error joins every failure.
func ApplyJSONPatches(cfg map[string]any, patches []JSONPatch) (map[string]any, error) {
	if cfg == nil {
		cfg = map[string]any{}
	}
	doc, err := json.Marshal(cfg)
	if err != nil {
		return cfg, fmt.Errorf("encoding cloud-config for JSON patch: %w", err)
	}
	var errs []error
	for _, p := range patches {
		patch, err := jsonpatch.DecodePatch(p.Patch)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: invalid JSON patch: %w", p.Part, err))
			continue
		}
		next, err := patch.Apply(doc)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: applying JSON patch: %w", p.Part, err))
			continue
		}
		doc = next
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return cfg, fmt.Errorf("decoding patched cloud-config: %w", err)
	}
	out, ok := fromJSON(v).(map[string]any)
	if !ok {
		errs = append(errs, fmt.Errorf("patched cloud-config is not a mapping: patches ignored"))
		return cfg, errors.Join(errs...)
	}
	return out, errors.Join(errs...)
}

// fromJSON turns json.Number into int or float64, as YAML decoding does.
func fromJSON(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			t[k] = fromJSON(e)
		}
	case []any:
		for i, e := range t {
			t[i] = fromJSON(e)
		}
	case json.Number:
		if n, err := t.Int64(); err == nil {
			return int(n)
		}
		f, _ := t.Float64()
		return f
	}
	return v
}
