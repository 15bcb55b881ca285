// Package debpkg lays out and builds cloudroot's Debian package,
// cloudroot_<version>_<arch>.deb: the tree `cloudroot install` plans for a
// systemd root (pkg/cli.PackageLayout: agent, cloud-init and cloud-id
// names, units, generator, Debian's default cloud.cfg), plus what keeps
// every kernel on a cloudroot initramfs for the life of the image — the
// initramfs builder (cloudroot-mkinitramfs, run -installed), the /init
// (cloudroot-init), the driver lists, /etc/cloudroot/initramfs.conf, the
// kernel hooks in /etc/kernel/postinst.d and postrm.d (run by every Debian
// kernel package, before zz-update-grub), a systemd kernel-install plugin
// and initramfs-tools' update-initramfs command with its dpkg trigger (for
// the packages that ask for a rebuild) — and the control data: the package Provides linux-initramfs-tool
// (what linux-image-* depends on, as dracut does) and Conflicts with
// initramfs-tools and cloud-init; its postinst enables the units and builds
// the initrds of the installed kernels, failing loudly when one fails.
//
// Tree computes the entries; Write puts them and DEBIAN/ into a staging
// directory; Build runs dpkg-deb on it.
package debpkg

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/md5"
	"embed"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"text/template"
	"time"

	"github.com/cloudroot/cloudroot/pkg/cli"
	"github.com/cloudroot/cloudroot/pkg/distro"
)

//go:embed files
var files embed.FS

// Installed paths of what the package adds to `cloudroot install`'s tree.
const (
	MkinitramfsPath   = "/usr/sbin/cloudroot-mkinitramfs"
	InitPath          = "/usr/lib/cloudroot/cloudroot-init"
	ListsDir          = "/usr/share/cloudroot/initramfs"
	InitramfsConfPath = "/etc/cloudroot/initramfs.conf"
	KernelPostinst    = "/etc/kernel/postinst.d/cloudroot"
	KernelPostrm      = "/etc/kernel/postrm.d/cloudroot"
	KernelInstall     = "/usr/lib/kernel/install.d/50-cloudroot.install"
	UpdateInitramfs   = "/usr/sbin/update-initramfs"
	DocDir            = "/usr/share/doc/cloudroot"
)

// Defaults of Config.
const (
	DefaultName       = "cloudroot"
	DefaultArch       = "amd64"
	DefaultMaintainer = "cloudroot developers <cloudroot@cloudroot.invalid>"
)

// Config says what goes into the package. Front (the /usr/bin/cloudroot of
// cmds/cloudroot), Agent (the full agent, cmds/cloudroot-agent), Init and
// Mkinitramfs are the static binaries' paths; an empty Front installs the
// Agent in both places (it serves every command itself); Lists holds drivers.txt and profiles/*.txt
// (the source tree's initramfs/ directory).
type Config struct {
	Version     string // default: pkg/cli.Version with "-" as "+"
	Arch        string
	Maintainer  string
	Date        time.Time // the changelog's date (default: the Unix epoch)
	Front       string
	Agent       string
	Init        string
	Mkinitramfs string
	Lists       fs.FS
}

// Entry is one file or symlink of the package tree.
type Entry = cli.PackageEntry

// Package is a laid-out package: its tree, units to enable and control data.
type Package struct {
	Config
	Entries   []Entry
	Units     []string
	Conffiles []string
}

func (c *Config) defaults() {
	if c.Version == "" {
		c.Version = strings.ReplaceAll(cli.Version, "-", "+")
	}
	if c.Arch == "" {
		c.Arch = DefaultArch
	}
	if c.Maintainer == "" {
		c.Maintainer = DefaultMaintainer
	}
	if c.Date.IsZero() {
		c.Date = time.Unix(0, 0).UTC()
	}
}

