package akamai

// Pure parsing: the instance document, user-data, Data.

import (
	"encoding/base64"
	"errors"
	"strconv"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/jsondoc"
)

// Input is what the metadata service answered.
type Input struct {
	// URL is the instance document's URL.
	URL string
	// Instance is /v1/instance; UserData /v1/user-data (nil: none).
	Instance, UserData []byte
	// Serial is the DMI system serial, the instance id when the document
	// has none.
	Serial string
}

// ParseInstance decodes the instance document: a JSON object.
func ParseInstance(b []byte) (map[string]any, error) {
	return jsondoc.Object(b)
}

// DecodeUserData is cloud-init's b64decode of the user-data: characters
// outside the base64 alphabet are dropped, then the rest decoded; text
// that still does not decode is kept as is.
func DecodeUserData(b []byte) []byte {
	clean := strings.Map(func(r rune) rune {
		switch {
		case r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '+', r == '/', r == '=':
			return r
		}
		return -1
	}, string(b))
	out, err := base64.StdEncoding.DecodeString(clean)
	if err != nil {
		return b
	}
	return out
}

func scalar(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64)
	}
	return ""
}

// Build turns the answers into Data as cloud-init's _fetch_metadata does:
// meta-data is the instance document with instance-id (its id, else the
// DMI serial) added.
func Build(in Input) (*datasource.Data, error) {
	md, err := ParseInstance(in.Instance)
	if err != nil {
		return nil, err
	}
	id := scalar(md["id"])
	if id == "" {
		id = in.Serial
	}
	if id == "" {
		return nil, errors.New("no instance id (no id, no DMI serial)")
	}
	md["instance-id"] = id
	d := &datasource.Data{
		Name:        "Akamai",
		Platform:    "akamai",
		CloudName:   "akamai",
		Subplatform: datasource.SubplatformUnknown, // as cloud-init: no metadata_address
		Mode:        "net",
		MetaData:    md,
		Region:      scalar(md["region"]),
	}
	if in.UserData != nil {
		d.UserData = DecodeUserData(in.UserData)
	}
	return d, nil
}
