package identify

import (
	"fmt"
	"io/fs"
	"strings"
	"testing/fstest"
)

// Facts is the view of Inputs a datasource check works on: the values
// ds-identify's collect_info gathered, the files, and the log.
type Facts struct {
	in     Inputs
	files  fs.FS
	host   fs.FS
	virt   string
	policy Policy
	dsname string
	dslist []string
	// dslistFile is the config file datasource_list came from.
	dslistFile string
	labels     []string // "" when unavailable
	uuids      []string
	isoDevs    []FSInfo
	fsLabels   string // FS_LABELS as printed
	isoPrint   string // ISO9660_DEVS as printed
	pid1Name   string

	level    int
	log      []string
	warnings []string
}

func newFacts(in Inputs) *Facts {
	f := &Facts{in: in, files: in.Files, host: in.Host, level: in.DebugLevel}
	if f.files == nil {
		f.files = fstest.MapFS{}
	}
	if f.host == nil {
		f.host = f.files
	}
	if f.level == 0 {
		f.level = 1
	}
	f.virt = in.Virt
	if f.virt == "" {
		f.virt = VirtFromEnv(in.Env["SYSTEMD_VIRTUALIZATION"])
	}
	if f.virt == "" {
		f.virt = Unavailable
	}
	return f
}

// VirtFromEnv maps systemd's $SYSTEMD_VIRTUALIZATION ("vm:kvm",
// "container:lxc") to systemd-detect-virt's answer ("kvm", "lxc").
func VirtFromEnv(v string) string {
	if _, after, ok := strings.Cut(v, ":"); ok {
		return after
	}
	return v
}

// Virt is the virtualization type ("unavailable" when unknown).
func (f *Facts) Virt() string { return f.virt }

// IsContainer reports whether the virtualization type is a container,
// where ds-identify ignores DMI and block devices.
func (f *Facts) IsContainer() bool {
	switch f.virt {
	case "container-other", "lxc", "lxc-libvirt", "systemd-nspawn", "docker", "rkt", "jail":
		return true
	}
	return false
}

func (f *Facts) debug(level int, msg string) {
	if level <= f.level {
		f.log = append(f.log, msg)
	}
}

func (f *Facts) warn(msg string) {
	msg = "WARN: " + msg
	f.log = append(f.log, msg)
	f.warnings = append(f.warnings, msg)
}

// collect is collect_info: config, datasource list and filesystems.
func (f *Facts) collect() {
	f.pid1Name = f.readPID1ProductName()
	f.readConfig()
	f.readDatasourceList()
	f.readFS()
}

func (f *Facts) readPID1ProductName() string {
	b, err := fs.ReadFile(f.host, "proc/1/environ")
	if err != nil {
		return ""
	}
	for _, kv := range strings.Split(string(b), "\x00") {
		if k, v, ok := strings.Cut(kv, "="); ok && k == "product_name" {
			return v
		}
	}
	return Unavailable
}

// readConfig is read_config: ds-identify.cfg, then the command line.
func (f *Facts) readConfig() {
	var policy string
	if b, err := fs.ReadFile(f.files, PathDIConfig); err == nil && isRegular(f.files, PathDIConfig) {
		c := ParseDIConfig(string(b))
		f.dsname, policy = c.Datasource, c.Policy
	} else if exists(f.files, PathDIConfig) {
		f.log = append(f.log, "ERROR: /"+PathDIConfig+" exists but is not a file!")
	}
	for _, p := range f.in.Cmdline.Params() {
		if !p.HasValue {
			continue
		}
		val, _, _ := strings.Cut(p.Value, ";")
		switch p.Key {
		case "ds", "ci.ds", "ci.datasource":
			f.dsname = val
		case "ci.di.policy":
			policy = val
		}
	}
	f.dsname = NormalizeName(f.dsname)
	var warns []string
	f.policy, warns = ParsePolicy(policy, DefaultPolicy())
	f.warnings = append(f.warnings, warns...)
	f.debug(1, fmt.Sprintf("policy loaded: mode=%s report=false found=%s maybe=%s notfound=%s",
		f.policy.Mode, f.policy.Found, f.policy.Maybe, f.policy.NotFound))
}

