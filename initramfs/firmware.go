package initramfs

// Firmware: the files a packed module declares (MODULE_FIRMWARE, the
// "firmware=" entries of its .modinfo section, what `modinfo -F firmware`
// prints) are copied from the build's firmware directory (Debian's
// /lib/firmware, filled by the firmware-* packages) into the image's
// /lib/firmware, where the kernel's direct firmware loader looks. A
// declared file the directory lacks is a note, not an error: most drivers
// declare every firmware any of their chips could want.

import (
	"bytes"
	"compress/gzip"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
)

// maxModuleSize bounds a decompressed module read for its .modinfo.
const maxModuleSize = 256 << 20

// ModInfo returns the key=value entries of the .modinfo section of the
// module file at p (.ko, .ko.xz, .ko.zst or .ko.gz), in order; keys repeat
// ("firmware", "alias").
func ModInfo(p string) ([][2]string, error) {
	raw, err := readModule(p)
	if err != nil {
		return nil, err
	}
	f, err := elf.NewFile(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", p, err)
	}
	sec := f.Section(".modinfo")
	if sec == nil {
		return nil, nil
	}
	data, err := sec.Data()
	if err != nil {
		return nil, fmt.Errorf("reading .modinfo of %s: %w", p, err)
	}
	return ParseModInfo(data), nil
}

// ParseModInfo splits a .modinfo section: NUL-separated "key=value"
// strings (with NUL padding between them).
func ParseModInfo(data []byte) [][2]string {
	var out [][2]string
	for _, s := range bytes.Split(data, []byte{0}) {
		k, v, ok := strings.Cut(string(s), "=")
		if ok && k != "" {
			out = append(out, [2]string{k, v})
		}
	}
	return out
}

// readModule returns a module file's ELF bytes, decompressed.
func readModule(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	switch {
	case strings.HasSuffix(p, ".xz"):
		xr, err := xz.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", p, err)
		}
		r = xr
	case strings.HasSuffix(p, ".zst"):
		zr, err := zstd.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", p, err)
		}
		defer zr.Close()
		r = zr
	case strings.HasSuffix(p, ".gz"):
		gr, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", p, err)
		}
		r = gr
	}
	raw, err := io.ReadAll(io.LimitReader(r, maxModuleSize+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", p, err)
	}
	if len(raw) > maxModuleSize {
		return nil, fmt.Errorf("reading %s: larger than %d bytes", p, maxModuleSize)
	}
	return raw, nil
}

// FirmwareStats says what StageFirmware did.
type FirmwareStats struct {
	Files int
	Bytes int64
	// Missing are "module: file" for declared firmware the directory
	// lacks.
	Missing []string
}

// StageFirmware copies the firmware the file modules of mods declare from
// fwDir into destRoot/lib/firmware, keeping the declared names (a file may
// also exist compressed, NAME.xz or NAME.zst, as the kernel's loader
// accepts). Symlinks in fwDir are followed. fwDir absent is not an error.
func StageFirmware(kmodDir, fwDir, destRoot string, mods []Module) (FirmwareStats, error) {
	var st FirmwareStats
	if fwDir == "" {
		return st, nil
	}
	if _, err := os.Stat(fwDir); errors.Is(err, os.ErrNotExist) {
		return st, nil
	}
	done := map[string]bool{}
	for _, m := range mods {
		if m.Builtin || m.Path == "" {
			continue
		}
		info, err := ModInfo(filepath.Join(kmodDir, m.Path))
		if err != nil {
			return st, fmt.Errorf("firmware of %s: %w", m.Name, err)
		}
		for _, kv := range info {
			if kv[0] != "firmware" {
				continue
			}
			name := path.Clean(kv[1])
			if !fsValid(name) {
				continue
			}
			names, found := firmwareFiles(fwDir, name)
			if !found {
				st.Missing = append(st.Missing, m.Name+": "+name)
				continue
			}
			for _, n := range names {
				if done[n] {
					continue
				}
				done[n] = true
				src := filepath.Join(fwDir, filepath.FromSlash(n))
				if err := copyFile(src, filepath.Join(destRoot, "lib", "firmware", filepath.FromSlash(n)), 0o644); err != nil {
					return st, fmt.Errorf("firmware %s for %s: %w", n, m.Name, err)
				}
				if fi, err := os.Stat(src); err == nil {
					st.Files++
					st.Bytes += fi.Size()
				}
			}
		}
	}
	return st, nil
}

// firmwareFiles returns the files under fwDir a declared name stands for:
// the name itself or its compressed forms; a name with wildcards (a few
// drivers declare "dir/*.bin") every match.
func firmwareFiles(fwDir, name string) ([]string, bool) {
	var out []string
	if strings.ContainsAny(name, "*?[") {
		matches, _ := filepath.Glob(filepath.Join(fwDir, filepath.FromSlash(name)))
		for _, mt := range matches {
			if rel, err := filepath.Rel(fwDir, mt); err == nil {
				out = append(out, filepath.ToSlash(rel))
			}
		}
		return out, len(out) > 0
	}
	for _, n := range []string{name, name + ".xz", name + ".zst"} {
		if fi, err := os.Stat(filepath.Join(fwDir, filepath.FromSlash(n))); err == nil && fi.Mode().IsRegular() {
			out = append(out, n)
		}
	}
	return out, len(out) > 0
}

// fsValid reports whether a declared firmware name stays inside the
// firmware directory.
func fsValid(name string) bool {
	return name != "" && name != "." && !strings.HasPrefix(name, "/") && !strings.HasPrefix(name, "../") && name != ".."
}
