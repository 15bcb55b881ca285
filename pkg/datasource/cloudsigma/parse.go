package cloudsigma

// Pure parsing: the server context into Data.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/datasource"
)

// Parse builds Data from the reply to the server context request (EOT and
// newlines around it are ignored); device names the serial port in the
// subplatform.
func Parse(raw []byte, device string) (*datasource.Data, error) {
	raw = bytes.Trim(raw, "\x04\n")
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("server context is not JSON: %w", err)
	}
	sc, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("server context: expected a JSON object, got %s", kind(v))
	}
	meta, ok := sc["meta"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("server context: meta: expected an object, got %s", kind(sc["meta"]))
	}
	uuid, _ := sc["uuid"].(string)
	if uuid == "" {
		return nil, errors.New("server context: no uuid")
	}
	mode, err := DSMode(meta["cloudinit-dsmode"])
	if err != nil {
		return nil, err
	}
	ud := []byte{}
	switch u := meta["cloudinit-user-data"].(type) {
	case nil:
	case string:
		ud = []byte(u)
	default:
		return nil, fmt.Errorf("meta: cloudinit-user-data: expected a string, got %s", kind(u))
	}
	if fields, _ := meta["base64_fields"].(string); contains(strings.Split(fields, ","), "cloudinit-user-data") {
		if ud, err = datasource.DecodeBase64(string(ud)); err != nil {
			return nil, fmt.Errorf("meta: cloudinit-user-data is listed in base64_fields but is not base64: %w", err)
		}
	}
	var vd []byte
	if vdm, ok := sc["vendor_data"].(map[string]any); ok {
		switch c := vdm["cloudinit"].(type) {
		case nil:
		case string:
			vd = []byte(c)
		default:
			return nil, fmt.Errorf("vendor_data: cloudinit: expected a string, got %s", kind(c))
		}
	}
	var keys []string
	if k, _ := meta["ssh_public_key"].(string); k != "" {
		keys = []string{k}
	}
	name, _ := sc["name"].(string)
	sc["instance-id"] = uuid
	return &datasource.Data{
		Name: "CloudSigma", Platform: "cloudsigma", CloudName: "cloudsigma",
		Subplatform: "cepko (" + device + ")",
		Mode:        mode,
		MetaData:    sc,
		UserData:    ud,
		VendorData:  vd,
		Hostname:    Hostname(name, uuid),
		PublicKeys:  keys,
	}, nil
}

// DSMode is cloud-init's _determine_dsmode for meta["cloudinit-dsmode"]:
// absent is net, an unknown mode is net (cloud-init warns), "disabled" is
// ErrNotFound.
func DSMode(v any) (string, error) {
	s, _ := v.(string)
	switch s {
	case "local", "net", "pass":
		return s, nil
	case "disabled":
		return "", fmt.Errorf("meta: cloudinit-dsmode is disabled: %w", datasource.ErrNotFound)
	}
	return "net", nil
}

// Hostname is cloud-init's get_hostname: the name, cut to 61 characters,
// when it is made only of the characters of [A-Za-z0-9 -_.] (where " -_"
// is the range from space to underscore); else the uuid up to its first
// dash.
func Hostname(name, uuid string) string {
	ok := name != ""
	for _, c := range name {
		if !(c >= ' ' && c <= '_' || c >= 'a' && c <= 'z' || c == '.') {
			ok = false
			break
		}
	}
	if ok {
		if len(name) > 61 {
			name = name[:61]
		}
		return name
	}
	first, _, _ := strings.Cut(uuid, "-")
	return first
}

func contains(l []string, s string) bool {
	for _, e := range l {
		if e == s {
			return true
		}
	}
	return false
}

// kind is datasource.JSONKind, except that a missing (or null) value is
// "nothing".
func kind(v any) string {
	if v == nil {
		return "nothing"
	}
	return datasource.JSONKind(v)
}
