// Package templates holds the text templates cloudroot writes into targets:
// the per-distro hosts templates (used when the target has no
// /etc/cloud/templates/hosts.<distro>.tmpl of its own) and the systemd units
// and OpenRC/sysvinit scripts that run the agent's config and final stages
// (`cloudroot install` puts them into a root).
package templates

import "embed"

// FS holds hosts/*.tmpl, systemd/* (units), openrc/* and sysvinit/* (init
// scripts), apt/*.tmpl (cc_apt_configure's sources templates, used when the
// target has none in /etc/cloud/templates) and apk/repositories.tmpl
// (cc_apk_configure's).
//
//go:embed hosts/*.tmpl systemd/* openrc/* sysvinit/* apt/*.tmpl apk/*.tmpl
var FS embed.FS
