package distro

// Package managers. Each builds the command sequences cloud-init's distro
// classes run for cc_package_update_upgrade_install and friends:
//
//	Update   update_package_sources (apt-get update, dnf makecache, zypper refresh, ...)
//	Upgrade  package_command("upgrade")
//	Install  install_packages(pkglist), including the source refresh the
//	         distro does first (apt, apk, pacman, emerge, pkg)
//
// Versioned entries ([name, version] in cloud-config) are joined the way
// each distro joins them: name=version for apt, name-version elsewhere.
// Building is pure: callers run the commands through their runner.

import (
	"errors"
	"fmt"
	"strings"
)

// Cmd is one command: argv and the environment variables it adds.
type Cmd struct {
	Env  []string `json:"env,omitempty"` // KEY=value, added to the caller's environment
	Argv []string `json:"argv"`
}

// Package is one entry of a package list: a name and an optional version.
type Package struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

// PackageManager builds package commands for one distro.
type PackageManager interface {
	// Name is the tool: apt, dnf, yum, zypper, apk, pacman, emerge, pkg.
	Name() string
	Update() []Cmd
	Upgrade() []Cmd
	Install(pkgs []Package) []Cmd
}

// ErrBadPackage is a package-list entry that is neither a name nor a
// [name] / [name, version] list.
var ErrBadPackage = errors.New("invalid package entry")

// ParsePackages reads a cloud-config package list (cloud-init's
// expand_package_list input): names, and [name] or [name, version] lists;
// an empty version means none. A mapping (apt:/snap: sections) is not an
// entry: the caller splits those first.
func ParsePackages(v any) ([]Package, error) {
	var l []any
	switch t := v.(type) {
	case nil:
		return nil, nil
	case []any:
		l = t
	default:
		l = []any{t}
	}
	var out []Package
	var errs []error
	for i, e := range l {
		switch t := e.(type) {
		case string:
			out = append(out, Package{Name: t})
		case []any:
			if len(t) < 1 || len(t) > 2 {
				errs = append(errs, fmt.Errorf("%w %d: a [name, version] list has %d items", ErrBadPackage, i, len(t)))
				continue
			}
			p := Package{Name: fmt.Sprint(t[0])}
			if len(t) == 2 && t[1] != nil {
				p.Version = fmt.Sprint(t[1])
			}
			out = append(out, p)
		default:
			errs = append(errs, fmt.Errorf("%w %d: %T", ErrBadPackage, i, e))
		}
	}
	return out, errors.Join(errs...)
}

func expand(pkgs []Package, sep string) []string {
	out := make([]string, 0, len(pkgs))
	for _, p := range pkgs {
		if p.Version != "" {
			out = append(out, p.Name+sep+p.Version)
		} else {
			out = append(out, p.Name)
		}
	}
	return out
}

func cmd(env []string, argv ...[]string) Cmd {
	var a []string
	for _, p := range argv {
		a = append(a, p...)
	}
	return Cmd{Env: env, Argv: a}
}

// AptCommand is cloud-init's APT_GET_COMMAND.
var AptCommand = []string{"apt-get", "--option=Dpkg::Options::=--force-confold",
	"--option=Dpkg::options::=--force-unsafe-io", "--assume-yes", "--quiet"}

// Apt is Debian's and Ubuntu's apt-get, configured as cloud-init's
// apt_get_wrapper, apt_get_command and apt_get_upgrade_subcommand keys do.
// The zero value is cloud-init's default (no wrapper, dist-upgrade).
type Apt struct {
	Wrapper           []string // apt_get_wrapper.command when enabled (e.g. eatmydata)
	Command           []string // apt_get_command; AptCommand when empty
	UpgradeSubcommand string   // apt_get_upgrade_subcommand; "dist-upgrade" when empty
}

var _ PackageManager = Apt{}

func (Apt) Name() string { return "apt" }

var aptEnv = []string{"DEBIAN_FRONTEND=noninteractive"}

func (a Apt) base() []string {
	c := a.Command
	if len(c) == 0 {
		c = AptCommand
	}
	return append(append([]string(nil), a.Wrapper...), c...)
}

func (a Apt) Update() []Cmd { return []Cmd{cmd(aptEnv, a.base(), []string{"update"})} }

func (a Apt) Upgrade() []Cmd {
	sub := a.UpgradeSubcommand
	if sub == "" {
		sub = "dist-upgrade"
	}
	return []Cmd{cmd(aptEnv, a.base(), []string{sub})}
}

// Install refreshes the sources, then installs. (cloud-init also drops
// names `apt-cache pkgnames` does not know; that needs the target's apt.)
func (a Apt) Install(pkgs []Package) []Cmd {
	return append(a.Update(), cmd(aptEnv, a.base(), []string{"install"}, expand(pkgs, "=")))
}

// Dnf is the RHEL family's dnf; Tool "yum" (with -t) on releases before
// dnf, "tdnf" on Photon and Mariner. NoUpdate: the distro refreshes its
// sources itself (cloud-init's Amazon class does nothing for an update).
type Dnf struct {
	Tool     string
	NoUpdate bool
}

var _ PackageManager = Dnf{}

func (d Dnf) Name() string {
	if d.Tool == "" {
		return "dnf"
	}
	return d.Tool
}

