// Package identify decides, before any datasource is probed, whether
// cloud-init should run on this boot and which datasources are worth trying,
// the way cloud-init's tools/ds-identify does.
//
// The contract (after ds-identify in cloud-init 26.x):
//
//   - Inputs are injected: DMI strings, the kernel command line, the
//     filesystems blkid would report, the virtualization type, uname, the
//     target's files (fs.FS rooted at PATH_ROOT) and, optionally, a separate
//     fs.FS for the running system's /sys, /dev, /proc and /run. Identify is
//     pure: it reads nothing else and writes nothing.
//   - Disabled: /etc/cloud/cloud-init.disabled, the environment variable
//     KERNEL_CMDLINE=cloud-init=disabled or cloud-init=disabled on the
//     command line → exit 2, nothing written but the log.
//   - Policy `<mode>,found=first|all,maybe=all|none,notfound=enabled|disabled`
//     from /etc/cloud/ds-identify.cfg (`policy:`) or ci.di.policy= (which
//     wins), completed from DefaultPolicy. Mode disabled → exit 1, enabled →
//     exit 0 writing no cloud.cfg, search → write the result, report → write
//     it nested under di_report:.
//   - ds=, ci.ds= or ci.datasource= (value cut at ';'; the last wins, over
//     ds-identify.cfg's `datasource:`) names the datasource: written with
//     None and no checks. cloudroot normalises the spelling (nocloud →
//     NoCloud), which ds-identify does not.
//   - /var/lib/cloud/instance/manual-clean → "# manual_cache_clean.", exit 0.
//   - datasource_list comes from `cc: … datasource_list: [ … ] … end_cc` on
//     the command line, else the last single-line `datasource_list:` in
//     /etc/cloud/cloud.cfg and cloud.cfg.d/*.cfg (multi-line YAML lists are
//     not understood, exactly as in ds-identify), else DefaultList. A list of
//     one entry ([X] or [X, None]) is used without checks; [X] is written
//     without None, as ds-identify 24.1+ does.
//   - Otherwise every listed datasource's check (Datasources) runs in list
//     order. Found ones are written (all, or the first with found=first)
//     followed by None; with none found, maybes are written when maybe=all;
//     else the not-found result is recorded under di_report: and the exit
//     code follows notfound (search: disabled → 1, enabled → 0; report: 0).
//
// Exit codes are ds-identify's: 0 enable, 1 disable (policy or nothing
// found), 2 disabled by command line, marker file or environment.
package identify

import (
	"fmt"
	"io/fs"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
)

// Paths ds-identify reads, relative to the root (PATH_ROOT).
const (
	PathDisabledMarker = "etc/cloud/cloud-init.disabled"
	PathDIConfig       = "etc/cloud/ds-identify.cfg"
	PathCloudCfg       = "etc/cloud/cloud.cfg"
	PathCloudCfgD      = "etc/cloud/cloud.cfg.d"
	PathManualClean    = "var/lib/cloud/instance/manual-clean"
	PathSeedDir        = "var/lib/cloud/seed"
)

// Output paths, relative to the root the results are written under.
const (
	PathRunCloudCfg = "run/cloud-init/cloud.cfg"
	PathRunLog      = "run/cloud-init/ds-identify.log"
	PathRunResult   = "run/cloud-init/.ds-identify.result"
	PathRunDisabled = "run/cloud-init/disabled"
	PathRunEnabled  = "run/cloud-init/enabled"
)

// Exit codes, as ds-identify returns them.
const (
	ExitEnabled  = 0 // run cloud-init
	ExitDisabled = 1 // disabled by policy, or nothing found
	ExitOff      = 2 // disabled by command line, marker file or environment
)

// Boot status codes, as cloud-init's `status` spells them.
const (
	BootEnabledByGenerator  = "enabled-by-generator"
	BootDisabledByGenerator = "disabled-by-generator"
	BootDisabledByCmdline   = "disabled-by-kernel-cmdline"
	BootDisabledByMarker    = "disabled-by-marker-file"
	BootDisabledByEnv       = "disabled-by-environment-variable"
)

// Unavailable is what ds-identify prints for a value it could not read.
const Unavailable = "unavailable"

