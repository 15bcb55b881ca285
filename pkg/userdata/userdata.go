// Package userdata decodes user-data and vendor-data payloads into the parts
// cloud-init would act on: cloud-config documents and shell scripts.
//
// This first version understands `#cloud-config` (YAML) and `#!` scripts.
// Every other cloud-init format is recognised by its header and reported
// with ErrUnsupported naming it, never silently skipped; plain text is
// reported as cloud-init does ("Unhandled non-multipart userdata").
package userdata

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/datasource"
)

// ErrUnsupported marks a recognised format this build cannot process yet.
var ErrUnsupported = errors.New("unsupported user-data format")

// Part is one decoded piece of user-data.
type Part struct {
	// Type is the MIME type cloud-init assigns, e.g. "text/cloud-config".
	Type string
	// Filename as cloud-init names it (part-001 ...).
	Filename string
	Content  []byte
	// Config is set for text/cloud-config parts.
	Config map[string]any
}

// Result is a decoded payload.
type Result struct {
	Parts []Part
	// Warnings are recoverable problems (e.g. plain text ignored).
	Warnings []string
}

// Scripts returns the text/x-shellscript parts.
func (r *Result) Scripts() []Part {
	var out []Part
	for _, p := range r.Parts {
		if p.Type == TypeShellScript {
			out = append(out, p)
		}
	}
	return out
}

// Configs returns the cloud-config parts in order.
func (r *Result) Configs() []map[string]any {
	var out []map[string]any
	for _, p := range r.Parts {
		if p.Type == TypeCloudConfig && p.Config != nil {
			out = append(out, p.Config)
		}
	}
	return out
}

// MIME types cloud-init assigns by header.
const (
	TypeCloudConfig = "text/cloud-config"
	TypeShellScript = "text/x-shellscript"
)

// headers maps a first-line prefix to its cloud-init MIME type (longest
// prefix first, as cloud-init matches).
var headers = []struct{ prefix, typ string }{
	{"#cloud-config-archive", "text/cloud-config-archive"},
	{"#cloud-config-jsonp", "text/cloud-config-jsonp"},
	{"#cloud-config", TypeCloudConfig},
	{"#cloud-boothook", "text/cloud-boothook"},
	{"#include-once", "text/x-include-once-url"},
	{"#include", "text/x-include-url"},
	{"#part-handler", "text/part-handler"},
	{"## template: jinja", "text/jinja2"},
	{"#!", TypeShellScript},
}

// Sniff returns the MIME type cloud-init would assign to b, or "" for plain
// text. MIME multipart and gzip are recognised too.
func Sniff(b []byte) string {
	if len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b {
		return "application/gzip"
	}
	first := firstLine(b)
	for _, h := range headers {
		if strings.HasPrefix(first, h.prefix) {
			return h.typ
		}
	}
	low := strings.ToLower(string(bytes.TrimSpace(b[:min(len(b), 4096)])))
	if strings.HasPrefix(low, "content-type:") || strings.HasPrefix(low, "mime-version:") {
		return "multipart/mixed"
	}
	return ""
}

func firstLine(b []byte) string {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	return strings.TrimRight(string(line), "\r")
}

// Decode processes a payload. source names it in errors ("user-data",
// "vendor-data"). An empty payload gives an empty result. A payload this
// build cannot process yields an error wrapping ErrUnsupported.
func Decode(source string, b []byte) (*Result, error) {
	res := &Result{}
	if len(bytes.TrimSpace(b)) == 0 {
		return res, nil
	}
	typ := Sniff(b)
	switch typ {
	case TypeCloudConfig:
		cfg, err := datasource.DecodeYAMLMap(b)
		if err != nil {
			return res, fmt.Errorf("%s: invalid #cloud-config: %w", source, err)
		}
		res.Parts = append(res.Parts, Part{Type: typ, Filename: "part-001", Content: b, Config: cfg})
	case TypeShellScript:
		res.Parts = append(res.Parts, Part{Type: typ, Filename: "part-001", Content: b})
	case "":
		res.Warnings = append(res.Warnings, fmt.Sprintf("Unhandled non-multipart (text/x-not-multipart) userdata: '%s...'", truncate(firstLine(b), 24)))
	default:
		return res, fmt.Errorf("%s: format %s (%q) is not supported yet: %w", source, typ, truncate(firstLine(b), 40), ErrUnsupported)
	}
	return res, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
