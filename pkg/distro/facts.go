package distro

// Facts: what cloud-init's distro classes (cloudinit/distros/*.py) and
// cc_ntp's distro table know about a distribution, as data, chosen from
// os-release. The variant (Variant) picks the distro class; the init system
// picks between a class's systemd and non-systemd behaviour (cloud-init asks
// the running system; cloudroot decides from the target — see DetectInit —
// or from the caller).

import (
	"path"
	"strings"
)

// Facts is everything distro-specific cloudroot knows about one target.
type Facts struct {
	ID        string `json:"id"`
	VersionID string `json:"version_id,omitempty"`
	Variant   string `json:"variant"`
	Family    string `json:"family"`
	Init      string `json:"init"`
	// SystemInfo is the system_info of the variant's default cloud.cfg:
	// distro class, default user, network preferences, ssh_svcname, paths.
	SystemInfo SystemInfo `json:"system_info"`
	// SSHService is the ssh daemon's service: ssh_svcname as the distro
	// class leaves it (SUSE's class makes it sshd.service under systemd).
	SSHService string `json:"ssh_service"`
	// PackageManager names the tool (Packages builds its commands).
	PackageManager string `json:"package_manager,omitempty"`
	// HostsTemplate is the /etc/cloud/templates/hosts.<name>.tmpl variant.
	HostsTemplate string `json:"hosts_template"`
	// LocalhostIP is the address update_etc_hosts' "localhost" mode binds
	// the hostname to (distro._get_localhost_ip).
	LocalhostIP string   `json:"localhost_ip"`
	Paths       Paths    `json:"paths"`
	Hostname    Hostname `json:"hostname"`
	Locale      Locale   `json:"locale"`
	Timezone    Timezone `json:"timezone"`
	Keyboard    Keyboard `json:"keyboard"`
	NTP         NTP      `json:"ntp"`
}

// Paths are files cloud-init edits whose place differs per distro.
type Paths struct {
	SSHDConfig string `json:"sshd_config"`
	// Sudoers is ci_sudoers_fn, the drop-in the default user's rule goes to.
	Sudoers    string `json:"sudoers"`
	SudoersDir string `json:"sudoers_dir"`
	Hosts      string `json:"hosts"`
	// UsrLibExec is where helper programs live (/usr/lib, /usr/libexec).
	UsrLibExec string `json:"usr_lib_exec"`
}

// Hostname is how the persistent hostname is stored.
type Hostname struct {
	// File holds the hostname.
	File string `json:"file"`
	// Format of File: "plain" (/etc/hostname), "sysconfig" (HOSTNAME= in a
	// shell-variable file), "confd" (hostname="NAME" in /etc/conf.d/hostname)
	// or "rc.conf" (hostname= in /etc/rc.conf).
	Format string `json:"format"`
	// Command, when set, is how cloud-init sets it on a running system
	// instead of writing File itself (hostnamectl writes /etc/hostname).
	Command []string `json:"command,omitempty"`
	// Transient sets the running hostname without persisting it.
	Transient []string `json:"transient"`
}

// Locale is how the system locale is configured.
type Locale struct {
	// Default is the locale assumed when none is configured.
	Default string `json:"default"`
	// File gets Key=<locale>, written by Commands or directly.
	File string `json:"file,omitempty"`
	Key  string `json:"key,omitempty"`
	// Gen is the locale.gen file naming locales to generate, if any.
	Gen string `json:"gen,omitempty"`
	// Write lists the files cloud-init writes, in order, before Commands
	// (Gen and/or File; Debian's update-locale writes File itself).
	Write []string `json:"write,omitempty"`
	// Commands run after Write, "%s" standing for the locale.
	Commands []Cmd `json:"commands,omitempty"`
}

// Timezone is how set_timezone works.
type Timezone struct {
	ZoneinfoDir string `json:"zoneinfo_dir"`
	// File gets the zone name (/etc/timezone), if the distro keeps one.
	File string `json:"file,omitempty"`
	// Localtime is linked (or copied, when Copy) to the zone's file.
	Localtime string `json:"localtime"`
	Copy      bool   `json:"copy,omitempty"`
	// Clock is a sysconfig file whose ZONE/TIMEZONE key gets the zone
	// (RHEL and SUSE without systemd).
	Clock    string `json:"clock,omitempty"`
	ClockKey string `json:"clock_key,omitempty"`
}

