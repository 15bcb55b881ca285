package exoscale

// Pure parsing: Data from the crawled tree and the password.

import (
	"errors"

	"github.com/cloudroot/cloudroot/pkg/datasource"
)

// Input is what the services answered.
type Input struct {
	// URL is the meta-data tree's URL.
	URL string
	// MetaData is the crawled tree; UserData the user-data (nil: none).
	MetaData map[string]any
	UserData []byte
	// Password is the new password ("" when none).
	Password string
}

func text(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case []any:
		// A multi-line leaf: its first line.
		if len(t) > 0 {
			s, _ := t[0].(string)
			return s
		}
	}
	return ""
}

// Build turns the answers into Data as cloud-init's _get_data does; a
// password becomes configuration as cloud-init's extra_config.
func Build(in Input) (*datasource.Data, error) {
	md := in.MetaData
	if md == nil {
		md = map[string]any{}
	}
	id := text(md["instance-id"])
	if id == "" {
		return nil, errors.New("meta-data has no instance-id")
	}
	d := &datasource.Data{
		Name:             "Exoscale",
		Platform:         "exoscale",
		CloudName:        "exoscale",
		Subplatform:      datasource.SubplatformUnknown, // as cloud-init: no metadata_address
		Mode:             "net",
		NetworkStage:     true, // no init-local variant in cloud-init
		MetaData:         md,
		AvailabilityZone: text(md["availability-zone"]),
		PublicKeys:       datasource.NormalizePubKeys(md["public-keys"]),
		UserData:         in.UserData,
	}
	if h := text(md["local-hostname"]); h != "" {
		d.Hostname = h
	}
	if in.Password != "" {
		d.Config = map[string]any{
			"ssh_pwauth": true,
			"password":   in.Password,
			"chpasswd":   map[string]any{"expire": false},
		}
	}
	return d, nil
}
