package stages

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"

	"github.com/cloudroot/cloudroot/pkg/cloudcfg"
	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/state"
	"github.com/cloudroot/cloudroot/pkg/target"
	"github.com/cloudroot/cloudroot/pkg/yaml11"
)

// The datasource cache is cloudroot's obj.pkl: the datasource's whole
// answer, kept in the instance directory so a later boot can reuse it
// without searching (cloud-init's _restore_from_checked_cache). It holds
// user-data and passwords, so it is written 0600.

// DatasourceCacheName is the cache file in /var/lib/cloud/instances/<iid>.
const DatasourceCacheName = "cloudroot-datasource.json"

// ManualCleanMarker, when present in the current instance directory, makes
// the cache trusted as `manual_cache_clean: true` does.
const ManualCleanMarker = "manual-clean"

// dsCacheVersion 2 keeps user-data and vendor-data out of the cache: they
// are the instance's user-data.txt and vendor-data.txt (written before the
// cache), so a large user-data is on disk once. Version 1 caches, with the
// data inline, are still read.
const dsCacheVersion = 2

type dsCache struct {
	Version int              `json:"version"`
	Data    *datasource.Data `json:"data"`
	// UserDataFile and VendorDataFile are the paths (inside the target) of
	// the raw data left out of Data.
	UserDataFile   string `json:"user_data_file,omitempty"`
	VendorDataFile string `json:"vendor_data_file,omitempty"`
	// UserDataSum and VendorDataSum are the SHA-256 of the files' expected
	// content: a file a power cut left empty or stale is not taken for the
	// datasource's answer (the boot searches anew instead).
	UserDataSum   string `json:"user_data_sha256,omitempty"`
	VendorDataSum string `json:"vendor_data_sha256,omitempty"`
}

func sha256Hex(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// WriteDatasourceCache stores d in its instance directory (0600). The
// instance's user-data.txt and vendor-data.txt must already hold
// d.UserData and d.VendorData.
func WriteDatasourceCache(t *target.Root, d *datasource.Data) error {
	idir := state.InstanceDir(d.InstanceID())
	c := *d
	c.UserData, c.VendorData = nil, nil
	b, err := json.Marshal(dsCache{Version: dsCacheVersion, Data: &c, UserDataFile: idir + "/user-data.txt", VendorDataFile: idir + "/vendor-data.txt",
		UserDataSum: sha256Hex(d.UserData), VendorDataSum: sha256Hex(d.VendorData)})
	if err != nil {
		return fmt.Errorf("datasource cache: %w", err)
	}
	if err := t.WriteFile(idir+"/"+DatasourceCacheName, b, 0o600); err != nil {
		return fmt.Errorf("datasource cache: %w", err)
	}
	return nil
}

// ReadDatasourceCache reads the current instance's cached answer (through
// /var/lib/cloud/instance). No cache is (nil, nil); an unreadable one (or
// one whose user-data file is gone) is an error, and the caller searches
// anew.
func ReadDatasourceCache(t *target.Root) (*datasource.Data, error) {
	p := state.InstanceLink + "/" + DatasourceCacheName
	b, err := t.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("datasource cache %s: %w", p, err)
	}
	var c dsCache
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("datasource cache %s: %w", p, err)
	}
	if (c.Version != 1 && c.Version != dsCacheVersion) || c.Data == nil || c.Data.Name == "" {
		return nil, fmt.Errorf("datasource cache %s: version %d not understood", p, c.Version)
	}
	for _, f := range []struct {
		p, sum string
		dst    *[]byte
	}{{c.UserDataFile, c.UserDataSum, &c.Data.UserData}, {c.VendorDataFile, c.VendorDataSum, &c.Data.VendorData}} {
		if f.p == "" {
			continue
		}
		if *f.dst, err = t.ReadFile(f.p); err != nil {
			return nil, fmt.Errorf("datasource cache %s: %w", p, err)
		}
		if sha256Hex(*f.dst) != f.sum {
			return nil, fmt.Errorf("datasource cache %s: %s does not hold the cached data", p, f.p)
		}
		if len(*f.dst) == 0 {
			*f.dst = nil
		}
	}
	return c.Data, nil
}

