package datasource

import (
	"context"
	"strings"
)

// InstanceChecker is implemented by sources that can tell, from local
// evidence only (DMI, the command line, seed directories; never the
// network), whether a cached answer still describes this machine —
// cloud-init's check_instance_id, consulted on every boot before the
// datasource is searched again. A true answer lets the boot reuse the
// cached Data without probing; false (or no checker) means search anew.
type InstanceChecker interface {
	CheckInstanceID(env Env, cached *Data) bool
}

// FallbackAllower is implemented by sources whose cached answer may be
// reused when the search finds nothing on this boot (cloud-init's
// check_if_fallback_is_allowed; VMware customization does this).
type FallbackAllower interface {
	FallbackAllowed(cached *Data) bool
}

// BootRefresher is implemented by sources whose platform changes the
// metadata of the same instance between boots — OpenStack's
// meta.admin_pass after `nova set-password` or a rebuild — so that a boot
// whose cache the instance check restored asks the source again (over the
// ephemeral network if it needs it) and uses the fresh answer when it is
// for the same instance; always-frequency modules (`[set-passwords,
// always]`) then see this boot's metadata without any cache deletion. When
// the source does not answer, the cache is used as before. cloud-init
// keeps the restored cache (obj.pkl) instead; manual_cache_clean keeps it
// here too.
type BootRefresher interface {
	RefreshesOnBoot()
}

// InstanceIDMatches is cloud-init's instance_id_matches_system_uuid: the
// instance-id equals the DMI value (product_uuid, or product_serial for the
// sources that say so), ignoring case. Either one empty is no match.
func InstanceIDMatches(iid, dmiValue string) bool {
	iid, dmiValue = strings.TrimSpace(iid), strings.TrimSpace(dmiValue)
	if iid == "" || dmiValue == "" {
		return false
	}
	return strings.EqualFold(iid, dmiValue)
}

// Network update events, cloud-init's EventType names for the network
// scope of default_update_events.
const (
	EventBootNewInstance = "boot-new-instance"
	EventBoot            = "boot"
	EventBootLegacy      = "boot-legacy"
	EventHotplug         = "hotplug"
)

// Reporter is implemented by sources that tell their platform how
// provisioning went (Azure's wireserver health report). The caller calls
// ReportReady once the source's answer is taken, on an instance's first
// boot, with the Env Get succeeded with (the network still up), and
// ReportFailure when the source was there but could not be read. Errors
// are logged, never fatal.
type Reporter interface {
	ReportReady(ctx context.Context, env Env, d *Data) error
	ReportFailure(ctx context.Context, env Env, description string) error
}

// Preparer is implemented by sources that ready the running system for
// their answer before the init modules use it (Azure makes the
// /dev/disk/cloud links udev would, for its resource disk). The caller
// calls Prepare on every boot the answer is used, searched or restored
// from the cache; an error is logged, never fatal.
type Preparer interface {
	Prepare(d *Data) error
}

// Fallback marks the source used when every other one in the list failed
// or was absent (None): the caller searches it last, after trying the
// cached answer (FallbackAllower).
type Fallback interface {
	Fallback()
}

// IsFallback reports whether src is the fallback source.
func IsFallback(src Source) bool {
	_, ok := src.(Fallback)
	return ok
}
