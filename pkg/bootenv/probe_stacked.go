package bootenv

// Containers of other block devices, spelled as blkid spells them: a LUKS
// volume (crypto_LUKS), an LVM physical volume (LVM2_member) and an md RAID
// member (linux_raid_member). cloudroot's initramfs cannot open them; it
// recognizes them so that a root it cannot find can be explained.

import (
	"bytes"
	"fmt"
)

// Types of the containers Probe recognizes.
const (
	TypeLUKS = "crypto_LUKS"
	TypeLVM  = "LVM2_member"
	TypeMD   = "linux_raid_member"
)

// IsContainer reports whether t is a LUKS, LVM or md RAID member type.
func IsContainer(t string) bool { return t == TypeLUKS || t == TypeLVM || t == TypeMD }

var luksMagic = []byte("LUKS\xba\xbe")

// probeLUKS reads a LUKS1 or LUKS2 header: magic, big-endian version, the
// UUID at 168 and (LUKS2) the label at 24.
func probeLUKS(d dev) (FS, error) {
	h, err := d.read(0, 208)
	if err != nil {
		return FS{}, err
	}
	if !bytes.Equal(h[:6], luksMagic) {
		return FS{}, errNoMatch
	}
	v := int(h[6])<<8 | int(h[7])
	fs := FS{Type: TypeLUKS, Version: fmt.Sprint(v), UUID: cString(h[168:208])}
	if v == 2 {
		fs.Label = cString(h[24:72])
	}
	return fs, nil
}

// probeLVM finds an LVM2 label ("LABELONE" ... "LVM2 001") in one of the
// first four sectors; the PV UUID follows at the label's offset, printed in
// LVM's 6-4-4-4-4-4-6 groups.
func probeLVM(d dev) (FS, error) {
	for s := int64(0); s < 4; s++ {
		b, err := d.read(s*512, 512)
		if err != nil {
			return FS{}, err
		}
		if string(b[:8]) != "LABELONE" || string(b[24:32]) != "LVM2 001" {
			continue
		}
		off := int(le32(b[20:24]))
		if off < 32 || off+32 > len(b) {
			return FS{}, errNoMatch
		}
		u := b[off : off+32]
		var sb bytes.Buffer
		for i, n := range []int{6, 4, 4, 4, 4, 4, 6} {
			if i > 0 {
				sb.WriteByte('-')
			}
			sb.Write(u[:n])
			u = u[n:]
		}
		return FS{Type: TypeLVM, Version: "LVM2 001", UUID: sb.String()}, nil
	}
	return FS{}, errNoMatch
}

const mdMagic = 0xa92b4efc

// probeMD finds an md superblock: 1.1 at 0, 1.2 at 4 KiB, 1.0 8-12 KiB
// before the end, 0.90 in the last 64 KiB-aligned 64 KiB. The array UUID
// and (1.x) the array name are reported, as blkid does.
func probeMD(d dev) (FS, error) {
	type loc struct {
		off     int64
		version string
	}
	locs := []loc{{0, "1.1"}, {4096, "1.2"}}
	if d.size >= 128<<10 {
		locs = append(locs, loc{((d.size >> 9) - 16) &^ 7 << 9, "1.0"}, loc{(d.size &^ (64<<10 - 1)) - 64<<10, "0.90.0"})
	}
	for _, l := range locs {
		b, err := d.read(l.off, 64)
		if err != nil {
			if err == errNoMatch {
				continue
			}
			return FS{}, err
		}
		if le32(b[0:4]) != mdMagic {
			continue
		}
		major := le32(b[4:8])
		switch {
		case major == 1 && l.version != "0.90.0":
			return FS{Type: TypeMD, Version: l.version, UUID: uuidString(b[16:32]), Label: cString(b[32:64])}, nil
		case major == 0 && l.version == "0.90.0":
			u := append(append([]byte{}, b[20:24]...), b[52:64]...)
			return FS{Type: TypeMD, Version: l.version, UUID: uuidString(u)}, nil
		}
	}
	return FS{}, errNoMatch
}