// Inputs is everything Identify looks at.
type Inputs struct {
	DMI     bootenv.DMI
	Cmdline bootenv.Cmdline
	// FS lists the filesystems blkid would report, in device order.
	FS []FSInfo
	// Virt is systemd-detect-virt's answer ("none", "kvm", "lxc", …).
	// Empty: taken from Env["SYSTEMD_VIRTUALIZATION"], else "unavailable".
	Virt  string
	Uname Uname
	// Files is the target root (PATH_ROOT): etc/cloud, var/lib/cloud,
	// usr/lib, root/… . nil means an empty tree.
	Files fs.FS
	// Host is the running system's root for sys/, dev/, proc/ and run/
	// (hypervisor uuid, /dev/lxd/sock, OVF cdrom contents, /proc/mounts…).
	// nil means Files: ds-identify's single PATH_ROOT.
	Host fs.FS
	// Env holds the process environment ds-identify consults:
	// KERNEL_CMDLINE, SYSTEMD_VIRTUALIZATION, VMX_GUESTINFO{,_METADATA,
	// _USERDATA,_VENDORDATA}, and for WSL USERPROFILE (as a Linux path) and
	// WSL_DISTRO_NAME.
	Env map[string]string
	// Guestinfo holds VMware guestinfo values ("metadata", "userdata",
	// "vendordata", "ovfEnv") as vmware-rpctool/vmtoolsd would return them.
	// nil means neither tool exists.
	Guestinfo map[string]string
	// DebugLevel is ds-identify's DEBUG_LEVEL for the log (0 means 1).
	DebugLevel int
}

// FSInfo is one filesystem as blkid reports it.
type FSInfo struct {
	Device string `json:"device"` // /dev/sr0
	Type   string `json:"type"`   // iso9660, vfat, ext4…
	Label  string `json:"label,omitempty"`
	UUID   string `json:"uuid,omitempty"`
	Size   int64  `json:"size,omitempty"` // bytes; 0 when unknown
}

// Uname is `uname -svm` (kernel name, version, machine) plus the release.
type Uname struct {
	Sysname string // Linux
	Release string // 6.1.0-18-amd64
	Version string // #1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1 (2024-02-01)
	Machine string // x86_64
}

// Decision says whether cloud-init runs.
type Decision string

// Decisions.
const (
	Enabled  Decision = "enabled"
	Disabled Decision = "disabled"
)

// Verdict is a datasource check's answer.
type Verdict string

// Verdicts, as ds-identify's DS_FOUND, DS_MAYBE and DS_NOT_FOUND.
const (
	Found    Verdict = "found"
	Maybe    Verdict = "maybe"
	NotFound Verdict = "notfound"
)

// Candidate is the outcome of one datasource check.
type Candidate struct {
	Name   string  `json:"name"`
	Result Verdict `json:"result"`
	Reason string  `json:"reason"`
}

// Result is what Identify decided.
type Result struct {
	Decision       Decision `json:"decision"`
	Reason         string   `json:"reason"`
	BootStatusCode string   `json:"bootStatusCode"`
	Mode           Mode     `json:"mode"`
	Policy         Policy   `json:"policy"`
	// DSName is the datasource named by ds=/ci.ds=/ds-identify.cfg.
	DSName string `json:"dsname,omitempty"`
	// DSList is the list that was searched (or would have been).
	DSList []string `json:"dslist,omitempty"`
	// Found holds every check that ran, in order.
	Found []Candidate `json:"candidates,omitempty"`
	// List is the datasource_list written to run/cloud-init/cloud.cfg
	// (None appended unless a single-entry list was used as is); nil when
	// none was written.
	List []string `json:"datasourceList,omitempty"`
	// ExtraConfig holds the extra cloud.cfg lines (Ec2 strict_id).
	ExtraConfig []string `json:"extraConfig,omitempty"`
	// CloudCfg is the content of run/cloud-init/cloud.cfg; "" means
	// ds-identify writes no file.
	CloudCfg string `json:"cloudCfg,omitempty"`
	ExitCode int    `json:"exitCode"`
	// Log is the body of ds-identify.log (see FormatLog for the framing).
	Log []string `json:"-"`
	// Warnings are what ds-identify prints on stderr (bad policy values…).
	Warnings []string `json:"warnings,omitempty"`
}

