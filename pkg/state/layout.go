package state

import (
	"path"
	"strings"
)

// Paths inside the target root, as cloud-init lays them out. All are absolute
// paths interpreted relative to a target root (see pkg/target).
const (
	CloudDir = "/var/lib/cloud"
	RunDir   = "/run/cloud-init"

	// StateFile is the hand-off written by the initramfs for this boot.
	StateFile = RunDir + "/cloudroot/state.json"
	// InRootMarker says this boot's state was written by the agent's
	// in-root stages, not an initramfs (the network stage's unit runs).
	InRootMarker = RunDir + "/cloudroot/in-root"
	// InstanceStateName is the mirror of StateFile inside the instance dir.
	InstanceStateName = "cloudroot-state.json"

	StatusFile        = CloudDir + "/data/status.json"
	ResultFile        = CloudDir + "/data/result.json"
	RunStatusLink     = RunDir + "/status.json"
	RunResultLink     = RunDir + "/result.json"
	InstanceDataFile  = RunDir + "/instance-data.json"
	InstanceDataSens  = RunDir + "/instance-data-sensitive.json"
	CombinedConfig    = RunDir + "/combined-cloud-config.json"
	InstanceLink      = CloudDir + "/instance"
	InstanceIDFile    = CloudDir + "/data/instance-id"
	PrevInstanceID    = CloudDir + "/data/previous-instance-id"
	PrevDatasource    = CloudDir + "/data/previous-datasource"
	SetHostnameFile   = CloudDir + "/data/set-hostname"
	PrevHostnameFile  = CloudDir + "/data/previous-hostname"
	ScriptsPerBoot    = CloudDir + "/scripts/per-boot"
	ScriptsPerInst    = CloudDir + "/scripts/per-instance"
	ScriptsPerOnce    = CloudDir + "/scripts/per-once"
	ScriptsVendor     = CloudDir + "/scripts/vendor"
	GlobalSemDir      = CloudDir + "/sem"
	LogFile           = "/var/log/cloud-init.log"
	OutputLogFile     = "/var/log/cloud-init-output.log"
	DisabledMarker    = RunDir + "/disabled"
	EnabledMarker     = RunDir + "/enabled"
	RunCloudCfg       = RunDir + "/cloud.cfg"
	InstanceIDRunFile = RunDir + "/.instance-id"
)

// InstanceDir is /var/lib/cloud/instances/<iid>.
func InstanceDir(iid string) string {
	return path.Join(CloudDir, "instances", SafeInstanceID(iid))
}

// SafeInstanceID makes an instance-id usable as one path element, as
// cloud-init does (slashes become underscores).
func SafeInstanceID(iid string) string {
	iid = strings.ReplaceAll(iid, "/", "_")
	if iid == "" || iid == "." || iid == ".." {
		return "iid-unknown"
	}
	return iid
}

// Frequency is how often a module or script runs, with cloud-init's names.
type Frequency string

const (
	PerInstance Frequency = "once-per-instance"
	PerAlways   Frequency = "always"
	PerOnce     Frequency = "once"
)

// ParseFrequency accepts cloud-init's spellings ("instance",
// "once-per-instance", "always", "once").
func ParseFrequency(s string) (Frequency, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "instance", "once-per-instance", "per-instance":
		return PerInstance, true
	case "always", "per-boot", "boot":
		return PerAlways, true
	case "once", "per-once":
		return PerOnce, true
	}
	return "", false
}

// SemaphorePath is where the semaphore for name at freq lives, or "" for
// PerAlways (which has none). Names follow cloud-init: "config_" prefix and
// "-" replaced by "_"; per-once semaphores are global with a ".once" suffix.
func SemaphorePath(iid, name string, freq Frequency) string {
	n := strings.ReplaceAll(name, "-", "_")
	if !strings.HasPrefix(n, "config_") && !strings.HasPrefix(n, "consume_") {
		n = "config_" + n
	}
	switch freq {
	case PerInstance:
		return path.Join(InstanceDir(iid), "sem", n)
	case PerOnce:
		return path.Join(GlobalSemDir, n+".once")
	}
	return ""
}
