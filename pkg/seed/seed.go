// Package seed writes NoCloud seed images, as cloud-utils' cloud-localds
// does, with go-diskfs: no genisoimage, mkfs.vfat or mtools needed.
//
// The contract:
//
//   - An image holds `meta-data` and `user-data` (empty when none is given:
//     cloud-init's NoCloud requires both on a config disk), plus
//     `network-config` and `vendor-data` when given, in the root directory.
//   - FormatISO is ISO9660 with Rock Ridge and Joliet (so the hyphenated
//     names survive every reader), volume identifier `cidata`; FormatVFAT is
//     FAT32 labelled `CIDATA`, at least MinVFATSize bytes (enough clusters
//     to be FAT32 by the specification's count), written sparse.
//   - Write writes a temporary file next to the output and renames it over
//     the output only when the image is complete.
//
// The filesystems are created with go-diskfs's iso9660 and fat32 packages
// straight over the image file, not through its diskfs and disk packages:
// those import every filesystem go-diskfs has (squashfs with xz, zstd and
// lz4; ext4 with its CRC tables), and this package is linked into the
// agent, where every linked package's init runs in every process.
package seed

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/diskfs/go-diskfs/backend/file"
	"github.com/diskfs/go-diskfs/filesystem"
	"github.com/diskfs/go-diskfs/filesystem/fat32"
	"github.com/diskfs/go-diskfs/filesystem/iso9660"
	"gopkg.in/yaml.v3"

	"github.com/cloudroot/cloudroot/pkg/yaml11"
)

// Format is an image's filesystem.
type Format string

// Formats Write knows, as cloud-localds' --filesystem spells them.
const (
	FormatISO  Format = "iso"
	FormatVFAT Format = "vfat"
)

// Labels per format (cloud-localds' choices; NoCloud accepts both).
const (
	LabelISO  = "cidata"
	LabelVFAT = "CIDATA"
)

// DefaultInstanceID is cloud-localds' instance-id when none is given.
const DefaultInstanceID = "iid-local01"

// MinVFATSize is the smallest FAT image: 65525 clusters of 512 bytes (the
// fewest a FAT32 volume may have) plus reserved sectors and both FATs.
const MinVFATSize = 34 << 20

// isoOverhead bounds the ISO9660 structures besides file data (system
// area, volume descriptors, path tables, directories, Rock Ridge).
const isoOverhead = 1 << 20

// Files are the seed's files; nil means absent.
type Files struct {
	MetaData      []byte
	UserData      []byte
	NetworkConfig []byte
	VendorData    []byte
}

// entries are the files to write, in order.
func (f Files) entries() []entry {
	ud := f.UserData
	if ud == nil {
		ud = []byte{}
	}
	out := []entry{{"meta-data", f.MetaData}, {"user-data", ud}}
	if f.NetworkConfig != nil {
		out = append(out, entry{"network-config", f.NetworkConfig})
	}
	if f.VendorData != nil {
		out = append(out, entry{"vendor-data", f.VendorData})
	}
	return out
}

type entry struct {
	name string
	data []byte
}

// MetaData is a NoCloud meta-data document with instance-id (instanceID,
// or DefaultInstanceID when empty) and, when hostname is not empty,
// local-hostname. Values must be UTF-8 without control characters and
// must read back unchanged.
func MetaData(instanceID, hostname string) ([]byte, error) {
	if instanceID == "" {
		instanceID = DefaultInstanceID
	}
	for _, v := range []string{instanceID, hostname} {
		if !utf8.ValidString(v) || strings.IndexFunc(v, unicode.IsControl) >= 0 {
			return nil, fmt.Errorf("seed: meta-data value %q: not UTF-8 or holds control characters", v)
		}
	}
	type md struct {
		InstanceID    string `yaml:"instance-id"`
		LocalHostname string `yaml:"local-hostname,omitempty"`
	}
	in := md{instanceID, hostname}
	b, err := yaml.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("seed: meta-data: %w", err)
	}
	var back md // read back as cloud-init's PyYAML reads it
	if _, err := yaml11.Unmarshal("meta-data", b, &back); err != nil || back != in {
		return nil, fmt.Errorf("seed: meta-data values %q, %q do not survive YAML", instanceID, hostname)
	}
	return b, nil
}

