package netconfig

import (
	"encoding/json"
	"testing"
)

func init() {
	cloudConverters["oracle"] = func(md []byte, c cloudCase, links Links) (*Config, error) {
		var doc any
		if err := json.Unmarshal(md, &doc); err != nil {
			return nil, err
		}
		return ConvertOracle(doc, c.ConfigureSecondary, links)
	}
}

func FuzzConvertOracle(f *testing.F) {
	seedCloud(f, "oracle")
	f.Fuzz(func(t *testing.T, data []byte) {
		var doc any
		if json.Unmarshal(data, &doc) != nil {
			return
		}
		for _, sec := range []bool{false, true} {
			if cfg, err := ConvertOracle(doc, sec, fuzzCloudMACs); err == nil {
				renderAll(t, cfg)
			}
		}
	})
}
