package datasource

import "strings"

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