// Tree lays out the package of c.
func Tree(c Config) (*Package, error) {
	c.defaults()
	read := func(what, p string) ([]byte, error) {
		if p == "" {
			return nil, fmt.Errorf("no %s given", what)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("reading the %s: %w", what, err)
		}
		return b, nil
	}
	agent, err := read("agent", c.Agent)
	if err != nil {
		return nil, err
	}
	front := agent
	if c.Front != "" {
		if front, err = read("front binary", c.Front); err != nil {
			return nil, err
		}
	}
	initBin, err := read("initramfs /init (cloudroot-init)", c.Init)
	if err != nil {
		return nil, err
	}
	mk, err := read("initramfs builder (cloudroot-mkinitramfs)", c.Mkinitramfs)
	if err != nil {
		return nil, err
	}
	// Debian's default cloud.cfg, as `cloudroot install` writes it into a
	// Debian root.
	info := distro.ParseOSRelease([]byte("ID=debian\nVERSION_ID=\"12\"\n"))
	cfg, err := distro.DefaultCloudConfig(info)
	if err != nil {
		return nil, fmt.Errorf("rendering Debian's default cloud.cfg: %w", err)
	}
	entries, units, err := cli.PackageLayoutOf(cli.Binaries{Front: front, Agent: agent}, cfg, info.Variant())
	if err != nil {
		return nil, err
	}
	p := &Package{Config: c, Entries: entries, Units: units}
	add := func(path string, data []byte, mode fs.FileMode, why string) {
		p.Entries = append(p.Entries, Entry{Path: path, Data: data, Mode: mode, Why: why})
	}
	embedded := func(name string) []byte {
		b, err := files.ReadFile("files/" + name)
		if err != nil {
			panic(err) // the embedded tree is part of the binary
		}
		return b
	}
	add(MkinitramfsPath, mk, 0o755, "the initramfs builder")
	add(InitPath, initBin, 0o755, "the initramfs /init")
	lists, err := fs.Glob(c.Lists, "profiles/*.txt")
	if err != nil || len(lists) == 0 {
		return nil, fmt.Errorf("no driver profiles (profiles/*.txt) in the lists: %v", err)
	}
	for _, l := range append([]string{"drivers.txt"}, lists...) {
		b, err := fs.ReadFile(c.Lists, l)
		if err != nil {
			return nil, fmt.Errorf("reading driver list %s: %w", l, err)
		}
		add(path.Join(ListsDir, l), b, 0o644, "driver list")
	}
	add(InitramfsConfPath, embedded("initramfs.conf"), 0o644, "the initramfs's profile")
	add(KernelPostinst, embedded("kernel-postinst"), 0o755, "kernel hook: build the initrd")
	add(KernelPostrm, embedded("kernel-postrm"), 0o755, "kernel hook: remove the initrd")
	add(KernelInstall, embedded("kernel-install"), 0o755, "kernel-install plugin")
	add(UpdateInitramfs, embedded("update-initramfs"), 0o755, "initramfs-tools' command, building cloudroot initrds")
	add(path.Join(DocDir, "copyright"), embedded("copyright"), 0o644, "copyright")
	add(path.Join(DocDir, "changelog.gz"), changelog(c), 0o644, "changelog")

	// Symlinks within one top-level directory are relative (Debian policy 10.5).
	for i, e := range p.Entries {
		if e.Link != "" && path.IsAbs(e.Link) {
			rel, err := filepath.Rel(path.Dir(e.Path), e.Link)
			if err != nil {
				return nil, fmt.Errorf("link %s -> %s: %w", e.Path, e.Link, err)
			}
			p.Entries[i].Link = rel
		}
		if e.Link == "" && strings.HasPrefix(e.Path, "/etc/") {
			p.Conffiles = append(p.Conffiles, e.Path)
		}
	}
	slices.SortFunc(p.Entries, func(a, b Entry) int { return strings.Compare(a.Path, b.Path) })
	slices.Sort(p.Conffiles)
	return p, nil
}

// changelog is the native package's changelog, compressed as Debian policy
// wants it (gzip -9n: no name, no time).
func changelog(c Config) []byte {
	text := fmt.Sprintf("%s (%s) unstable; urgency=medium\n\n  * Built from the cloudroot source tree (pkg/debpkg).\n\n -- %s  %s\n",
		DefaultName, c.Version, c.Maintainer, c.Date.UTC().Format(time.RFC1123Z))
	var b bytes.Buffer
	z, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	z.Write([]byte(text))
	z.Close()
	return b.Bytes()
}

// Control is the DEBIAN/control text for installedKiB of files.
func (p *Package) Control(installedKiB int64) string {
	return fmt.Sprintf(`Package: %s
Version: %s
Architecture: %s
Maintainer: %s
Installed-Size: %d
Provides: linux-initramfs-tool
Conflicts: cloud-init, initramfs-tools, linux-initramfs-tool
Replaces: cloud-init, initramfs-tools
Section: admin
Priority: optional
Description: cloud-init rebuilt in Go around an initramfs
 cloudroot provisions a cloud instance from cloud-init's inputs (cloud.cfg,
 user-data, network-config, the datasources) before the root filesystem
 starts: its early stages run in the initramfs, its late stages in a small
 static agent that also answers as cloud-init.
 .
 The package replaces cloud-init and the initramfs tool: its kernel hooks
 build a cloudroot initramfs for every installed kernel
 (/boot/initrd.img-VERSION), with the driver profile of
 /etc/cloudroot/initramfs.conf.
`, DefaultName, p.Version, p.Arch, p.Maintainer, installedKiB)
}

