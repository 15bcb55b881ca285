package netboot

import (
	"fmt"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
)

// ConfigKey is the cloud-config key of an installer flow's image request,
// whose sub-keys are the command line's without the "cloudroot." prefix:
//
//	cloudroot:
//	  image: http://server/disk.img.zst
//	  image-target: /dev/sda
//	  image-sha256: 0123…        # or none; default <image>.sha256
//	  image-compression: zstd    # default from the name
//	  image-overwrite: false
//
// The underscore spellings (image_target…) are accepted too.
const ConfigKey = "cloudroot"

// ImageFromConfigs reads the image request from cloud-config documents
// (user-data parts in order; a later part's keys override an earlier
// one's). ok is false when none has cloudroot.image.
func ImageFromConfigs(cfgs []map[string]any) (img bootenv.Image, ok bool, err error) {
	keys := map[string]any{}
	for _, c := range cfgs {
		m, isMap := c[ConfigKey].(map[string]any)
		if c[ConfigKey] != nil && !isMap {
			return img, true, fmt.Errorf("cloud-config %s: want a mapping, got %T", ConfigKey, c[ConfigKey])
		}
		for k, v := range m {
			keys[strings.ReplaceAll(k, "_", "-")] = v
		}
	}
	if _, has := keys["image"]; !has {
		return img, false, nil
	}
	str := func(k string) (string, error) {
		switch v := keys[k].(type) {
		case nil:
			return "", nil
		case string:
			return v, nil
		}
		return "", fmt.Errorf("cloud-config %s.%s: want a string, got %T", ConfigKey, k, keys[k])
	}
	var vals [4]string
	for i, k := range []string{"image", "image-target", "image-sha256", "image-compression"} {
		if vals[i], err = str(k); err != nil {
			return img, true, err
		}
	}
	overwrite := false
	switch v := keys["image-overwrite"].(type) {
	case nil:
	case bool:
		overwrite = v
	case string:
		if overwrite, err = bootenv.ParseBool(v); err != nil {
			return img, true, fmt.Errorf("cloud-config %s.image-overwrite: %w", ConfigKey, err)
		}
	default:
		return img, true, fmt.Errorf("cloud-config %s.image-overwrite: want a boolean, got %T", ConfigKey, v)
	}
	img, err = bootenv.ParseImage(vals[0], vals[1], vals[2], vals[3], overwrite)
	return img, true, err
}
