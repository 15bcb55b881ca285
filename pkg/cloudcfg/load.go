package cloudcfg

import (
	"errors"
	"fmt"

	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
)

// Source names used in Merged.Sources and Problem.Source for the sources
// that are not files.
const (
	SourceBuiltin     = "builtin"
	SourceCmdline     = "kernel command line"
	SourceDatasource  = "datasource"
	SourceVendorData  = "vendor-data"
	SourceVendorData2 = "vendor-data2"
	SourceUserData    = "user-data"
)

// LoadOptions are the inputs of Load. The zero value loads the built-in
// defaults only.
type LoadOptions struct {
	// Root is the target root holding /etc/cloud (nil: no files read).
	Root Reader
	// Run holds /run/cloud-init/cloud.cfg; nil means Root.
	Run Reader
	// Files, when set, are the system files already read (Root and Run
	// are then not read).
	Files *SystemFiles
	// Cmdline is the kernel command line (for cc: ... end_cc).
	Cmdline string
	// Datasource is the datasource's own config object (may be nil).
	Datasource map[string]any
	// VendorData, VendorData2 and UserData are the cloud-config parts of
	// each payload, in payload order.
	VendorData  []Part
	VendorData2 []Part
	UserData    []Part
	// UserConfig, VendorConfig and Vendor2Config, when non-nil, are the
	// payload's parts already merged (e.g. by userdata.Result.Merged with
	// MergePart, to interleave #cloud-config-jsonp patches) and are used
	// instead of UserData, VendorData and Vendor2Data.
	UserConfig, VendorConfig, Vendor2Config map[string]any
}

// Merged is the configuration Load assembled.
type Merged struct {
	// Config is every source merged: what modules see.
	Config map[string]any
	// System is sources 1-5 merged (instance-data merged_system_cfg).
	System map[string]any
	// User, Vendor and Vendor2 are each payload's parts merged (what
	// cloud-init writes to cloud-config.txt, vendor-cloud-config.txt and
	// vendor2-cloud-config.txt); never nil.
	User, Vendor, Vendor2 map[string]any
	// VendorEnabled and Vendor2Enabled say whether vendor-data (vendor_data:
	// {enabled}) and vendor-data2 (vendor_data2: {enabled}) were used.
	// Disabled vendor-data contributes neither config nor scripts.
	VendorEnabled, Vendor2Enabled bool
	// VendorPrefix is vendor_data.prefix, the command vendor scripts are run
	// with (cc_scripts_vendor): a string becomes one item; empty for none.
	VendorPrefix []string
	// Sources names the sources that contributed, lowest priority first.
	Sources []string
	// Problems are the sources (or parts) that could not be used, or only
	// partly; Load carries on without them.
	Problems []*Problem // Warnings are what the reader noticed in usable files: a repeated key
	// ("/etc/cloud/cloud.cfg: line 3 column 1: duplicate key ..."), whose
	// last value is used, as in cloud-init.
	Warnings []string
}

// Load reads and merges every configuration source in precedence order (see
// the package comment), following cloud-init's grouping: cloud.cfg.d files
// are merged together, then over cloud.cfg; that under the runtime
// config and the command line (the base config); and the base config under
// datasource, vendor, vendor2 and user config. The returned *Merged is always
// usable; the error joins its Problems (nil when there are none). It is
// LoadBase(o).Merge(o): a boot loads the base once and merges it as often
// as it needs.
func Load(o LoadOptions) (*Merged, error) {
	return LoadBase(o).Merge(o)
}

// Base is the base configuration: the built-in defaults, cloud.cfg and
// cloud.cfg.d, the runtime config and the kernel command line's, merged.
// A boot loads it once (LoadBase) and lays the datasource's config and the
// payloads over it with Merge, which reads and parses nothing again.
type Base struct {
	// System is sources 1-5 merged (instance-data merged_system_cfg).
	// Merge never changes it; callers must not either.
	System map[string]any
	// Sources, Problems and Warnings are Merged's, for the base sources.
	Sources  []string
	Problems []*Problem
	Warnings []string
}

// appendProblems appends err's parts to ps, each a *Problem as it is or
// one from src.
func appendProblems(ps []*Problem, src string, err error) []*Problem {
	if err == nil {
		return ps
	}
	for _, e := range splitJoined(err) {
		var p *Problem
		if errors.As(e, &p) {
			ps = append(ps, p)
			continue
		}
		ps = append(ps, &Problem{Source: src, Err: e})
	}
	return ps
}

