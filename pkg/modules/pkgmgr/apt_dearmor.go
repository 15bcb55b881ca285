package pkgmgr

// dearmorKey is what `gpg --dearmor` does to an OpenPGP key in ASCII armor
// (RFC 4880 §6.2), for apt_configure when the target has no gpg and gnupg
// could not be installed: the first armored block's base64 body, decoded,
// its CRC-24 checked when present. The bytes are the ones gpg writes.

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// errNoArmor is returned for text holding no armored block.
var errNoArmor = errors.New("no OpenPGP armor (-----BEGIN PGP ...-----) found")

func dearmorKey(text string) ([]byte, error) {
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	i := 0
	for i < len(lines) && !isArmorLine(lines[i], "BEGIN") {
		i++
	}
	if i == len(lines) {
		return nil, errNoArmor
	}
	i++
	// Armor headers ("Version: ..."), then a blank line; gpg also takes a
	// block without either.
	for i < len(lines) && (strings.Contains(lines[i], ":") || strings.TrimSpace(lines[i]) == "") {
		i++
	}
	var body strings.Builder
	crc := ""
	ended := false
	for ; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		switch {
		case isArmorLine(l, "END"):
			ended = true
		case strings.HasPrefix(l, "=") && len(l) == 5:
			crc = l[1:]
			continue
		default:
			body.WriteString(l)
			continue
		}
		break
	}
	if !ended {
		return nil, errors.New("OpenPGP armor: no -----END PGP ...----- line")
	}
	data, err := base64.StdEncoding.DecodeString(body.String())
	if err != nil {
		return nil, fmt.Errorf("OpenPGP armor: %w", err)
	}
	if len(data) == 0 {
		return nil, errors.New("OpenPGP armor: empty body")
	}
	if crc != "" {
		want, err := base64.StdEncoding.DecodeString(crc)
		if err != nil || len(want) != 3 {
			return nil, fmt.Errorf("OpenPGP armor: bad checksum line %q", "="+crc)
		}
		if got := crc24(data); byte(got>>16) != want[0] || byte(got>>8) != want[1] || byte(got) != want[2] {
			return nil, errors.New("OpenPGP armor: checksum mismatch")
		}
	}
	return data, nil
}

// isArmorLine matches "-----BEGIN PGP ...-----" (or END).
func isArmorLine(l, what string) bool {
	l = strings.TrimSpace(l)
	return strings.HasPrefix(l, "-----"+what+" PGP ") && strings.HasSuffix(l, "-----") && len(l) > len("-----"+what+" PGP -----")
}

// crc24 is RFC 4880's CRC-24 (§6.1).
func crc24(b []byte) uint32 {
	const (
		init24 = 0xB704CE
		poly24 = 0x1864CFB
	)
	crc := uint32(init24)
	for _, c := range b {
		crc ^= uint32(c) << 16
		for range 8 {
			crc <<= 1
			if crc&0x1000000 != 0 {
				crc ^= poly24
			}
		}
	}
	return crc & 0xFFFFFF
}