// Identify runs ds-identify's decision on in.
func Identify(in Inputs) Result {
	f := newFacts(in)
	var r Result

	// is_disabled, before anything else is read.
	switch {
	case f.isFile(f.files, PathDisabledMarker):
		f.debug(1, "disabled by marker file /etc/cloud-init.disabled")
		return f.off(r, BootDisabledByMarker, "disabled by marker file /"+PathDisabledMarker)
	case in.Env["KERNEL_CMDLINE"] == "cloud-init=disabled":
		f.debug(1, "disabled by KERNEL_CMDLINE environment variable")
		return f.off(r, BootDisabledByEnv, "disabled by environment variable KERNEL_CMDLINE=cloud-init=disabled")
	case in.Cmdline.Disabled():
		f.debug(1, "disabled by kernel command line cloud-init=disabled")
		return f.off(r, BootDisabledByCmdline, "disabled by kernel parameter cloud-init=disabled")
	}

	f.collect()
	r.Mode, r.Policy, r.DSName, r.DSList = f.policy.Mode, f.policy, f.dsname, f.dslist
	r.Warnings = f.warnings
	f.printInfo()

	switch f.policy.Mode {
	case ModeDisabled:
		f.debug(1, fmt.Sprintf("mode=%s. returning %d", ModeDisabled, ExitDisabled))
		return f.done(r, Disabled, BootDisabledByGenerator, "disabled by policy mode=disabled", ExitDisabled)
	case ModeEnabled:
		f.debug(1, fmt.Sprintf("mode=%s. returning %d", ModeEnabled, ExitEnabled))
		return f.done(r, Enabled, BootEnabledByGenerator, "enabled by policy mode=enabled", ExitEnabled)
	}

	if f.dsname != "" {
		f.debug(1, fmt.Sprintf("datasource '%s' specified.", f.dsname))
		r = f.found(r, []string{f.dsname}, nil)
		return f.done(r, Enabled, BootEnabledByGenerator, "datasource "+f.dsname+" specified", ExitEnabled)
	}

	if f.isFile(f.files, PathManualClean) {
		f.debug(1, "manual_cache_clean enabled. Not writing datasource_list.")
		r.CloudCfg = f.render([]string{"# manual_cache_clean."})
		return f.done(r, Enabled, BootEnabledByGenerator, "manual_cache_clean enabled", ExitEnabled)
	}

	if n := len(f.dslist); n == 1 || (n == 2 && f.dslist[1] == "None") {
		f.debug(1, fmt.Sprintf("single entry in datasource_list (%s) use that.", strings.Join(f.dslist, " ")))
		if n == 1 {
			r.List = []string{f.dslist[0]}
			r.CloudCfg = f.render([]string{"datasource_list: [ " + f.dslist[0] + " ]"})
		} else {
			r = f.found(r, f.dslist, nil)
		}
		return f.done(r, Enabled, BootEnabledByGenerator, "single entry in datasource_list", ExitEnabled)
	}

	var found, maybe, exFound, exMaybe []string
	reg := Datasources()
	for _, name := range f.dslist {
		f.debug(2, fmt.Sprintf("Checking for datasource '%s' via 'dscheck_%s'", name, name))
		if name == "None" { // dscheck_None: never found
			r.Found = append(r.Found, Candidate{Name: name, Result: NotFound, Reason: "None is the fallback, never detected"})
			f.debug(2, "check for 'None' returned not-found[1]")
			continue
		}
		ds, ok := lookup(reg, name)
		if !ok {
			f.warn(fmt.Sprintf("No check method 'dscheck_%s' for datasource '%s'", name, name))
			continue
		}
		c := ds.Detect(f)
		r.Found = append(r.Found, Candidate{Name: name, Result: c.Verdict, Reason: c.Reason})
		switch c.Verdict {
		case Found:
			f.debug(1, fmt.Sprintf("check for '%s' returned found", name))
			found = append(found, name)
			if c.ExtraConfig != "" {
				exFound = append(exFound, c.ExtraConfig)
			}
		case Maybe:
			f.debug(1, fmt.Sprintf("check for '%s' returned maybe", name))
			maybe = append(maybe, name)
			if c.ExtraConfig != "" {
				exMaybe = append(exMaybe, c.ExtraConfig)
			}
		default:
			f.debug(2, fmt.Sprintf("check for '%s' returned not-found[1]", name))
		}
	}
	f.debug(2, fmt.Sprintf("found=%s maybe=%s", strings.Join(found, " "), strings.Join(maybe, " ")))

	if len(found) > 0 {
		if len(found) == 1 {
			f.debug(1, "Found single datasource: "+found[0])
		} else {
			f.debug(1, fmt.Sprintf("Found %d datasources found=%s: %s", len(found), f.policy.Found, strings.Join(found, " ")))
			if f.policy.Found == FoundFirst {
				found = found[:1]
			}
		}
		r = f.found(r, found, exFound)
		return f.done(r, Enabled, BootEnabledByGenerator, "found "+strings.Join(found, ", "), ExitEnabled)
	}
	if len(maybe) > 0 && f.policy.Maybe != MaybeNone {
		f.debug(1, fmt.Sprintf("%d datasources returned maybe: %s", len(maybe), strings.Join(maybe, " ")))
		r = f.found(r, maybe, exMaybe)
		return f.done(r, Enabled, BootEnabledByGenerator, "maybe "+strings.Join(maybe, ", "), ExitEnabled)
	}

	// record_notfound: in search mode only the negative result is
	// reported (an empty list would stop cloud-init searching at all).
	switch f.policy.Mode {
	case ModeReport:
		r.CloudCfg = f.render([]string{"datasource_list: [  ]"})
	case ModeSearch:
		r.CloudCfg = renderLines(true, []string{
			"datasource_list: [  ]",
			"# reporting not found result. notfound=" + string(f.policy.NotFound) + ".",
		})
	}
	base := fmt.Sprintf("No ds found [mode=%s, notfound=%s].", f.policy.Mode, f.policy.NotFound)
	var msg string
	code, dec, boot := ExitEnabled, Enabled, BootEnabledByGenerator
	switch {
	case f.policy.Mode == ModeReport && f.policy.NotFound == NotFoundDisabled:
		msg = fmt.Sprintf("%s Would disable cloud-init [%d]", base, ExitDisabled)
	case f.policy.Mode == ModeReport:
		msg = fmt.Sprintf("%s Would enable cloud-init [%d]", base, ExitEnabled)
	case f.policy.NotFound == NotFoundDisabled:
		msg = fmt.Sprintf("%s Disabled cloud-init [%d]", base, ExitDisabled)
		code, dec, boot = ExitDisabled, Disabled, BootDisabledByGenerator
	default:
		msg = fmt.Sprintf("%s Enabled cloud-init [%d]", base, ExitEnabled)
	}
	f.debug(1, msg)
	return f.done(r, dec, boot, msg, code)
}

