package initramfs

// Dynamically linked programs in the image (Debian's lvm for root on LVM):
// the program, its ELF interpreter and the shared libraries it needs,
// found through DT_NEEDED recursively in the usual library directories,
// each copied to the same absolute path in the image.

import (
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// LibDirs are searched for DT_NEEDED libraries, in order.
var LibDirs = []string{"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"}

// ProgramFiles returns the absolute paths a program needs in the image:
// itself, its interpreter and its libraries (DT_NEEDED, recursively), each
// once. root prefixes every path looked up (a target root; "" is the host).
func ProgramFiles(root, program string) ([]string, error) {
	var (
		out  []string
		errs []error
	)
	seen := map[string]bool{}
	var visit func(p string) error
	visit = func(p string) error {
		if seen[p] {
			return nil
		}
		seen[p] = true
		out = append(out, p)
		f, err := elf.Open(filepath.Join(root, p))
		if err != nil {
			return fmt.Errorf("reading %s: %w", p, err)
		}
		defer f.Close()
		for _, prog := range f.Progs {
			if prog.Type != elf.PT_INTERP {
				continue
			}
			b := make([]byte, prog.Filesz)
			if _, err := prog.ReadAt(b, 0); err != nil {
				return fmt.Errorf("reading the interpreter of %s: %w", p, err)
			}
			if interp := string(b[:max(0, len(b)-1)]); interp != "" && !seen[interp] {
				seen[interp] = true
				out = append(out, interp)
			}
		}
		libs, err := f.ImportedLibraries()
		if err != nil {
			return fmt.Errorf("reading the libraries of %s: %w", p, err)
		}
		for _, l := range libs {
			found := ""
			for _, d := range LibDirs {
				if _, err := os.Stat(filepath.Join(root, d, l)); err == nil {
					found = filepath.Join(d, l)
					break
				}
			}
			if found == "" {
				errs = append(errs, fmt.Errorf("%s needs %s, not found in %v", p, l, LibDirs))
				continue
			}
			if err := visit(found); err != nil {
				errs = append(errs, err)
			}
		}
		return nil
	}
	if err := visit(program); err != nil {
		return nil, err
	}
	slices.Sort(out[1:])
	return out, errors.Join(errs...)
}

// StagePrograms copies each program and what it needs (ProgramFiles) from
// the host into destRoot, under the same absolute paths, following
// symlinks.
func StagePrograms(destRoot string, programs []string) (int64, error) {
	var total int64
	done := map[string]bool{}
	for _, prog := range programs {
		files, err := ProgramFiles("", prog)
		if err != nil {
			return total, fmt.Errorf("program %s: %w", prog, err)
		}
		for _, f := range files {
			if done[f] {
				continue
			}
			done[f] = true
			fi, err := os.Stat(f)
			if err != nil {
				return total, fmt.Errorf("program %s: %w", prog, err)
			}
			if err := copyFile(f, filepath.Join(destRoot, f), fi.Mode().Perm()|0o444); err != nil {
				return total, fmt.Errorf("program %s: %w", prog, err)
			}
			total += fi.Size()
		}
	}
	return total, nil
}
