package initramfs

// Staging: copy a resolved closure into an image tree with the index files
// u-root's prober (and modprobe) read, in depmod's formats.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Stage copies the files of mods from kmodDir into
// destRoot/lib/modules/<version>/ under their relative paths (see
// Module.ImagePath; compressed modules are written decompressed), writes a
// trimmed modules.dep, modules.softdep, modules.alias and modules.order in
// depmod's format,
// copies modules.builtin and modules.builtin.modinfo, and writes
// destRoot/etc/cloudroot/modules.load.
func Stage(kmodDir, destRoot string, mods []Module, version string) error {
	if version == "" || strings.ContainsAny(version, "/\x00") || version == "." || version == ".." {
		return fmt.Errorf("staging modules: invalid kernel version %q", version)
	}
	dst := filepath.Join(destRoot, "lib", "modules", version)
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return fmt.Errorf("staging modules: %w", err)
	}

	staged := map[string]bool{} // relative paths
	var files []Module
	for _, m := range mods {
		if m.Builtin || m.Path == "" {
			continue
		}
		if !filepath.IsLocal(m.Path) {
			return fmt.Errorf("staging module %s: path %q leaves the module tree", m.Name, m.Path)
		}
		if err := stageModule(filepath.Join(kmodDir, m.Path), filepath.Join(dst, m.ImagePath())); err != nil {
			return fmt.Errorf("staging module %s: %w", m.Name, err)
		}
		staged[m.Path] = true
		files = append(files, m)
	}
	for _, m := range files {
		for _, d := range m.Deps {
			if !staged[d] {
				return fmt.Errorf("staging module %s: dependency %s is not in the module list", m.Name, d)
			}
		}
	}

	for _, name := range []string{"modules.builtin", "modules.builtin.modinfo"} {
		err := copyFile(filepath.Join(kmodDir, name), filepath.Join(dst, name), 0o644)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("staging %s: %w", name, err)
		}
	}

	order := stagedOrder(kmodDir, files)
	writers := []struct {
		path    string
		content string
	}{
		{filepath.Join(dst, "modules.order"), renderOrder(order)},
		{filepath.Join(dst, "modules.dep"), renderDep(order, files)},
		{filepath.Join(dst, "modules.softdep"), renderSoftdep(files)},
		{filepath.Join(dst, "modules.alias"), stagedAliases(kmodDir, files)},
		{filepath.Join(destRoot, ModulesLoadPath), renderLoad(mods)},
	}
	for _, w := range writers {
		if err := os.MkdirAll(filepath.Dir(w.path), 0o755); err != nil {
			return fmt.Errorf("staging modules: %w", err)
		}
		if err := os.WriteFile(w.path, []byte(w.content), 0o644); err != nil {
			return fmt.Errorf("staging modules: %w", err)
		}
	}
	return nil
}

// stagedOrder returns the staged (tree) paths in modules.order order (as
// depmod sorts modules.dep), followed by any not listed there, sorted.
func stagedOrder(kmodDir string, files []Module) []string {
	want := map[string]bool{}
	for _, m := range files {
		want[m.Path] = true
	}
	var out []string
	if f, err := os.Open(filepath.Join(kmodDir, "modules.order")); err == nil {
		_ = scanLines(f, func(_ int, p string) error {
			if want[p] {
				out = append(out, p)
				delete(want, p)
			}
			return nil
		})
		f.Close()
	}
	rest := make([]string, 0, len(want))
	for p := range want {
		rest = append(rest, p)
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// stagedAliases returns the lines of the tree's modules.alias that name a
// staged module, in file order: what /init's coldplug matches device
// modaliases against.
func stagedAliases(kmodDir string, files []Module) string {
	want := map[string]bool{}
	for _, m := range files {
		want[m.Name] = true
	}
	var b strings.Builder
	b.WriteString("# Aliases of the modules in this image (cloudroot-mkinitramfs).\n")
	if f, err := os.Open(filepath.Join(kmodDir, "modules.alias")); err == nil {
		_ = scanLines(f, func(_ int, text string) error {
			if fl := strings.Fields(text); len(fl) == 3 && fl[0] == "alias" && want[Normalize(fl[2])] {
				b.WriteString("alias " + fl[1] + " " + Normalize(fl[2]) + "\n")
			}
			return nil
		})
		f.Close()
	}
	return b.String()
}

func renderOrder(order []string) string {
	var b strings.Builder
	for _, p := range order {
		b.WriteString(imagePath(p) + "\n")
	}
	return b.String()
}

// renderDep writes "path: dep dep" lines (no blank lines: u-root's parser
// would choke on them).
func renderDep(order []string, files []Module) string {
	byPath := map[string]Module{}
	for _, m := range files {
		byPath[m.Path] = m
	}
	var b strings.Builder
	for _, p := range order {
		b.WriteString(imagePath(p) + ":")
		for _, d := range byPath[p].Deps {
			b.WriteString(" " + imagePath(d))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// renderSoftdep writes resolved softdeps (module names, not aliases, so no
// modules.alias is needed in the image).
func renderSoftdep(files []Module) string {
	var b strings.Builder
	b.WriteString("# Soft dependencies resolved by cloudroot-mkinitramfs.\n")
	for _, m := range files {
		if len(m.Pre) == 0 && len(m.Post) == 0 {
			continue
		}
		b.WriteString("softdep " + m.Name)
		if len(m.Pre) > 0 {
			b.WriteString(" pre: " + strings.Join(m.Pre, " "))
		}
		if len(m.Post) > 0 {
			b.WriteString(" post: " + strings.Join(m.Post, " "))
		}
		b.WriteString("\n")
	}
	return b.String()
}

func renderLoad(mods []Module) string {
	var b strings.Builder
	for _, m := range mods {
		if m.Load() {
			b.WriteString(m.Name + "\n")
		}
	}
	return b.String()
}

// stageModule writes the module file src to dst: a copy, or for a
// compressed module (.ko.xz, .ko.zst, .ko.gz) its ELF bytes, decompressed
// here once instead of by /init on every boot.
func stageModule(src, dst string) error {
	if _, ext, _ := strings.Cut(filepath.Base(src), ".ko"); !compressed(ext) {
		return copyFile(src, dst, 0o644)
	}
	raw, err := readModule(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(dst, raw, 0o644); err != nil {
		return err
	}
	return os.Chmod(dst, 0o644)
}

// copyFile copies src to dst (creating parent directories) with mode perm.
func copyFile(src, dst string, perm os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copying %s: %w", src, err)
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Chmod(dst, perm)
}