// Keyboard is how cc_keyboard sets the layout.
type Keyboard struct {
	// File is written with XKBMODEL/XKBLAYOUT/XKBVARIANT/XKBOPTIONS (Debian).
	File string `json:"file,omitempty"`
	// Command sets the layout; %layout %model %variant %options are filled in.
	Command []string `json:"command,omitempty"`
	// Restart is a service restarted afterwards.
	Restart string `json:"restart,omitempty"`
}

// NTP is cc_ntp's view of the distro.
type NTP struct {
	// Preferred is the client order ntp_client: auto tries.
	Preferred []string             `json:"preferred"`
	Clients   map[string]NTPClient `json:"clients"`
}

// NTPClient is one NTP client's configuration on this distro.
type NTPClient struct {
	CheckExe string   `json:"check_exe"`
	ConfPath string   `json:"confpath"`
	Packages []string `json:"packages"`
	Service  string   `json:"service_name"`
	Template string   `json:"template_name"`
}

// Facts is the distro's facts with the init system cloudroot assumes for
// it (DefaultInit); use FactsFor when the target's init is known.
func (in Info) Facts() Facts { return in.FactsFor(in.DefaultInit()) }

// DefaultInit is the init system a distro ships by default: OpenRC on
// Alpine and Gentoo, rc on the BSDs, SysV init on Devuan, systemd
// elsewhere.
func (in Info) DefaultInit() string {
	switch v := in.Variant(); {
	case v == "alpine" || v == "gentoo":
		return InitOpenRC
	case isBSD(v):
		return InitBSD
	case strings.EqualFold(in.ID, "devuan"):
		return InitSysVinit
	}
	return InitSystemd
}

// DetectInit says which init system a target root boots, from its files
// (has reports whether a path exists in the root): systemd when /sbin/init
// or /usr/sbin/init leads to systemd (or systemd is installed and there is
// no other init), OpenRC when openrc-init or /sbin/openrc is present, else
// the distro's default.
func (in Info) DetectInit(has func(string) bool, readlink func(string) (string, error)) string {
	for _, p := range []string{"/sbin/init", "/usr/sbin/init"} {
		if readlink != nil {
			if t, err := readlink(p); err == nil {
				switch b := path.Base(t); {
				case b == "systemd":
					return InitSystemd
				case strings.HasPrefix(b, "openrc"):
					return InitOpenRC
				}
			}
		}
	}
	switch {
	case has("/sbin/openrc") || has("/usr/sbin/openrc") || has("/sbin/openrc-init"):
		return InitOpenRC
	case has("/usr/lib/systemd/systemd") || has("/lib/systemd/systemd"):
		return InitSystemd
	}
	return in.DefaultInit()
}

// Packages builds the distro's package commands (c.Distro.Packages() in a
// module), or is nil where cloudroot knows no package manager.
func (in Info) Packages() PackageManager {
	return packageManager(in.Variant(), variantFamily(in.Variant()), in.VersionID)
}

// Packages builds the distro's package commands, or is nil where cloudroot
// knows no package manager.
func (f Facts) Packages() PackageManager {
	return packageManager(f.Variant, f.Family, f.VersionID)
}

// Services builds the distro's service commands.
func (f Facts) Services() ServiceManager { return serviceManager(f.Variant, f.Init) }

