package vmware

// Fetching: guestinfo keys through a transport, and the customization
// files the tools' deployPkg plugin leaves in the IMC directory.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cloudroot/cloudroot/pkg/cloudcfg"
	"github.com/cloudroot/cloudroot/pkg/datasource"
)

// rawGuestinfo is what one transport answered: each set key's value and
// encoding, trailing space removed ("" for unset).
type rawGuestinfo struct {
	values, encodings map[string]string
}

// readGuestinfo reads guestinfo.metadata, .userdata and .vendordata and,
// for each that has a value, its .encoding, as cloud-init's guestinfo()
// does. Only transport failures are errors; an unset key is no value.
func readGuestinfo(ctx context.Context, t Transport) (rawGuestinfo, error) {
	r := rawGuestinfo{values: map[string]string{}, encodings: map[string]string{}}
	get := func(key string) (string, error) {
		v, err := t.Get(ctx, key)
		if errors.Is(err, ErrNoValue) {
			return "", nil
		}
		if err != nil {
			return "", err
		}
		return Value(v), nil
	}
	for _, key := range []string{GuestinfoMetadata, GuestinfoUserdata, GuestinfoVendordata} {
		v, err := get(key)
		if err != nil {
			return r, err
		}
		if v == "" {
			continue
		}
		enc, err := get(key + ".encoding")
		if err != nil {
			return r, err
		}
		r.values[key], r.encodings[key] = v, enc
	}
	return r, nil
}

// decoded is a method's meta-data text and payloads.
type decoded struct {
	metaData, userData, vendorData []byte
}

func (d decoded) any() bool {
	return len(d.metaData) > 0 || len(d.userData) > 0 || len(d.vendorData) > 0
}

// decode decodes each value with its encoding; name gives the key's name
// for errors (the variable's name for the envvar transport).
func (r rawGuestinfo) decode(name func(string) string) (decoded, error) {
	var d decoded
	for _, f := range []struct {
		key string
		dst *[]byte
	}{{GuestinfoMetadata, &d.metaData}, {GuestinfoUserdata, &d.userData}, {GuestinfoVendordata, &d.vendorData}} {
		v, ok := r.values[f.key]
		if !ok {
			continue
		}
		b, err := Decode(name(f.key), r.encodings[f.key], v)
		if err != nil {
			return decoded{}, err
		}
		*f.dst = b
	}
	return d, nil
}

// keyName is the name of a guestinfo key as the method knows it.
func keyName(method string) func(string) string {
	if method == MethodEnvvar {
		return EnvKey
	}
	return func(k string) string { return k }
}

// boolOpt is util.get_cfg_option_bool: def when the key is absent.
func boolOpt(cfg map[string]any, key string, def bool) bool {
	v, ok := cfg[key]
	if !ok {
		return def
	}
	return cloudcfg.IsTrue(v)
}

// Customization defaults (guestcust_util).
const (
	// DefaultIMCDir is where the deployPkg plugin unpacks the
	// customization package.
	DefaultIMCDir = "/var/run/vmware-imc"
	// DefaultCustMaxWait is vmware_cust_file_max_wait's default, seconds.
	DefaultCustMaxWait = 15
	// CustCfgName is the specification's file name.
	CustCfgName = "cust.cfg"
	// PluginName is the deployPkg plugin whose presence enables
	// customization.
	PluginName = "libdeployPkgPlugin.so"
)

// PluginDirs are where cloud-init looks for PluginName (recursively), in
// the target root.
func PluginDirs() []string {
	return []string{
		"/usr/lib/vmware-tools", "/usr/lib64/vmware-tools", "/usr/lib/open-vm-tools", "/usr/lib64/open-vm-tools",
		"/usr/lib/x86_64-linux-gnu/open-vm-tools", "/usr/lib/aarch64-linux-gnu/open-vm-tools", "/usr/lib/i386-linux-gnu/open-vm-tools",
	}
}

// findPlugin is is_cust_plugin_available: the plugin's path in root, or "".
func findPlugin(root fs.FS) string {
	if root == nil {
		return ""
	}
	for _, dir := range PluginDirs() {
		found := ""
		_ = fs.WalkDir(root, strings.TrimPrefix(dir, "/"), func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if !e.IsDir() && e.Name() == PluginName {
				found = "/" + p
				return fs.SkipAll
			}
			return nil
		})
		if found != "" {
			return found
		}
	}
	return ""
}

// custMaxWait is get_max_wait_from_cfg: vmware_cust_file_max_wait as an
// integer number of seconds, DefaultCustMaxWait when absent, not a number
// or negative.
func custMaxWait(cfg map[string]any) int {
	v, ok := cfg["vmware_cust_file_max_wait"]
	if !ok {
		return DefaultCustMaxWait
	}
	n := DefaultCustMaxWait
	switch t := v.(type) {
	case int:
		n = t
	case float64:
		if !math.IsNaN(t) && !math.IsInf(t, 0) && math.Abs(t) < 1<<31 {
			n = int(t)
		}
	case bool:
		n = 0
		if t {
			n = 1
		}
	case string:
		if i, err := strconv.Atoi(strings.TrimSpace(t)); err == nil {
			n = i
		}
	}
	if n < 0 {
		return DefaultCustMaxWait
	}
	return n
}

// waitForCustCfg is wait_for_cust_cfg_file: look for dir/cust.cfg every
// 5 s (every second when maxWait is 5 s or less) for maxWait seconds,
// checking first; "" when it never appeared. The wait ends with ctx.
func waitForCustCfg(ctx context.Context, dir string, maxWait int) (string, error) {
	nap := 5
	if maxWait <= nap {
		nap = 1
	}
	p := filepath.Join(dir, CustCfgName)
	for waited := 0; waited < maxWait; waited += nap {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p, nil
		}
		t := time.NewTimer(time.Duration(nap) * time.Second)
		select {
		case <-ctx.Done():
			t.Stop()
			return "", fmt.Errorf("waiting for %s: %w", p, ctx.Err())
		case <-t.C:
		}
	}
	return "", nil
}

// readIMCFile reads name (relative, inside dir) from the IMC directory.
func readIMCFile(dir, name string) ([]byte, error) {
	p := filepath.Join(dir, name)
	if !filepath.IsLocal(name) {
		return nil, fmt.Errorf("%s: not a file inside %s", name, dir)
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", p, err)
	}
	defer r.Close()
	b, err := datasource.ReadFile(r.FS(), filepath.ToSlash(name))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", p, err)
	}
	return b, nil
}

// markerExists is check_marker_exists: var/lib/cloud/data/.markerfile-ID.txt
// in the target root.
func markerExists(root fs.FS, id string) bool {
	if root == nil || id == "" {
		return false
	}
	_, err := fs.Stat(root, "var/lib/cloud/data/.markerfile-"+id+".txt")
	return err == nil
}