func (p *Package) script(name string) ([]byte, error) {
	t, err := template.New(name).ParseFS(files, "files/"+name+".tmpl")
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", name, err)
	}
	var b bytes.Buffer
	if err := t.ExecuteTemplate(&b, name+".tmpl", p); err != nil {
		return nil, fmt.Errorf("rendering %s: %w", name, err)
	}
	return b.Bytes(), nil
}

// Write puts the package tree and its DEBIAN/ directory into dir (which
// must not exist or be empty). Modes are set explicitly: 0755 directories,
// the entries' own modes.
func (p *Package) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var sums strings.Builder
	var size int64
	for _, e := range p.Entries {
		dst := filepath.Join(dir, e.Path)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if e.Link != "" {
			if err := os.Symlink(e.Link, dst); err != nil {
				return fmt.Errorf("linking %s: %w", e.Path, err)
			}
			continue
		}
		if err := os.WriteFile(dst, e.Data, e.Mode); err != nil {
			return fmt.Errorf("writing %s: %w", e.Path, err)
		}
		if err := os.Chmod(dst, e.Mode); err != nil {
			return err
		}
		size += int64(len(e.Data))
		fmt.Fprintf(&sums, "%x  %s\n", md5.Sum(e.Data), strings.TrimPrefix(e.Path, "/"))
	}
	// Directories 0755 whatever the umask.
	if err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			size += 4096
			return os.Chmod(p, 0o755)
		}
		return nil
	}); err != nil {
		return err
	}
	deb := filepath.Join(dir, "DEBIAN")
	if err := os.Mkdir(deb, 0o755); err != nil {
		return err
	}
	postinst, err := p.script("postinst")
	if err != nil {
		return err
	}
	postrm, err := p.script("postrm")
	if err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		data []byte
		mode fs.FileMode
	}{
		{"control", []byte(p.Control((size + 1023) / 1024)), 0o644},
		{"conffiles", []byte(strings.Join(p.Conffiles, "\n") + "\n"), 0o644},
		{"md5sums", []byte(sums.String()), 0o644},
		{"postinst", postinst, 0o755},
		{"postrm", postrm, 0o755},
		{"triggers", []byte(Triggers), 0o644},
	} {
		if err := os.WriteFile(filepath.Join(deb, f.name), f.data, f.mode); err != nil {
			return fmt.Errorf("writing DEBIAN/%s: %w", f.name, err)
		}
		if err := os.Chmod(filepath.Join(deb, f.name), f.mode); err != nil {
			return err
		}
	}
	return nil
}

// Triggers is DEBIAN/triggers: the update-initramfs trigger that
// initramfs-tools and Debian's dracut are interested in, which packages
// activate when the initramfs should be rebuilt (await: they stay
// triggers-pending until the postinst has rebuilt the initrds).
const Triggers = "interest-await update-initramfs\n"

// FileName is the package's conventional file name.
func (p *Package) FileName() string {
	return fmt.Sprintf("%s_%s_%s.deb", DefaultName, p.Version, p.Arch)
}

// Build writes the package into the directory outDir with dpkg-deb (files
// owned by root, xz-compressed) and returns the .deb's path.
func (p *Package) Build(ctx context.Context, outDir string) (string, error) {
	stage, err := os.MkdirTemp(outDir, ".cloudroot-deb.")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(stage)
	root := filepath.Join(stage, "root")
	if err := p.Write(root); err != nil {
		return "", err
	}
	out := filepath.Join(outDir, p.FileName())
	cmd := exec.CommandContext(ctx, "dpkg-deb", "--root-owner-group", "-Zxz", "--build", root, out+".tmp")
	cmd.Env = append(os.Environ(), "SOURCE_DATE_EPOCH="+fmt.Sprint(p.Date.Unix()))
	if b, err := cmd.CombinedOutput(); err != nil {
		os.Remove(out + ".tmp")
		return "", fmt.Errorf("dpkg-deb --build: %w: %s", err, bytes.TrimSpace(b))
	}
	if err := os.Rename(out+".tmp", out); err != nil {
		return "", err
	}
	return out, nil
}