// readDatasourceList is read_datasource_list.
func (f *Facts) readDatasourceList() {
	if f.dsname != "" {
		f.dslist = []string{f.dsname}
		return
	}
	if t, ok := cmdlineCCList(f.in.Cmdline.String()); ok {
		f.dslist = ParseDatasourceList(t)
	}
	if len(f.dslist) == 0 {
		if v, file, ok := checkConfig(f.files, "datasource_list", configFiles(f.files, "")); ok {
			f.dslistFile = "/" + file
			f.debug(1, fmt.Sprintf("%s set datasource_list: %s", f.dslistFile, v))
			f.dslist = ParseDatasourceList(v)
		}
	}
	if len(f.dslist) == 0 {
		f.dslist = DefaultList()
		f.debug(1, "no datasource_list found, using default: "+strings.Join(f.dslist, " "))
	}
}

// readFS is read_fs_info: labels, UUIDs and iso9660 devices.
func (f *Facts) readFS() {
	if f.IsContainer() {
		f.fsLabels = Unavailable + ":container"
		f.isoPrint = Unavailable + ":container"
		return
	}
	var iso []string
	for _, d := range f.in.FS {
		if d.Label != "" {
			f.labels = append(f.labels, d.Label)
		}
		if d.UUID != "" {
			f.uuids = append(f.uuids, d.UUID)
		}
		if d.Type == "iso9660" {
			f.isoDevs = append(f.isoDevs, d)
			iso = append(iso, d.Device+"="+d.Label)
		}
	}
	f.fsLabels = strings.Join(f.labels, ",")
	f.isoPrint = strings.Join(iso, ",")
}

// printInfo is _print_info: the key=value dump.
func (f *Facts) printInfo() {
	u := f.in.Uname
	orUnavail := func(s string) string {
		if s == "" {
			return Unavailable
		}
		return s
	}
	d := f.in.DMI
	pid1 := f.pid1Name
	cont := "false"
	if f.IsContainer() {
		cont = "true"
	}
	for _, kv := range [][2]string{
		{"DMI_PRODUCT_NAME", orUnavail(d.ProductName)},
		{"DMI_SYS_VENDOR", orUnavail(d.SysVendor)},
		{"DMI_PRODUCT_SERIAL", orUnavail(d.ProductSerial)},
		{"DMI_PRODUCT_UUID", orUnavail(d.ProductUUID)},
		{"PID_1_PRODUCT_NAME", pid1},
		{"DMI_CHASSIS_ASSET_TAG", orUnavail(d.ChassisAssetTag)},
		{"DMI_BOARD_NAME", orUnavail(d.BoardName)},
		{"FS_LABELS", f.fsLabels},
		{"ISO9660_DEVS", f.isoPrint},
		{"KERNEL_CMDLINE", f.in.Cmdline.String()},
		{"VIRT", f.virt},
		{"UNAME_KERNEL_NAME", u.Sysname},
		{"UNAME_KERNEL_VERSION", u.Version},
		{"UNAME_MACHINE", u.Machine},
		{"DSNAME", f.dsname},
		{"DSLIST", strings.Join(f.dslist, " ")},
		{"MODE", string(f.policy.Mode)},
		{"ON_FOUND", string(f.policy.Found)},
		{"ON_MAYBE", string(f.policy.Maybe)},
		{"ON_NOTFOUND", string(f.policy.NotFound)},
	} {
		f.log = append(f.log, kv[0]+"="+kv[1])
	}
	f.log = append(f.log, "is_container="+cont)
}

// HasLabel reports whether any filesystem carries one of labels (exact
// match; unavailable in containers).
func (f *Facts) HasLabel(labels ...string) bool {
	for _, have := range f.labels {
		for _, l := range labels {
			if have == l {
				return true
			}
		}
	}
	return false
}

// HasUUID reports whether a filesystem has the UUID u (exact match).
func (f *Facts) HasUUID(u string) bool {
	for _, have := range f.uuids {
		if have == u {
			return true
		}
	}
	return false
}

