package userdata

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"
)

// MIME types cloud-init assigns.
const (
	TypeCloudConfig        = "text/cloud-config"
	TypeCloudConfigJSONP   = "text/cloud-config-jsonp"
	TypeCloudConfigArchive = "text/cloud-config-archive"
	TypeShellScript        = "text/x-shellscript"
	TypeShellPerBoot       = "text/x-shellscript-per-boot"
	TypeShellPerInstance   = "text/x-shellscript-per-instance"
	TypeShellPerOnce       = "text/x-shellscript-per-once"
	TypeBoothook           = "text/cloud-boothook"
	TypeInclude            = "text/x-include-url"
	TypeIncludeOnce        = "text/x-include-once-url"
	TypeJinja              = "text/jinja2"
	TypePartHandler        = "text/part-handler"
	TypeMultipart          = "multipart/mixed"
	TypeGzip               = "application/gzip"
	TypePlain              = "text/plain"
	TypeNotMultipart       = "text/x-not-multipart"
)

// Format is one user-data format: how it is recognised, where it lands, and
// when it acts.
type Format struct {
	// Header is the first-line prefix that selects the format ("" for
	// formats recognised only by MIME type or magic).
	Header string
	// Type is the MIME type.
	Type string
	// Lands says where the part goes (paths under /var/lib/cloud).
	Lands string
	// When says which stage acts on it and how often.
	When string
	// Supported is false for formats recognised and reported, not run.
	Supported bool
}

// Formats is the registry of handled types, in documentation order.
var Formats = []Format{
	{"#cloud-config", TypeCloudConfig, "merged into `instances/<iid>/cloud-config.txt` (vendor-data: `vendor-cloud-config.txt`)", "init, every boot", true},
	{"#cloud-config-jsonp", TypeCloudConfigJSONP, "RFC 6902 patch applied to the cloud-config merged so far", "init, every boot", true},
	{"#!", TypeShellScript, "`instances/<iid>/scripts/<part>` 0700 (vendor-data: `scripts/vendor/<part>`)", "final (`scripts_user`), once per instance", true},
	{"", TypeShellPerBoot, "`scripts/per-boot/<part>` 0700 (vendor-data: `scripts/vendor/per-boot/`)", "final (`scripts_per_boot`), every boot", true},
	{"", TypeShellPerInstance, "`scripts/per-instance/<part>` 0700 (vendor-data: `scripts/vendor/per-instance/`)", "final (`scripts_per_instance`), once per instance", true},
	{"", TypeShellPerOnce, "`scripts/per-once/<part>` 0700 (vendor-data: `scripts/vendor/per-once/`)", "final (`scripts_per_once`), once ever", true},
	{"#cloud-boothook", TypeBoothook, "`instances/<iid>/boothooks/<part>` 0700, header line removed; run at once with `INSTANCE_ID` set", "init, every boot", true},
	{"#include", TypeInclude, "each following URL (http/https) fetched and processed as user-data", "when user-data is processed", true},
	{"#include-once", TypeIncludeOnce, "like #include; the first fetch is cached in `instances/<iid>/data/urlcache/<md5(url)>`", "when user-data is processed", true},
	{"#cloud-config-archive", TypeCloudConfigArchive, "YAML list; each entry becomes a part (`content`, `type`, `filename`, `launch-index`, other keys are headers)", "when user-data is processed", true},
	{"## template: jinja", TypeJinja, "rendered with instance-data, then handled by its new first line (cloud-config, jsonp, scripts, boothook)", "as the rendered type", true},
	{"#part-handler", TypePartHandler, "not supported: Python part handlers are reported as a warning", "never", false},
	{"", TypeMultipart, "each part handled by its `Content-Type` (nested, base64, quoted-printable, `Launch-Index`, `Merge-Type`)", "when user-data is processed", true},
	{"", TypeGzip, "decompressed (whole payload by magic, or a part of a gzip type), size-limited", "when user-data is processed", true},
	{"", TypePlain, "sniffed by first line; otherwise warned and ignored", "never", true},
}

// gzipTypes are the part types that are gunzipped before sniffing.
var gzipTypes = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"application/gzip":              true,
		"application/gzip-compressed":   true,
		"application/gzipped":           true,
		"application/x-compress":        true,
		"application/x-compressed":      true,
		"application/x-gunzip":          true,
		"application/x-gzip":            true,
		"application/x-gzip-compressed": true,
	}
})

// sniffOrder is Formats with a header, longest header first.
var sniffOrder = func() []Format {
	var out []Format
	for _, f := range Formats {
		if f.Header != "" {
			out = append(out, f)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return len(out[i].Header) > len(out[j].Header) })
	return out
}()

// typeFromStartsWith returns the type whose header starts b (leading
// whitespace skipped, case-insensitive), or def.
func typeFromStartsWith(b []byte, def string) string {
	if !utf8.Valid(b) {
		// cloud-init fails to decode binary content and keeps the default.
		return def
	}
	return typeFromText(b, def)
}

// typeFromText is typeFromStartsWith for content cloud-init has already
// decoded as text (with surrogate escapes): invalid UTF-8 after the header
// does not matter.
func typeFromText(b []byte, def string) string {
	b = bytes.TrimLeft(b, " \t\r\n\v\f")
	for _, f := range sniffOrder {
		if len(b) >= len(f.Header) && strings.EqualFold(string(b[:len(f.Header)]), f.Header) {
			return f.Type
		}
	}
	return def
}

// Sniff returns the MIME type cloud-init would assign to a whole payload:
// application/gzip by magic, multipart/mixed when "mime-version:" is in its
// first 4096 bytes, a header's type, or "" for plain text.
func Sniff(b []byte) string {
	if isGzip(b) {
		return TypeGzip
	}
	if hasMIMEVersion(b) {
		return TypeMultipart
	}
	return typeFromStartsWith(b, "")
}

func isGzip(b []byte) bool { return len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b }

func hasMIMEVersion(b []byte) bool {
	return bytes.Contains(bytes.ToLower(b[:min(len(b), 4096)]), []byte("mime-version:"))
}

// ListTypes returns the content types `cloud-init devel make-mime
// --list-types` prints: every header-mapped type, sorted, without "text/".
func ListTypes() []string {
	var out []string
	for _, f := range Formats {
		if strings.HasPrefix(f.Type, "text/") && f.Type != TypePlain {
			out = append(out, strings.TrimPrefix(f.Type, "text/"))
		}
	}
	sort.Strings(out)
	return out
}

// MarkdownTable renders Formats as the table in docs/userdata.md.
func MarkdownTable() string {
	var b strings.Builder
	b.WriteString("| first line | MIME type | where it lands | when | supported |\n")
	b.WriteString("|---|---|---|---|---|\n")
	for _, f := range Formats {
		h := "—"
		if f.Header != "" {
			h = "`" + f.Header + "`"
		}
		s := "yes"
		if !f.Supported {
			s = "no"
		}
		fmt.Fprintf(&b, "| %s | `%s` | %s | %s | %s |\n", h, f.Type, f.Lands, f.When, s)
	}
	return b.String()
}
