// Package templates holds the text templates cloudroot writes into targets:
// the per-distro hosts templates (used when the target has no
// /etc/cloud/templates/hosts.<distro>.tmpl of its own) and the systemd units
// and OpenRC/sysvinit scripts that run the agent's config and final stages
// (`cloudroot install` puts them into a root).
package templates

import "embed"

// FS holds hosts/*.tmpl, systemd/* (units), openrc/* and sysvinit/* (init scripts).
//
//go:embed hosts/*.tmpl systemd/* openrc/* sysvinit/*
var FS embed.FS