// LoadBase reads (unless o.Files has them) and merges the base sources;
// o's datasource and payload fields are not used.
func LoadBase(o LoadOptions) *Base {
	res := &Base{}
	problem := func(src string, err error) { res.Problems = appendProblems(res.Problems, src, err) }

	// Base config: builtin, cloud.cfg + cloud.cfg.d, runtime, cmdline.
	files := o.Files
	if files == nil {
		files = ReadSystemFiles(o.Root, o.Run)
	}
	sys := files.files
	res.Problems = append(res.Problems, sys.problems...)
	res.Warnings = append(res.Warnings, sys.warnings...)
	res.Sources = append(res.Sources, SourceBuiltin)
	if sys.cloudCfg != nil {
		res.Sources = append(res.Sources, sys.cloudCfg.Name)
	}
	var confd []Named
	for _, s := range sys.confd {
		confd = append(confd, Named(s))
		res.Sources = append(res.Sources, s.Name)
	}
	confdCfg, err := MergeNamed(confd...)
	problem(PathCloudCfgD, err)
	etc := []Named{{Name: PathCloudCfgD, Config: confdCfg}}
	if sys.cloudCfg != nil {
		etc = append([]Named{Named(*sys.cloudCfg)}, etc...)
	}
	etcCfg, err := MergeNamed(etc...)
	problem(PathCloudCfg, err)
	base := []Named{{Name: SourceBuiltin, Config: Builtin()}, {Name: PathCloudCfg, Config: etcCfg}}
	if sys.runtime != nil {
		base = append(base, Named(*sys.runtime))
		res.Sources = append(res.Sources, sys.runtime.Name)
	}
	cc, err := ParseCmdlineCC(o.Cmdline)
	problem(SourceCmdline, err)
	if cc != nil {
		base = append(base, Named{Name: SourceCmdline, Config: cc})
		res.Sources = append(res.Sources, SourceCmdline)
	}
	res.System, err = MergeNamed(base...)
	problem(SourceBuiltin, err)
	return res
}

// Merge lays o's datasource config and payloads over the base (o's file
// and command-line fields are not used) and returns every source merged;
// the error joins its Problems, the base's included.
func (b *Base) Merge(o LoadOptions) (*Merged, error) {
	res := &Merged{
		System:   deepCopy(b.System).(map[string]any),
		Sources:  append([]string(nil), b.Sources...),
		Problems: append([]*Problem(nil), b.Problems...),
		Warnings: append([]string(nil), b.Warnings...),
	}
	problem := func(src string, err error) { res.Problems = appendProblems(res.Problems, src, err) }
	var err error

	// Payloads.
	payload := func(merged map[string]any, parts []Part, src string) map[string]any {
		if merged != nil {
			return deepCopy(merged).(map[string]any)
		}
		m, err := MergeParts(parts)
		problem(src, err)
		return m
	}
	res.User = payload(o.UserConfig, o.UserData, SourceUserData)
	res.Vendor = payload(o.VendorConfig, o.VendorData, SourceVendorData)
	res.Vendor2 = payload(o.Vendor2Config, o.VendorData2, SourceVendorData2)

	// Vendor-data is consumed only if the config without it allows it
	// (stages.Init._consume_vendordata).
	sysNamed := Named{Name: "system", Config: res.System}
	dsNamed := Named{Name: SourceDatasource, Config: o.Datasource}
	userNamed := Named{Name: SourceUserData, Config: res.User}
	noVendor, _ := MergeNamed(sysNamed, dsNamed, userNamed)
	var vErr, v2Err error
	res.VendorEnabled, vErr = vendorEnabled(noVendor, "vendor_data")
	problem(SourceVendorData, vErr)
	res.Vendor2Enabled, v2Err = vendorEnabled(noVendor, "vendor_data2")
	problem(SourceVendorData2, v2Err)

	all := []Named{sysNamed}
	if len(o.Datasource) > 0 {
		all = append(all, dsNamed)
		res.Sources = append(res.Sources, SourceDatasource)
	}
	if res.VendorEnabled && len(res.Vendor) > 0 {
		all = append(all, Named{Name: SourceVendorData, Config: res.Vendor})
		res.Sources = append(res.Sources, SourceVendorData)
	}
	if res.Vendor2Enabled && len(res.Vendor2) > 0 {
		all = append(all, Named{Name: SourceVendorData2, Config: res.Vendor2})
		res.Sources = append(res.Sources, SourceVendorData2)
	}
	if len(res.User) > 0 {
		all = append(all, userNamed)
		res.Sources = append(res.Sources, SourceUserData)
	}
	res.Config, err = MergeNamed(all...)
	problem("merged config", err)

	prefix, err := vendorPrefix(res.Config)
	problem(SourceVendorData, err)
	res.VendorPrefix = prefix

	var errs []error
	for _, p := range res.Problems {
		errs = append(errs, p)
	}
	return res, errors.Join(errs...)
}

func splitJoined(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, splitJoined(e)...)
		}
		return out
	}
	return []error{err}
}

// vendorEnabled reads cfg[key].enabled with util.is_true; a key that is not
// a mapping disables vendor-data, as in cloud-init. Absent means enabled
// (cloud-init's built-in default).
func vendorEnabled(cfg map[string]any, key string) (bool, error) {
	v, ok := cfg[key]
	if !ok || v == nil {
		return true, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return false, fmt.Errorf("invalid %s setting (a %s, not a mapping): disabling it", key, typeName(v))
	}
	e, ok := m["enabled"]
	if !ok {
		return false, nil
	}
	return IsTrue(e), nil
}

// IsTrue is cloud-init's util.is_true (pyval.IsTrue).
func IsTrue(v any) bool { return pyval.IsTrue(v) }

// vendorPrefix reads vendor_data.prefix as subp.runparts takes exe_prefix.
func vendorPrefix(cfg map[string]any) ([]string, error) {
	vd, _ := cfg["vendor_data"].(map[string]any)
	switch t := vd["prefix"].(type) {
	case nil:
		return nil, nil
	case string:
		return []string{t}, nil
	case []any:
		var out []string
		for _, e := range t {
			out = append(out, fmt.Sprint(e))
		}
		return out, nil
	default:
		return nil, fmt.Errorf("vendor_data.prefix must be a string or a list, got %s: ignoring it", typeName(t))
	}
}