// dmi returns the DMI strings, or zero values in a container (where
// ds-identify's dmi_*_matches helpers never match).
func (f *Facts) dmi() dmiView {
	if f.IsContainer() {
		return dmiView{}
	}
	return dmiView{f.in.DMI.SysVendor, f.in.DMI.ProductName, f.in.DMI.ProductSerial,
		f.in.DMI.ChassisAssetTag, f.in.DMI.BoardName, true}
}

type dmiView struct {
	vendor, product, serial, assetTag, board string
	ok                                       bool
}

// glob matches s against a shell case pattern: '*', '?' and bracket
// classes ([0-9], [Ee]); unlike path.Match, '*' also matches '/'.
func glob(pattern, s string) bool {
	for len(pattern) > 0 {
		switch pattern[0] {
		case '*':
			for i := len(s); i >= 0; i-- {
				if glob(pattern[1:], s[i:]) {
					return true
				}
			}
			return false
		case '?':
			if s == "" {
				return false
			}
			pattern, s = pattern[1:], s[1:]
		case '[':
			end := strings.IndexByte(pattern, ']')
			if end < 0 || s == "" || !inClass(pattern[1:end], s[0]) {
				return false
			}
			pattern, s = pattern[end+1:], s[1:]
		default:
			if s == "" || s[0] != pattern[0] {
				return false
			}
			pattern, s = pattern[1:], s[1:]
		}
	}
	return s == ""
}

func inClass(class string, c byte) bool {
	for i := 0; i < len(class); i++ {
		if i+2 < len(class) && class[i+1] == '-' {
			if class[i] <= c && c <= class[i+2] {
				return true
			}
			i += 2
		} else if class[i] == c {
			return true
		}
	}
	return false
}

// cmdlineHasWord reports whether word is a white-space separated token of
// the raw command line (ds-identify's `case " $cmdline " in *\ word\ *`).
func (f *Facts) cmdlineHasWord(word string) bool {
	for _, t := range strings.Fields(f.in.Cmdline.String()) {
		if t == word {
			return true
		}
	}
	return false
}

// seedDir is check_seed_dir: var/lib/cloud/seed/<name> is a directory
// holding every one of required (default meta-data) as a regular file.
func (f *Facts) seedDir(name string, required ...string) bool {
	return seedDirIn(f.files, PathSeedDir+"/"+name, required...)
}

func seedDirIn(fsys fs.FS, dir string, required ...string) bool {
	if !isDir(fsys, dir) {
		return false
	}
	if len(required) == 0 {
		required = []string{"meta-data"}
	}
	for _, r := range required {
		if !isRegular(fsys, dir+"/"+r) {
			return false
		}
	}
	return true
}

func (f *Facts) isFile(fsys fs.FS, name string) bool { return isRegular(fsys, name) }

func stat(fsys fs.FS, name string) (fs.FileInfo, bool) {
	if !fs.ValidPath(name) {
		return nil, false
	}
	fi, err := fs.Stat(fsys, name)
	return fi, err == nil
}

func exists(fsys fs.FS, name string) bool {
	_, ok := stat(fsys, name)
	return ok
}

func isRegular(fsys fs.FS, name string) bool {
	fi, ok := stat(fsys, name)
	return ok && fi.Mode().IsRegular()
}

func isDir(fsys fs.FS, name string) bool {
	fi, ok := stat(fsys, name)
	return ok && fi.IsDir()
}

func isSocket(fsys fs.FS, name string) bool {
	fi, ok := stat(fsys, name)
	return ok && fi.Mode()&fs.ModeSocket != 0
}

// readFirstLine reads a file's first line, trimmed (shell `read x < f`).
func readFirstLine(fsys fs.FS, name string) (string, bool) {
	if !fs.ValidPath(name) {
		return "", false
	}
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		return "", false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return strings.TrimSpace(line), true
}

func readFile(fsys fs.FS, name string) ([]byte, error) {
	if !fs.ValidPath(name) {
		return nil, fs.ErrInvalid
	}
	return fs.ReadFile(fsys, name)
}