// found is ds-identify's found(): the list with None appended unless it is
// already there, and the extra lines.
func (f *Facts) found(r Result, list, extra []string) Result {
	list = append([]string(nil), list...)
	if !containsNone(list) {
		list = append(list, "None")
	}
	r.List = list
	r.ExtraConfig = extra
	r.CloudCfg = f.render(append([]string{FormatList(list)}, extra...))
	return r
}

func containsNone(list []string) bool {
	for _, s := range list {
		if s == "None" {
			return true
		}
	}
	return false
}

// FormatList renders a datasource_list line exactly as ds-identify writes
// it: `datasource_list: [ NoCloud, None ]`.
func FormatList(list []string) string {
	return "datasource_list: [ " + strings.Join(list, ", ") + " ]"
}

func (f *Facts) render(lines []string) string {
	return renderLines(f.policy.Mode == ModeReport, lines)
}

// renderLines is write_result: one line each, under di_report: when
// reporting.
func renderLines(report bool, lines []string) string {
	var b strings.Builder
	pre := ""
	if report {
		b.WriteString("di_report:\n")
		pre = "  "
	}
	for _, l := range lines {
		b.WriteString(pre + l + "\n")
	}
	return b.String()
}

func (f *Facts) off(r Result, boot, reason string) Result {
	return f.done(r, Disabled, boot, reason, ExitOff)
}

func (f *Facts) done(r Result, d Decision, boot, reason string, code int) Result {
	r.Decision, r.BootStatusCode, r.Reason, r.ExitCode = d, boot, reason, code
	r.Log = f.log
	r.Warnings = f.warnings
	if r.Mode == "" {
		r.Mode = f.policy.Mode
		r.Policy = f.policy
	}
	return r
}
