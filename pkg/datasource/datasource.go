// Package datasource defines what every datasource produces: the instance's
// meta-data, user-data, vendor-data and network configuration, plus the
// names cloud-init reports for it (status.json, instance-data v1). Each
// cloud lives in its own subpackage behind this small contract.
package datasource

import (
	"errors"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// ErrNotFound means the datasource is not present on this machine.
var ErrNotFound = errors.New("datasource not found")

// Data is one datasource's answer.
type Data struct {
	// Name is cloud-init's datasource name ("NoCloud").
	Name string
	// Subplatform is instance-data v1.subplatform, e.g. "config-disk (/dev/sr0)".
	Subplatform string
	// Platform is v1.platform ("nocloud"); CloudName is v1.cloud_name.
	Platform  string
	CloudName string
	// Mode is the dsmode ("local" or "net").
	Mode string

	MetaData      map[string]any
	UserData      []byte
	VendorData    []byte
	NetworkConfig map[string]any
}

// InstanceID is meta-data's instance-id.
func (d *Data) InstanceID() string { return str(d.MetaData["instance-id"]) }

// LocalHostname is meta-data's local-hostname (or hostname).
func (d *Data) LocalHostname() string {
	if h := str(d.MetaData["local-hostname"]); h != "" {
		return h
	}
	return str(d.MetaData["hostname"])
}

// Description is str(DataSource) as cloud-init prints it in status.json,
// e.g. "DataSourceNoCloud [seed=/dev/sr0][dsmode=net]".
func (d *Data) Description() string {
	seed := d.Subplatform
	if i := strings.Index(seed, "("); i >= 0 && strings.HasSuffix(seed, ")") {
		seed = seed[i+1 : len(seed)-1]
	}
	mode := d.Mode
	if mode == "" {
		mode = "net"
	}
	return fmt.Sprintf("DataSource%s [seed=%s][dsmode=%s]", d.Name, seed, mode)
}

func str(v any) string {
	switch t := v.(type) {
	case nil:
		return ""
	case string:
		return t
	}
	return fmt.Sprint(v)
}

// DecodeYAMLMap decodes YAML (or JSON) text into a map with string keys all
// the way down, as JSON needs. Empty input gives an empty map.
func DecodeYAMLMap(b []byte) (map[string]any, error) {
	var v any
	if err := yaml.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	if v == nil {
		return map[string]any{}, nil
	}
	m, ok := Normalize(v).(map[string]any)
	if !ok {
		return nil, fmt.Errorf("expected a mapping at the top level, got %s", kind(v))
	}
	return m, nil
}

// Normalize turns map[any]any (from YAML) into map[string]any recursively.
func Normalize(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			t[k] = Normalize(e)
		}
		return t
	case map[any]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[fmt.Sprint(k)] = Normalize(e)
		}
		return m
	case []any:
		for i, e := range t {
			t[i] = Normalize(e)
		}
		return t
	}
	return v
}

func kind(v any) string {
	switch v.(type) {
	case []any:
		return "a list"
	case string:
		return "a string"
	}
	return fmt.Sprintf("%T", v)
}