// FactsFor is the distro's facts under the given init system.
func (in Info) FactsFor(init string) Facts {
	v := in.Variant()
	systemd := init == InitSystemd
	f := Facts{
		ID:            in.ID,
		VersionID:     in.VersionID,
		Variant:       v,
		Family:        variantFamily(v),
		Init:          init,
		SystemInfo:    variantSystemInfo(v),
		HostsTemplate: in.HostsTemplateName(),
		LocalhostIP:   "127.0.0.1",
		Paths: Paths{
			SSHDConfig: "/etc/ssh/sshd_config",
			Sudoers:    "/etc/sudoers.d/90-cloud-init-users",
			SudoersDir: "/etc/sudoers.d",
			Hosts:      "/etc/hosts",
			UsrLibExec: "/usr/lib",
		},
		Hostname: Hostname{File: "/etc/hostname", Format: "plain", Transient: []string{"hostname", "%s"}},
		Locale:   Locale{Default: "en_US.UTF-8"},
		Timezone: Timezone{ZoneinfoDir: "/usr/share/zoneinfo", File: "/etc/timezone", Localtime: "/etc/localtime"},
		NTP:      ntpFacts(v, in.ID, in.VersionID),
	}
	f.SSHService = f.SystemInfo.SSHService
	if f.SSHService == "" {
		f.SSHService = "sshd"
	}
	if pm := f.Packages(); pm != nil {
		f.PackageManager = pm.Name()
	}
	if systemd {
		f.Keyboard.Command = []string{"localectl", "set-x11-keymap", "%layout", "%model", "%variant", "%options"}
	}
	switch f.Family {
	case "debian":
		f.LocalhostIP = "127.0.1.1"
		cEnv := []string{"LANGUAGE=C.UTF-8", "LANG=C.UTF-8", "LC_ALL=C.UTF-8"}
		f.Locale = Locale{Default: "C.UTF-8", File: "/etc/default/locale", Key: "LANG", Gen: "/etc/locale.gen",
			Write: []string{"/etc/locale.gen"},
			Commands: []Cmd{
				{Env: cEnv, Argv: []string{"locale-gen", "--keep-existing"}},
				{Env: cEnv, Argv: []string{"update-locale", "--locale-file=/etc/default/locale", "LANG=%s"}},
			}}
		f.Keyboard = Keyboard{File: "/etc/default/keyboard", Restart: "console-setup"}
	case "redhat":
		f.Paths.UsrLibExec = "/usr/libexec"
		f.Locale.Key = "LANG"
		f.Locale.File = "/etc/sysconfig/i18n"
		f.Timezone.File = ""
		if systemd {
			f.Locale.File = "/etc/locale.conf"
			f.Hostname.Command = []string{"hostnamectl", "set-hostname", "%s"}
		}
		f.Locale.Write = []string{f.Locale.File}
		if !systemd {
			f.Hostname = Hostname{File: "/etc/sysconfig/network", Format: "sysconfig", Transient: f.Hostname.Transient}
			f.Timezone.Copy = true
			f.Timezone.Clock, f.Timezone.ClockKey = "/etc/sysconfig/clock", "ZONE"
		}
		if v == "photon" || v == "mariner" {
			// Photon's class (Mariner's parent) is not RHEL's: it keeps
			// /etc/timezone and /usr/lib and always uses hostnamectl.
			f.Paths.UsrLibExec = "/usr/lib"
			f.Timezone = Timezone{ZoneinfoDir: "/usr/share/zoneinfo", File: "/etc/timezone", Localtime: "/etc/localtime"}
			f.Locale.File = "/etc/locale.conf"
			f.Locale.Write = []string{f.Locale.File}
			f.Locale.Commands = []Cmd{{Argv: []string{"systemctl", "restart", "systemd-localed"}}}
			f.Hostname = Hostname{File: "/etc/hostname", Format: "plain",
				Command: []string{"hostnamectl", "set-hostname", "%s"}, Transient: f.Hostname.Transient}
		}
		if v == "photon" {
			f.LocalhostIP = "127.0.1.1"
		}
	case "suse":
		f.LocalhostIP = "127.0.1.1"
		f.SSHService = "sshd"
		if systemd {
			f.SSHService = "sshd.service"
		}
		f.Timezone.File = ""
		if systemd {
			f.Locale.File, f.Locale.Key = "/etc/locale.conf", "LANG"
			f.Locale.Write = []string{f.Locale.File}
			f.Hostname.Command = []string{"hostnamectl", "set-hostname", "%s"}
		} else {
			f.Locale.File, f.Locale.Key = "/etc/sysconfig/language", "RC_LANG"
			f.Locale.Write = []string{f.Locale.File}
			f.Hostname = Hostname{File: "/etc/HOSTNAME", Format: "plain", Transient: f.Hostname.Transient}
			f.Timezone.Copy = true
			f.Timezone.Clock, f.Timezone.ClockKey = "/etc/sysconfig/clock", "TIMEZONE"
		}
	case "alpine":
		f.LocalhostIP = "127.0.1.1"
		f.Locale = Locale{Default: "C.UTF-8", File: "/etc/profile.d/50-cloud-init-locale.sh", Key: "LANG",
			Write: []string{"/etc/profile.d/50-cloud-init-locale.sh"}}
		f.Keyboard = Keyboard{Command: []string{"setup-keymap", "%layout", "%variant"}}
	case "arch":
		f.Locale.Gen, f.Locale.Write = "/etc/locale.gen", []string{"/etc/locale.gen"}
		f.Locale.Commands = []Cmd{{Argv: []string{"locale-gen"}}, {Argv: []string{"localectl", "set-locale", "%s"}}}
		f.Hostname.Transient = []string{"hostnamectl", "--transient", "set-hostname", "%s"}
	case "gentoo":
		f.Locale.Gen, f.Locale.Write = "/etc/locale.gen", []string{"/etc/locale.gen"}
		// cloud-init's Gentoo class generates the locales listed in Gen and
		// selects its default, whatever locale was asked for.
		f.Locale.Commands = []Cmd{{Argv: []string{"locale-gen"}}, {Argv: []string{"eselect", "locale", "set", "en_US.UTF-8"}}}
		if !systemd {
			f.Hostname = Hostname{File: "/etc/conf.d/hostname", Format: "confd", Transient: f.Hostname.Transient}
		}
	case "freebsd", "netbsd", "openbsd":
		f.Locale = Locale{Default: "C.UTF-8"} // cloud-init cannot set it there
		f.Hostname = Hostname{File: "/etc/rc.conf", Format: "rc.conf", Transient: f.Hostname.Transient}
		if v == "freebsd" {
			f.Paths.Sudoers = "/usr/local/etc/sudoers.d/90-cloud-init-users"
			f.Paths.SudoersDir = "/usr/local/etc/sudoers.d"
			f.Paths.UsrLibExec = "/usr/local/lib"
		}
	}
	return f
}

