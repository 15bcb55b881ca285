package distro

// cc_ntp's client table: each client's executable, configuration file,
// packages, service and template, with the changes a distro class makes
// (cloud-init keys them by distro class name, system_info.distro, so a
// variant without an entry — fedora, rocky, suse — gets the base table).

import (
	"strconv"
	"strings"
	"sync"
)

func baseNTPClients() map[string]NTPClient {
	return map[string]NTPClient{
		"chrony":            {CheckExe: "chronyd", ConfPath: "/etc/chrony.conf", Packages: []string{"chrony"}, Service: "chrony", Template: "chrony.conf.{distro}"},
		"ntp":               {CheckExe: "ntpd", ConfPath: "/etc/ntp.conf", Packages: []string{"ntpsec"}, Service: "ntp", Template: "ntp.conf.{distro}"},
		"ntpdate":           {CheckExe: "ntpdate", ConfPath: "/etc/ntp.conf", Packages: []string{"ntpdate"}, Service: "ntpdate", Template: "ntp.conf.{distro}"},
		"openntpd":          {CheckExe: "ntpd", ConfPath: "/etc/ntpd.conf", Packages: []string{}, Service: "ntpd", Template: "ntpd.conf.{distro}"},
		"systemd-timesyncd": {CheckExe: "/lib/systemd/systemd-timesyncd", ConfPath: "/etc/systemd/timesyncd.conf.d/cloud-init.conf", Packages: []string{}, Service: "systemd-timesyncd", Template: "timesyncd.conf"},
	}
}

// ntpChange is a distro's change to one client; empty fields keep the base.
type ntpChange struct {
	checkExe, confPath, service, template string
	packages                              []string
	noPackages                            bool
}

const usrTimesyncd = "/usr/lib/systemd/systemd-timesyncd"

var (
	chronyd        = ntpChange{service: "chronyd"}
	ntpdEtc        = ntpChange{confPath: "/etc/ntp.conf", service: "ntpd"}
	timesyncdUsr   = ntpChange{checkExe: usrTimesyncd}
	timesyncdUsrNC = ntpChange{checkExe: usrTimesyncd, confPath: "/etc/systemd/timesyncd.conf"}
	suseNTP        = sync.OnceValue(func() map[string]ntpChange {
		return map[string]ntpChange{"chrony": chronyd, "ntp": ntpdEtc, "systemd-timesyncd": timesyncdUsr}
	})
	rhelNTP = sync.OnceValue(func() map[string]ntpChange {
		return map[string]ntpChange{"ntp": {service: "ntpd"}, "chrony": chronyd}
	})
)

var ntpChanges = sync.OnceValue(func() map[string]map[string]ntpChange {
	return map[string]map[string]ntpChange{
		"alpine": {
			"chrony": {confPath: "/etc/chrony/chrony.conf", service: "chronyd"},
			"ntp":    {confPath: "/etc/ntp.conf", service: "ntpd", noPackages: true},
		},
		"aosc":       {"systemd-timesyncd": timesyncdUsrNC},
		"azurelinux": {"chrony": chronyd, "systemd-timesyncd": timesyncdUsrNC},
		"centos":     {"ntp": {service: "ntpd"}, "chrony": chronyd},
		"debian":     {"chrony": {confPath: "/etc/chrony/chrony.conf"}},
		"freebsd": {
			"ntp":      {confPath: "/etc/ntp.conf", service: "ntpd", template: "ntp.conf.{distro}"},
			"chrony":   {confPath: "/usr/local/etc/chrony.conf", packages: []string{"chrony"}, service: "chronyd", template: "chrony.conf.{distro}"},
			"openntpd": {checkExe: "/usr/local/sbin/ntpd", confPath: "/usr/local/etc/ntp.conf", packages: []string{"openntpd"}, service: "openntpd", template: "ntpd.conf.openbsd"},
		},
		"mariner": {"chrony": chronyd, "systemd-timesyncd": timesyncdUsrNC},
		"openbsd": {"openntpd": {}},
		"openmandriva": {
			"chrony": chronyd, "ntp": ntpdEtc, "systemd-timesyncd": {checkExe: "/lib/systemd/systemd-timesyncd"},
		},
		"opensuse":        suseNTP(),
		"sles":            suseNTP(),
		"photon":          {"chrony": chronyd, "ntp": {service: "ntpd", confPath: "/etc/ntp.conf"}, "systemd-timesyncd": timesyncdUsrNC},
		"raspberry-pi-os": {"systemd-timesyncd": timesyncdUsr},
		"rhel":            rhelNTP(),
		// cc_ntp shares these entries between class names.
		"almalinux": rhelNTP(), "cloudlinux": rhelNTP(), "rocky": rhelNTP(),
		"opensuse-microos": suseNTP(), "opensuse-tumbleweed": suseNTP(), "opensuse-leap": suseNTP(),
		"sle_hpc": suseNTP(), "sle-micro": suseNTP(),
		"ubuntu": {"chrony": {confPath: "/etc/chrony/chrony.conf"}},
	}
})

// ntpFacts is cc_ntp's view of a variant: the client table merged with the
// distro class's changes, and the class's client preference.
func ntpFacts(variant, id, versionID string) NTP {
	clients := baseNTPClients()
	for name, ch := range ntpChanges()[variantSystemInfo(variant).Distro] {
		c := clients[name]
		if ch.checkExe != "" {
			c.CheckExe = ch.checkExe
		}
		if ch.confPath != "" {
			c.ConfPath = ch.confPath
		}
		if ch.service != "" {
			c.Service = ch.service
		}
		if ch.template != "" {
			c.Template = ch.template
		}
		if ch.packages != nil {
			c.Packages = ch.packages
		}
		if ch.noPackages {
			c.Packages = []string{}
		}
		clients[name] = c
	}
	pref := []string{"chrony", "systemd-timesyncd", "ntp", "ntpdate"}
	switch variant {
	case "alpine":
		pref = []string{"chrony", "ntp"}
	case "suse": // by release: SLES 12 and older prefer ntp
		major, _, _ := strings.Cut(versionID, ".")
		if n, err := strconv.Atoi(major); err != nil || n >= 15 || strings.Contains(strings.ToLower(id), "micro") {
			pref = []string{"chrony", "systemd-timesyncd", "ntp"}
		} else {
			pref = []string{"ntp", "systemd-timesyncd", "chrony"}
		}
	}
	return NTP{Preferred: pref, Clients: clients}
}