// ParseFormat accepts the --format spellings ("iso", "iso9660", "vfat", "fat", "fat32").
func ParseFormat(s string) (Format, error) {
	switch strings.ToLower(s) {
	case "iso", "iso9660":
		return FormatISO, nil
	case "vfat", "fat", "fat32":
		return FormatVFAT, nil
	}
	return "", fmt.Errorf("unknown format %q (want iso or vfat)", s)
}

// Write writes a seed image of format holding files to path, replacing it.
func Write(path string, format Format, files Files) error {
	if files.MetaData == nil {
		return errors.New("seed: no meta-data")
	}
	if format != FormatISO && format != FormatVFAT {
		return fmt.Errorf("seed: unknown format %q", format)
	}
	ents := files.entries()
	var total int64
	for _, e := range ents {
		total += int64(len(e.data))
	}
	dir := filepath.Dir(path)
	tmpf, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	tmp := tmpf.Name()
	tmpf.Close()
	// go-diskfs creates its file exclusively.
	if err := os.Remove(tmp); err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	ok := false
	defer func() {
		if !ok {
			os.Remove(tmp)
		}
	}()
	switch format {
	case FormatISO:
		err = writeISO(tmp, ents, total)
	case FormatVFAT:
		err = writeVFAT(tmp, ents, total)
	}
	if err != nil {
		return fmt.Errorf("seed: writing %s image %s: %w", format, path, err)
	}
	if err := os.Chmod(tmp, 0o644); err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	ok = true
	return nil
}

func round(n, to int64) int64 { return (n + to - 1) / to * to }

func writeISO(path string, ents []entry, total int64) error {
	// Every file takes whole 2048-byte blocks.
	size := round(total+int64(len(ents))*2048+isoOverhead, 2048)
	img, err := file.CreateFromPath(path, size)
	if err != nil {
		return err
	}
	defer img.Close()
	work, err := os.MkdirTemp("", "cloudroot-seed-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	// Rock Ridge records the workspace's modes: MkdirTemp's 0700 would make
	// the mounted root unreadable to other users.
	if err := os.Chmod(work, 0o755); err != nil {
		return err
	}
	// The whole image, from offset 0, in ISO9660's 2048-byte blocks.
	iso, err := iso9660.Create(img, size, 0, 2048, work)
	if err != nil {
		return err
	}
	if err := writeFiles(iso, ents); err != nil {
		return err
	}
	return iso.Finalize(iso9660.FinalizeOptions{RockRidge: true, Joliet: true, VolumeIdentifier: LabelISO})
}

func writeVFAT(path string, ents []entry, total int64) error {
	// Every file takes whole clusters (512 bytes below 260 MiB); a tenth
	// more covers the FATs' growth.
	size := max(int64(MinVFATSize), round(total+total/10+int64(len(ents))*4096+MinVFATSize/2, 1<<20))
	img, err := file.CreateFromPath(path, size)
	if err != nil {
		return err
	}
	defer img.Close()
	// The whole image, from offset 0, in 512-byte sectors.
	fsys, err := fat32.Create(img, size, 0, 512, LabelVFAT, false)
	if err != nil {
		return err
	}
	return writeFiles(fsys, ents)
}

func writeFiles(fsys filesystem.FileSystem, ents []entry) error {
	for _, e := range ents {
		f, err := fsys.OpenFile("/"+e.name, os.O_CREATE|os.O_RDWR|os.O_TRUNC)
		if err != nil {
			return fmt.Errorf("create %s: %w", e.name, err)
		}
		if len(e.data) > 0 {
			if _, err := f.Write(e.data); err != nil {
				f.Close()
				return fmt.Errorf("write %s: %w", e.name, err)
			}
		}
		if err := f.Close(); err != nil {
			return fmt.Errorf("close %s: %w", e.name, err)
		}
	}
	return nil
}