func (d Dnf) base() []string {
	if d.Tool == "yum" {
		return []string{"yum", "-t", "-y"}
	}
	return []string{d.Name(), "-y"}
}

func (d Dnf) Update() []Cmd {
	if d.NoUpdate {
		return nil
	}
	return []Cmd{cmd(nil, d.base(), []string{"makecache"})}
}
func (d Dnf) Upgrade() []Cmd { return []Cmd{cmd(nil, d.base(), []string{"upgrade"})} }
func (d Dnf) Install(pkgs []Package) []Cmd {
	return []Cmd{cmd(nil, d.base(), []string{"install"}, expand(pkgs, "-"))}
}

// Zypper is SUSE's zypper. (cloud-init switches to transactional-update on
// read-only btrfs roots; that is not modelled.)
type Zypper struct{}

var _ PackageManager = Zypper{}

var zypperBase = []string{"zypper", "--non-interactive"}

func (Zypper) Name() string   { return "zypper" }
func (Zypper) Update() []Cmd  { return []Cmd{cmd(nil, zypperBase, []string{"refresh"})} }
func (Zypper) Upgrade() []Cmd { return []Cmd{cmd(nil, zypperBase, []string{"update"})} }
func (Zypper) Install(pkgs []Package) []Cmd {
	return []Cmd{cmd(nil, zypperBase, []string{"install", "--auto-agree-with-licenses"}, expand(pkgs, "-"))}
}

// Apk is Alpine's apk.
type Apk struct{}

var _ PackageManager = Apk{}

var apkBase = []string{"apk", "--quiet"}

func (Apk) Name() string  { return "apk" }
func (Apk) Update() []Cmd { return []Cmd{cmd(nil, apkBase, []string{"update"})} }
func (Apk) Upgrade() []Cmd {
	return []Cmd{cmd(nil, apkBase, []string{"upgrade", "--update-cache", "--available"})}
}
func (a Apk) Install(pkgs []Package) []Cmd {
	return append(a.Update(), cmd(nil, apkBase, []string{"add"}, expand(pkgs, "-")))
}

// Pacman is Arch's pacman.
type Pacman struct{}

var _ PackageManager = Pacman{}

var pacmanBase = []string{"pacman", "-Sy", "--quiet", "--noconfirm"}

func (Pacman) Name() string   { return "pacman" }
func (Pacman) Update() []Cmd  { return []Cmd{cmd(nil, pacmanBase, []string{"-y"})} }
func (Pacman) Upgrade() []Cmd { return []Cmd{cmd(nil, pacmanBase, []string{"-u"})} }
func (p Pacman) Install(pkgs []Package) []Cmd {
	return append(p.Update(), cmd(nil, pacmanBase, expand(pkgs, "-")))
}

// Emerge is Gentoo's emerge.
type Emerge struct{}

var _ PackageManager = Emerge{}

var emergeBase = []string{"emerge", "--quiet"}

func (Emerge) Name() string   { return "emerge" }
func (Emerge) Update() []Cmd  { return []Cmd{cmd(nil, emergeBase, []string{"--sync"})} }
func (Emerge) Upgrade() []Cmd { return []Cmd{cmd(nil, emergeBase, []string{"--update", "world"})} }
func (e Emerge) Install(pkgs []Package) []Cmd {
	return append(e.Update(), cmd(nil, emergeBase, expand(pkgs, "-")))
}

// Pkg is FreeBSD's pkg.
type Pkg struct{}

var _ PackageManager = Pkg{}

var pkgEnv = []string{"ASSUME_ALWAYS_YES=YES"}

func (Pkg) Name() string   { return "pkg" }
func (Pkg) Update() []Cmd  { return []Cmd{cmd(pkgEnv, []string{"pkg", "update"})} }
func (Pkg) Upgrade() []Cmd { return []Cmd{cmd(pkgEnv, []string{"pkg", "upgrade"})} }
func (p Pkg) Install(pkgs []Package) []Cmd {
	return append(p.Update(), cmd(pkgEnv, []string{"pkg", "install"}, expand(pkgs, "-")))
}

// packageManager chooses the tool for a variant and release: nil where
// cloudroot knows none (AOSC's oma, the other BSDs). RHEL rebuilds before
// release 8 and Amazon Linux 2 get yum, as cloud-init's `which dnf` test
// gives on them.
func packageManager(variant, family, versionID string) PackageManager {
	switch family {
	case "debian":
		return Apt{}
	case "redhat":
		major, _, _ := strings.Cut(versionID, ".")
		switch {
		case variant == "photon" || variant == "mariner":
			return Dnf{Tool: "tdnf"}
		case variant == "amazon" && (major == "2" || major == "2018"):
			return Dnf{Tool: "yum", NoUpdate: true}
		case variant == "amazon":
			return Dnf{NoUpdate: true}
		case isRHEL(variant) && len(major) == 1 && major < "8":
			return Dnf{Tool: "yum"}
		}
		return Dnf{}
	case "suse":
		return Zypper{}
	case "alpine":
		return Apk{}
	case "arch":
		return Pacman{}
	case "gentoo":
		return Emerge{}
	case "freebsd":
		return Pkg{}
	}
	return nil
}