// CacheMode is how a boot treats the cached datasource (cloud-init's
// `existing` argument to fetch).
type CacheMode string

const (
	// CacheCheck reuses the cache only when the source's
	// CheckInstanceID says it still describes this machine.
	CacheCheck CacheMode = "check"
	// CacheTrust reuses the cache whatever the machine says
	// (manual_cache_clean).
	CacheTrust CacheMode = "trust"
)

// CacheModeFor is "trust" when manual_cache_clean is set, or the current
// instance directory holds the manual-clean marker, else "check"; reason
// says which. As in cloud-init, where the local stage's configuration
// includes the current instance's cloud-config (user-data, then vendor2-
// and vendor-data) below the system configuration, a `manual_cache_clean`
// given in user-data keeps applying on later boots.
func CacheModeFor(t *target.Root, sysCfg map[string]any) (mode CacheMode, reason string) {
	v, ok := sysCfg["manual_cache_clean"]
	if !ok {
		for _, name := range []string{"cloud-config.txt", "vendor2-cloud-config.txt", "vendor-cloud-config.txt"} {
			b, err := t.ReadFile(state.InstanceLink + "/" + name)
			if err != nil {
				continue
			}
			cfg, _, err := yaml11.LoadMap(name, b)
			if err != nil {
				continue
			}
			if v, ok = cfg["manual_cache_clean"]; ok {
				break
			}
		}
	}
	if cloudcfg.IsTrue(v) {
		return CacheTrust, "manual cache clean set from config"
	}
	marker := state.InstanceLink + "/" + ManualCleanMarker
	if t.Exists(marker) {
		return CacheTrust, "manual cache clean found from marker: " + marker
	}
	return CacheCheck, ""
}

// Restored is the outcome of RestoreDatasource.
type Restored struct {
	// Data is the cached answer to use; nil means search anew.
	Data *datasource.Data
	// Description is the log line cloud-init writes for the decision
	// ("restored from checked cache: DataSourceNoCloud [...]").
	Description string
}

// RestoreDatasource decides whether this boot reuses cached, as cloud-init's
// _restore_from_checked_cache does: in trust mode always; in check mode when
// the cached source (looked up in reg) implements
// datasource.InstanceChecker and says yes.
func RestoreDatasource(cached *datasource.Data, mode CacheMode, reg datasource.Registry, env datasource.Env) Restored {
	if cached == nil {
		return Restored{Description: "no cache found"}
	}
	desc := cached.Description()
	if mode == CacheTrust {
		return Restored{Data: cached, Description: "restored from cache: " + desc}
	}
	src, ok := reg.Lookup(cached.Name)
	if !ok {
		return Restored{Description: "cache invalid in datasource: " + desc + " (not provided by this build)"}
	}
	if c, ok := src.(datasource.InstanceChecker); ok && c.CheckInstanceID(env, cached) {
		return Restored{Data: cached, Description: "restored from checked cache: " + desc}
	}
	return Restored{Description: "cache invalid in datasource: " + desc}
}

// RefreshSource is the source a boot asks again although its cache was
// restored: only in check mode (manual_cache_clean trusts the cache), and
// only for a datasource.BootRefresher. ok is false otherwise.
func RefreshSource(restored Restored, mode CacheMode, reg datasource.Registry) (src datasource.Source, ok bool) {
	if restored.Data == nil || mode != CacheCheck {
		return nil, false
	}
	src, found := reg.Lookup(restored.Data.Name)
	if !found {
		return nil, false
	}
	if _, refreshes := src.(datasource.BootRefresher); !refreshes {
		return nil, false
	}
	return src, true
}

// FallbackToCache is cloud-init's last resort when a check-mode search
// found nothing: the cached answer is reused if its source allows it
// (datasource.FallbackAllower).
func FallbackToCache(cached *datasource.Data, mode CacheMode, reg datasource.Registry) *datasource.Data {
	if cached == nil || mode != CacheCheck {
		return nil
	}
	src, ok := reg.Lookup(cached.Name)
	if !ok {
		return nil
	}
	if f, ok := src.(datasource.FallbackAllower); ok && f.FallbackAllowed(cached) {
		return cached
	}
	return nil
}
