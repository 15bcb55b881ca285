package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Seed kinds for MakeSeed.
const (
	SeedISO  = "iso"  // ISO9660 + Rock Ridge + Joliet, volume id "cidata"
	SeedVFAT = "vfat" // FAT, label "CIDATA"
	// SeedISOLabelPrefix + LABEL is an ISO9660 volume with that volume id
	// (e.g. Azure's provisioning media holding ovf-env.xml).
	SeedISOLabelPrefix = "iso:"
	// SeedConfigDrive is an OpenStack config drive: ISO9660 with volume id
	// "config-2" (files as openstack/latest/meta_data.json, ...).
	SeedConfigDrive = SeedISOLabelPrefix + "config-2"
)

// MakeSeed writes a seed holding files (name -> content, e.g. "meta-data",
// "user-data") into dir and returns its path: dir/seed.iso for the ISO
// kinds (SeedISO, SeedISOLabelPrefix+LABEL, SeedConfigDrive), dir/seed.img
// for SeedVFAT. An existing seed is replaced.
func MakeSeed(dir string, files map[string][]byte, kind string) (string, error) {
	ctx := context.Background()
	stage, err := os.MkdirTemp(dir, "seed-src-")
	if err != nil {
		return "", fmt.Errorf("making seed: %w", err)
	}
	defer os.RemoveAll(stage)
	names := make([]string, 0, len(files))
	for name, data := range files {
		if name == "" || strings.Contains(name, "..") || filepath.IsAbs(name) {
			return "", fmt.Errorf("making seed: bad file name %q", name)
		}
		p := filepath.Join(stage, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return "", fmt.Errorf("making seed: %w", err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return "", fmt.Errorf("making seed: %w", err)
		}
		names = append(names, name)
	}
	sort.Strings(names)
	label := "cidata"
	if l, ok := strings.CutPrefix(kind, SeedISOLabelPrefix); ok && l != "" {
		kind, label = SeedISO, l
	}
	switch kind {
	case SeedISO:
		out := filepath.Join(dir, "seed.iso")
		_ = os.Remove(out)
		if HaveTools("genisoimage") == nil {
			_, _, err = runTool(ctx, nil, nil, "genisoimage", "-quiet", "-V", label, "-r", "-J", "-o", out, stage)
		} else {
			_, _, err = runTool(ctx, nil, nil, "xorriso", "-as", "mkisofs", "-quiet", "-V", label, "-r", "-J", "-o", out, stage)
		}
		if err != nil {
			return "", fmt.Errorf("making seed ISO: %w", err)
		}
		return out, nil
	case SeedVFAT:
		out := filepath.Join(dir, "seed.img")
		_ = os.Remove(out)
		if _, _, err := runTool(ctx, nil, nil, "mkfs.vfat", "-n", "CIDATA", "-C", out, "2048"); err != nil {
			return "", fmt.Errorf("making seed FAT: %w", err)
		}
		env := []string{"MTOOLS_SKIP_CHECK=1"}
		for _, name := range names {
			// Subdirectories first (mmd), then the file.
			parts := strings.Split(filepath.ToSlash(name), "/")
			for i := 1; i < len(parts); i++ {
				d := "::/" + strings.Join(parts[:i], "/")
				_, _, _ = runTool(ctx, nil, env, "mmd", "-i", out, d)
			}
			if _, _, err := runTool(ctx, nil, env, "mcopy", "-o", "-i", out, filepath.Join(stage, name), "::/"+filepath.ToSlash(name)); err != nil {
				return "", fmt.Errorf("making seed FAT: %w", err)
			}
		}
		return out, nil
	}
	return "", fmt.Errorf("making seed: unknown kind %q (want %q, %q or %qLABEL)", kind, SeedISO, SeedVFAT, SeedISOLabelPrefix)
}

// SeedFiles reads the regular files of a seed directory (meta-data,
// user-data, vendor-data, network-config...) into the form MakeSeed takes.
func SeedFiles(dir string) (map[string][]byte, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading seed directory: %w", err)
	}
	files := map[string][]byte{}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("reading seed directory: %w", err)
		}
		files[e.Name()] = b
	}
	if _, ok := files["meta-data"]; !ok {
		return nil, fmt.Errorf("reading seed directory %s: no meta-data file", dir)
	}
	return files, nil
}

// CopyDisk copies a disk image sparsely (holes stay holes), replacing dst.
func CopyDisk(src, dst string) error {
	_ = os.Remove(dst)
	if _, _, err := runTool(context.Background(), nil, nil, "cp", "--sparse=always", src, dst); err != nil {
		return fmt.Errorf("copying disk: %w", err)
	}
	return nil
}
