// Package netboot fetches what a network-booted machine runs from: a live
// root image kept in RAM, or a disk image written to the machine's disk.
//
// # Contract
//
//   - Downloads go through the caller's *http.Client (the initramfs's one
//     ephemeral-network client); nothing here makes its own. A broken
//     transfer is resumed with a Range request from where it stopped, up to
//     Fetch.Retries times; a server that ignores Range is read again from
//     the start (the bytes already seen are skipped, not re-written).
//   - Every byte is hashed as it arrives. A checksum is the command line's,
//     else the first token of `<URL>.sha256` (sha256sum's format; the name
//     after it, if any, must be the image's base name). A mismatch is an
//     error naming both digests; nothing is ever used unverified unless the
//     checksum was explicitly "none".
//   - Progress is a line on the console every Progress step (default 10%,
//     or every 16 MiB when the size is unknown).
//   - WriteImage (image.go) writes a disk only when it is empty or
//     overwriting is allowed, and never leaves a half-written disk that
//     looks bootable: the first HeadSize bytes (MBR, GPT header and table)
//     are held back in memory and written last, after the checksum matched
//     and the rest is on the disk and synced; on any failure the head is
//     zeroed instead.
package netboot

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"path"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
)

// ErrChecksum is a digest mismatch.
var ErrChecksum = errors.New("checksum mismatch")

// MaxSumFile bounds a `.sha256` file.
const MaxSumFile = 64 << 10

// ParseSumFile reads the digest for name (a base name, "" for any) from a
// sha256sum-style file: lines "HEX  name" or "HEX *name", or a single bare
// HEX. With several lines, the one naming name wins.
func ParseSumFile(b []byte, name string) (string, error) {
	if len(b) > MaxSumFile {
		return "", fmt.Errorf("checksum file: %d bytes is over %d", len(b), MaxSumFile)
	}
	var first string
	var lines int
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), MaxSumFile+1)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		lines++
		fields := strings.Fields(line)
		sum, err := bootenv.NormalizeSHA256(fields[0])
		if err != nil {
			return "", fmt.Errorf("checksum file line %q: %w", line, err)
		}
		file := ""
		if len(fields) > 1 {
			file = path.Base(strings.TrimPrefix(strings.Join(fields[1:], " "), "*"))
		}
		if name != "" && file == name {
			return sum, nil
		}
		if first == "" && (file == "" || name == "") {
			first = sum
		}
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("checksum file: %w", err)
	}
	if first == "" {
		if lines == 0 {
			return "", errors.New("checksum file is empty")
		}
		return "", fmt.Errorf("checksum file names no %q", name)
	}
	return first, nil
}

// Verifier hashes a stream and compares it with the expected digest.
type Verifier struct {
	want string
	h    hash.Hash
	n    int64
}

// NewVerifier expects the lower-case hex want ("" checks nothing and
// reports the digest only).
func NewVerifier(want string) *Verifier { return &Verifier{want: want, h: sha256.New()} }

// Write implements io.Writer.
func (v *Verifier) Write(p []byte) (int, error) {
	v.n += int64(len(p))
	return v.h.Write(p)
}

// Sum is the hex digest so far.
func (v *Verifier) Sum() string { return hex.EncodeToString(v.h.Sum(nil)) }

// Check compares the digest with the expected one.
func (v *Verifier) Check() error {
	got := v.Sum()
	if v.want != "" && got != v.want {
		return fmt.Errorf("sha256 of %d bytes is %s, expected %s: %w", v.n, got, v.want, ErrChecksum)
	}
	return nil
}