// SetHostname is the command sequence that sets name persistently where
// the distro uses a command for it (Hostname.Command); nil means: write
// Hostname.File in Hostname.Format.
func (f Facts) SetHostname(name string) []Cmd {
	if len(f.Hostname.Command) == 0 {
		return nil
	}
	return []Cmd{{Argv: fill(f.Hostname.Command, map[string]string{"%s": name})}}
}

// SetLocale is what applying locale takes: the files to write first
// (Locale.Write: the locale.gen entry, the locale file) and the commands
// to run after. Debian's C and POSIX locales need no generation, as
// cloud-init skips it for them.
func (f Facts) SetLocale(locale string) (write []string, cmds []Cmd) {
	skipGen := false
	if f.Family == "debian" {
		switch strings.ToLower(locale) {
		case "c", "c.utf-8", "c.utf8", "posix":
			skipGen = true
		}
	}
	for _, p := range f.Locale.Write {
		if !(skipGen && p == f.Locale.Gen) {
			write = append(write, p)
		}
	}
	for _, c := range f.Locale.Commands {
		if skipGen && c.Argv[0] == "locale-gen" {
			continue
		}
		cmds = append(cmds, Cmd{Env: c.Env, Argv: fill(c.Argv, map[string]string{"%s": locale})})
	}
	return write, cmds
}

// Content is the hostname file's text for name, in the file's format.
func (h Hostname) Content(name string) string {
	switch h.Format {
	case "sysconfig":
		return "HOSTNAME=" + name + "\n"
	case "confd":
		return "hostname=\"" + name + "\"\n"
	case "rc.conf":
		return "hostname=\"" + name + "\"\n"
	}
	return name + "\n"
}

// SetKeyboard is the command sequence cc_keyboard runs (after writing
// Keyboard.File, if any).
func (f Facts) SetKeyboard(layout, model, variant, options string) []Cmd {
	var out []Cmd
	if len(f.Keyboard.Command) > 0 {
		out = append(out, Cmd{Argv: fill(f.Keyboard.Command, map[string]string{
			"%layout": layout, "%model": model, "%variant": variant, "%options": options})})
	}
	if f.Keyboard.Restart != "" {
		if c, err := f.Services().Command(ActionRestart, f.Keyboard.Restart); err == nil {
			out = append(out, c)
		}
	}
	return out
}

func fill(argv []string, vals map[string]string) []string {
	out := make([]string, 0, len(argv))
	for _, a := range argv {
		if v, ok := vals[a]; ok {
			a = v
		} else {
			for k, v := range vals {
				a = strings.ReplaceAll(a, k, v)
			}
		}
		out = append(out, a)
	}
	return out
}
