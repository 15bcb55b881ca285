package lxd

// Pure parsing: what the devlxd API answered, into Data.

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/cloudroot/cloudroot/pkg/datasource"
)

// APIVersion is the devlxd API version read.
const APIVersion = "1.0"

// Aliases are cloud-init's CONFIG_KEY_ALIASES: config keys promoted to
// user-data, vendor-data and network-config. The cloud-init.* key wins
// over the user.* one (cloud-init processes the keys sorted).
var Aliases = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"cloud-init.user-data":      "user-data",
		"cloud-init.vendor-data":    "vendor-data",
		"cloud-init.network-config": "network-config",
		"user.user-data":            "user-data",
		"user.vendor-data":          "vendor-data",
		"user.network-config":       "network-config",
	}
})

// Input is what the socket answered.
type Input struct {
	// Socket is the socket's path (for the subplatform and errors).
	Socket string
	// MetaData is the body of GET /1.0/meta-data (YAML).
	MetaData []byte
	// Config maps each config key listed by GET /1.0/config that answered
	// to its value ("cloud-init.user-data" → text).
	Config map[string]string
	// Devices is GET /1.0/devices, when it answered with an object.
	Devices map[string]any
}

// Parse builds Data from the socket's answers. meta-data must be a YAML
// mapping; network-config, when given, must be a YAML mapping too.
func Parse(in Input) (*datasource.Data, error) {
	md, err := datasource.DecodeYAMLMap(in.MetaData)
	if err != nil {
		return nil, fmt.Errorf("%s %s/meta-data: %w", in.Socket, APIVersion, err)
	}
	if len(strings.TrimSpace(string(in.MetaData))) == 0 {
		return nil, fmt.Errorf("%s %s/meta-data: empty, expected YAML", in.Socket, APIVersion)
	}
	promoted := map[string]string{}
	keys := make([]string, 0, len(in.Config))
	for k := range in.Config {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	cfg := map[string]any{}
	for _, k := range keys {
		if to, ok := Aliases()[k]; ok {
			if _, done := promoted[to]; !done {
				promoted[to] = in.Config[k]
			}
			// user-data and vendor-data never go in ds; the network
			// configuration is in Data.NetworkConfig.
			continue
		}
		if k == "user.meta-data" {
			continue
		}
		cfg[k] = in.Config[k]
	}
	d := &datasource.Data{
		Name: "LXD", Platform: "lxd", CloudName: datasource.MetaCloudName(md, "lxd"), Mode: "net",
		Subplatform: "LXD socket API v. " + APIVersion + " (" + in.Socket + ")",
		MetaData:    md,
		DS:          map[string]any{"_metadata_api_version": APIVersion, "config": cfg},
	}
	d.AvailabilityZone, d.Region = datasource.MetaZoneRegion(md)
	if ud, ok := promoted["user-data"]; ok {
		d.UserData = []byte(ud)
	}
	if vd, ok := promoted["vendor-data"]; ok {
		d.VendorData = []byte(vd)
	}
	if nc, ok := promoted["network-config"]; ok {
		if strings.TrimSpace(nc) == "" {
			return nil, fmt.Errorf("%s network-config: empty, expected YAML", in.Socket)
		}
		m, err := datasource.DecodeYAMLMap([]byte(nc))
		if err != nil {
			return nil, fmt.Errorf("%s network-config: %w", in.Socket, err)
		}
		// Both `network: {version: ...}` and the bare form are accepted
		// downstream; hand on what was given.
		d.NetworkConfig = m
	}
	if in.Devices != nil {
		d.DS["devices"] = in.Devices
	}
	return d, nil
}
