package templates

import _ "embed"

// CloudCfg is the default /etc/cloud/cloud.cfg as a Jinja template, rendered
// per distro by pkg/distro (distro.DefaultCloudConfig).
//
//go:embed cloud.cfg.tmpl
var CloudCfg []byte
