package datasource

// Helpers for decoding metadata values the way cloud-init's Python does.

import (
	"encoding/base64"
	"fmt"
	"strings"
)

// DecodeBase64 is Python's base64.b64decode without validation, as
// cloud-init applies it to metadata values: characters outside the
// standard alphabet (and "=") are dropped first; the rest must be
// correctly padded base64.
func DecodeBase64(s string) ([]byte, error) {
	var b strings.Builder
	for _, c := range s {
		if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '=' {
			b.WriteRune(c)
		}
	}
	return base64.StdEncoding.DecodeString(b.String())
}

// JSONKind names the kind of a decoded JSON value for error messages
// ("expected a list, got an object"): "null", "a list", "an object",
// "a string", "a number", "a boolean", else its Go type.
func JSONKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	}
	return fmt.Sprintf("%T", v)
}
