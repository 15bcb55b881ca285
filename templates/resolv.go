package templates

import "embed"

//go:embed resolv/*.tmpl
var resolvFS embed.FS

// Resolv is cloudroot's template for cc_resolv_conf's "resolv.conf" or
// "systemd.resolved.conf", as a Jinja template.
func Resolv(name string) ([]byte, bool) {
	b, err := resolvFS.ReadFile("resolv/" + name + ".tmpl")
	return b, err == nil
}
