package schema

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
)

var delayRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\+?[0-9]+$`) })

// Deprecated is one entry of cloud-init's deprecation list: a key path
// ("users.*.lock-passwd", * matching any list index or mapping key) and,
// when only some values are deprecated, the test for them.
type Deprecated struct {
	Path string
	// When is nil for a deprecated key, else reports the deprecated values.
	When    func(v any) bool
	Message string
}

// Deprecations lists the deprecated keys and values cloudroot reports, in
// cloud-init 26.x's words: its schema's description of the key (empty for
// all of these) + " Deprecated in version X. Use **Y** instead." — hence
// the leading space, which makes "key:  Deprecated..." in its output.
func Deprecations() []Deprecated {
	key := func(path, version, use string) Deprecated {
		return Deprecated{Path: path, Message: " Deprecated in version " + version + ". Use **" + use + "** instead."}
	}
	isString := func(v any) bool { _, ok := v.(string); return ok }
	out := []Deprecated{
		key("ca-certs", "22.3", "ca_certs"),
		key("ca_certs.remove-defaults", "22.3", "remove_defaults"),
		key("ca-certs.remove-defaults", "22.3", "remove_defaults"),
		key("grub-dpkg", "22.2", "grub_dpkg"),
		key("apt_update", "22.2", "package_update"),
		key("apt_upgrade", "22.2", "package_upgrade"),
		key("apt_reboot_if_required", "22.2", "package_reboot_if_required"),
		key("ubuntu_advantage", "24.1", "ubuntu_pro"),
		key("chpasswd.list", "22.2", "users"),
		key("users.*.lock-passwd", "22.3", "lock_passwd"),
		{Path: "users.*.sudo", When: func(v any) bool { return v == false },
			Message: " Changed in version 22.2. The value ``false`` is deprecated for this key, use ``null`` instead."},
		{Path: "users.*.uid", When: isString,
			Message: " Changed in version 22.3. The use of ``string`` type is deprecated. Use an ``integer`` instead."},
		{Path: "manage_etc_hosts", When: func(v any) bool { return v == "template" },
			Message: " Changed in version 22.3. Use of **template** is deprecated, use ``true`` instead."},
		{Path: "ssh_pwauth", When: isString,
			Message: " Changed in version 22.3. Use of non-boolean values for this field is deprecated."},
		{Path: "power_state.delay", When: func(v any) bool { s, ok := v.(string); return ok && delayRE().MatchString(s) },
			Message: " Changed in version 22.3. Use of type string for this value is deprecated. Use ``now`` or integer type."},
		{Path: "growpart.mode", When: func(v any) bool { return v == false },
			Message: " Changed in version 22.3. Specifying a boolean ``false`` value for **mode** is deprecated. Use the string ``'off'`` instead."},
		{Path: "apt_pipelining", When: func(v any) bool { return v == "none" || v == "unchanged" },
			Message: " Deprecated in version 22.4. Use **os** instead."},
		{Path: "vendor_data.enabled", When: isString,
			Message: " Deprecated in version 22.3. Use of type string for this value is deprecated. Use a boolean instead."},
	}
	for _, k := range []string{"no-create-home", "no-log-init", "no-user-group", "primary-group", "selinux-user",
		"ssh-authorized-keys", "ssh-import-id", "ssh-redirect-user"} {
		version := "24.2"
		if k == "ssh-authorized-keys" {
			version = "18.3"
		}
		out = append(out, key("users.*."+k, version, strings.ReplaceAll(k, "-", "_")))
	}
	return out
}

// deprecations finds the deprecated keys and values of cfg.
func deprecations(cfg map[string]any) []Finding {
	var out []Finding
	for _, d := range Deprecations() {
		walk(cfg, strings.Split(d.Path, "."), "", func(path string, v any) {
			if d.When == nil || d.When(v) {
				out = append(out, Finding{Path: path, Severity: Deprecation, Message: d.Message})
			}
		})
	}
	return out
}

// walk calls fn for every value at pattern under v.
func walk(v any, pattern []string, path string, fn func(string, any)) {
	if len(pattern) == 0 {
		fn(path, v)
		return
	}
	p, rest := pattern[0], pattern[1:]
	switch t := v.(type) {
	case map[string]any:
		if p != "*" {
			if e, ok := t[p]; ok {
				walk(e, rest, joinPath(path, p), fn)
			}
			return
		}
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			walk(t[k], rest, joinPath(path, k), fn)
		}
	case []any:
		for i, e := range t {
			if p == "*" || p == strconv.Itoa(i) {
				walk(e, rest, joinPath(path, strconv.Itoa(i)), fn)
			}
		}
	}
}
