package userdata

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/quotedprintable"
	"strings"
)

// header is an ordered, case-insensitive MIME header list.
type header [][2]string

func (h header) get(name string) string {
	for _, kv := range h {
		if strings.EqualFold(kv[0], name) {
			return kv[1]
		}
	}
	return ""
}

func (h header) has(name string) bool {
	for _, kv := range h {
		if strings.EqualFold(kv[0], name) {
			return true
		}
	}
	return false
}

// splitHeaders parses a header block leniently, as Python's email parser
// does: headers end at the first empty line; a first line that is not a
// header starts the body.
func splitHeaders(b []byte) (header, []byte) {
	var h header
	rest := b
	for len(rest) > 0 {
		line, next, found := bytes.Cut(rest, []byte("\n"))
		if !found {
			next = nil
		}
		l := strings.TrimRight(string(line), "\r")
		if l == "" {
			return h, next
		}
		if (l[0] == ' ' || l[0] == '\t') && len(h) > 0 {
			// Python's compat32 policy keeps the fold as a line break
			// and the continuation's indent; cloud-init's handlers turn
			// the break into a space ("third\n name" is "third  name").
			h[len(h)-1][1] += " " + strings.TrimRight(l, " \t")
			rest = next
			continue
		}
		name, value, ok := strings.Cut(l, ":")
		if !ok || name == "" || !isHeaderName(name) {
			return h, rest
		}
		h = append(h, [2]string{name, strings.TrimSpace(value)})
		rest = next
	}
	return h, nil
}

func isHeaderName(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x21 || c > 0x7e {
			return false
		}
	}
	return true
}

// contentType returns the lowercased media type (text/plain when missing or
// malformed, as Python's get_content_type) and its parameters.
func contentType(h header) (string, map[string]string) {
	v := h.get("Content-Type")
	if v == "" {
		return TypePlain, nil
	}
	mt, params, err := mime.ParseMediaType(v)
	if err != nil && mt == "" {
		mt, _, _ = strings.Cut(v, ";")
		mt = strings.ToLower(strings.TrimSpace(mt))
	}
	if strings.Count(mt, "/") != 1 {
		return TypePlain, nil
	}
	return mt, params
}

// filename returns Content-Disposition's filename, else Content-Type's name.
func filename(h header, ctParams map[string]string) string {
	if d := h.get("Content-Disposition"); d != "" {
		if _, p, err := mime.ParseMediaType(d); err == nil && p["filename"] != "" {
			return p["filename"]
		}
	}
	return ctParams["name"]
}

// decodeCTE undoes Content-Transfer-Encoding. A payload that does not decode
// is returned as is, with a warning, as Python does.
func decodeCTE(h header, body []byte) ([]byte, error) {
	switch strings.ToLower(strings.TrimSpace(h.get("Content-Transfer-Encoding"))) {
	case "base64":
		return decodeBase64(body)
	case "quoted-printable":
		out, err := io.ReadAll(quotedprintable.NewReader(bytes.NewReader(body)))
		if err != nil {
			return body, fmt.Errorf("decoding quoted-printable: %w", err)
		}
		return out, nil
	}
	return body, nil
}

// decodeBase64 is lenient like binascii.a2b_base64: characters outside the
// alphabet are skipped and padding is optional.
func decodeBase64(body []byte) ([]byte, error) {
	clean := make([]byte, 0, len(body))
	for _, c := range body {
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '+', c == '/':
			clean = append(clean, c)
		case c == '=':
			// padding: stop at the first one, as a2b_base64 does at the end
		}
	}
	out, err := base64.RawStdEncoding.DecodeString(string(clean))
	if err != nil {
		return body, fmt.Errorf("decoding base64: %w", err)
	}
	return out, nil
}

// leaf is one non-multipart part of a message.
type leaf struct {
	label    string // "MIME part N" for errors
	ctype    string
	filename string
	headers  header
	payload  []byte
}

var errMIMEDepth = errors.New("multipart nesting too deep")

// parseMessage splits a MIME message into its leaves, depth-first in order.
// Problems are returned alongside the leaves found.
func parseMessage(data []byte) ([]leaf, []error) {
	h, body := splitHeaders(data)
	var out []leaf
	var errs []error
	walkEntity(h, body, 0, &out, &errs)
	return out, errs
}

func walkEntity(h header, body []byte, depth int, out *[]leaf, errs *[]error) {
	ct, params := contentType(h)
	if strings.HasPrefix(ct, "multipart/") {
		if depth >= MaxMIMEDepth {
			*errs = append(*errs, fmt.Errorf("%w (more than %d levels)", errMIMEDepth, MaxMIMEDepth))
			return
		}
		boundary := params["boundary"]
		if boundary == "" {
			*errs = append(*errs, fmt.Errorf("%s part without a boundary ignored", ct))
			return
		}
		parts, closed := splitMultipart(body, boundary)
		if !closed {
			*errs = append(*errs, fmt.Errorf("multipart boundary %q: closing delimiter not found", boundary))
		}
		for _, p := range parts {
			ph, pb := splitHeaders(p)
			walkEntity(ph, pb, depth+1, out, errs)
		}
		return
	}
	payload, err := decodeCTE(h, body)
	if err != nil {
		*errs = append(*errs, err)
	}
	*out = append(*out, leaf{ctype: ct, filename: filename(h, params), headers: h, payload: payload})
}

// splitMultipart returns the body parts between "--boundary" lines, and
// whether the closing "--boundary--" was seen. The line break before a
// delimiter belongs to the delimiter.
func splitMultipart(body []byte, boundary string) ([][]byte, bool) {
	delim := []byte("--" + boundary)
	var parts [][]byte
	start := -1 // start of the current part's content
	pos := 0
	for pos <= len(body) {
		end := bytes.IndexByte(body[pos:], '\n')
		lineEnd := len(body)
		next := len(body) + 1
		if end >= 0 {
			lineEnd = pos + end
			next = lineEnd + 1
		}
		line := bytes.TrimRight(body[pos:lineEnd], "\r")
		if bytes.HasPrefix(line, delim) {
			tail := bytes.TrimRight(line[len(delim):], " \t")
			closing := bytes.Equal(tail, []byte("--"))
			if closing || len(tail) == 0 {
				if start >= 0 {
					parts = append(parts, trimDelimiterBreak(body[start:pos]))
				}
				if closing {
					return parts, true
				}
				start = min(next, len(body))
			}
		}
		pos = next
	}
	if start >= 0 {
		parts = append(parts, body[start:])
	}
	return parts, false
}

func trimDelimiterBreak(b []byte) []byte {
	if bytes.HasSuffix(b, []byte("\r\n")) {
		return b[:len(b)-2]
	}
	if bytes.HasSuffix(b, []byte("\n")) {
		return b[:len(b)-1]
	}
	return b
}
