package userdata

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// ErrUnknownType marks a MakeMIME attachment whose type cloud-init does not
// handle (make-mime refuses it unless --force).
var ErrUnknownType = errors.New("unknown content type")

// Attachment is one file for MakeMIME.
type Attachment struct {
	// Filename goes into Content-Disposition.
	Filename string
	// Type is the subtype as make-mime takes it ("x-shellscript",
	// "cloud-config"); a leading "text/" is accepted.
	Type    string
	Content []byte
}

// MakeMIME builds a multipart/mixed message the way `cloud-init devel
// make-mime -a file:type` prints it. Every part is MIMEText(content, type,
// "utf-8") as in cloud-init 26.x: charset="utf-8", base64 in 76-column
// lines, ASCII content included.
// Attachments of an unknown type are still included, and the returned error
// (wrapping ErrUnknownType) names each one, so a caller can honour --force.
func MakeMIME(parts []Attachment) ([]byte, error) {
	var errs []error
	known := ListTypes()
	bodies := make([][]byte, len(parts))
	for i, a := range parts {
		sub := strings.ToLower(strings.TrimPrefix(strings.TrimSpace(a.Type), "text/"))
		if sub == "" || strings.ContainsAny(sub, "\r\n\"") {
			return nil, fmt.Errorf("attachment %d (%s): invalid content type %q", i+1, a.Filename, a.Type)
		}
		if strings.ContainsAny(a.Filename, "\r\n\"") {
			return nil, fmt.Errorf("attachment %d: invalid filename %q", i+1, a.Filename)
		}
		if !slices.Contains(known, sub) {
			errs = append(errs, fmt.Errorf("content type 'text/%s' for attachment %d may be incorrect!: %w", sub, i+1, ErrUnknownType))
		}
		var b bytes.Buffer
		charset, cte, body := "utf-8", "base64", base64Lines(a.Content)
		fmt.Fprintf(&b, "Content-Type: text/%s; charset=%q\n", sub, charset)
		b.WriteString("MIME-Version: 1.0\n")
		fmt.Fprintf(&b, "Content-Transfer-Encoding: %s\n", cte)
		fmt.Fprintf(&b, "Content-Disposition: attachment; filename=\"%s\"\n\n", a.Filename)
		b.Write(body)
		bodies[i] = b.Bytes()
	}
	boundary := makeBoundary(bodies)
	var out bytes.Buffer
	fmt.Fprintf(&out, "Content-Type: multipart/mixed; boundary=%q\nMIME-Version: 1.0\n\n", boundary)
	out.WriteString("--" + boundary + "\n")
	for i, b := range bodies {
		if i > 0 {
			out.WriteString("\n--" + boundary + "\n")
		}
		out.Write(b)
	}
	out.WriteString("\n--" + boundary + "--\n")
	return out.Bytes(), errors.Join(errs...)
}

// makeBoundary is Python's email boundary: 15 "=", 19 digits, "==", with a
// ".N" suffix while it occurs in a body.
func makeBoundary(bodies [][]byte) string {
	base := fmt.Sprintf("===============%019d==", rand.Int64N(1<<63-1))
	b := base
	for n := 0; ; n++ {
		clash := false
		for _, body := range bodies {
			if bytes.Contains(body, []byte("--"+b)) {
				clash = true
				break
			}
		}
		if !clash {
			return b
		}
		b = fmt.Sprintf("%s.%d", base, n)
	}
}

func base64Lines(b []byte) []byte {
	enc := base64.StdEncoding.EncodeToString(b)
	var out bytes.Buffer
	for len(enc) > 76 {
		out.WriteString(enc[:76] + "\n")
		enc = enc[76:]
	}
	out.WriteString(enc + "\n")
	return out.Bytes()
}
