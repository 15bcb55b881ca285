package pkgmgr

import (
	"bytes"
	"encoding/base64"
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// armorFor wraps data as gpg --armor does (64-column lines, CRC-24).
func armorFor(data []byte, headers string) string {
	var b strings.Builder
	b.WriteString("-----BEGIN PGP PUBLIC KEY BLOCK-----\n")
	b.WriteString(headers)
	b.WriteString("\n")
	enc := base64.StdEncoding.EncodeToString(data)
	for len(enc) > 64 {
		b.WriteString(enc[:64] + "\n")
		enc = enc[64:]
	}
	b.WriteString(enc + "\n")
	c := crc24(data)
	b.WriteString("=" + base64.StdEncoding.EncodeToString([]byte{byte(c >> 16), byte(c >> 8), byte(c)}) + "\n")
	b.WriteString("-----END PGP PUBLIC KEY BLOCK-----\n")
	return b.String()
}

// dropCRC removes the "=XXXX" checksum line.
func dropCRC(armor string) string {
	var keep []string
	for _, l := range strings.Split(armor, "\n") {
		if !strings.HasPrefix(l, "=") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

func TestDearmorKey(t *testing.T) {
	data := bytes.Repeat([]byte{0x99, 0x01, 0x8d, 0x04, 0x65, 0xff, 0x00, 0x42}, 40)
	good := armorFor(data, "Comment: test key\n")
	for _, tc := range []struct {
		name, in string
		want     []byte
		err      bool
	}{
		{"headers and crc", good, data, false},
		{"no headers", armorFor(data, ""), data, false},
		{"crlf and leading text", "key follows\r\n" + strings.ReplaceAll(good, "\n", "\r\n"), data, false},
		{"no crc", dropCRC(good), data, false},
		{"bad crc", strings.Replace(good, "\n=", "\n=AAAA\n#", 1), nil, true},
		{"not armor", "just text", nil, true},
		{"no end", strings.Split(good, "-----END")[0], nil, true},
		{"bad base64", "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n!!!!\n-----END PGP PUBLIC KEY BLOCK-----\n", nil, true},
		{"empty body", "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n-----END PGP PUBLIC KEY BLOCK-----\n", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := dearmorKey(tc.in)
			if (err != nil) != tc.err {
				t.Fatalf("err = %v, want error %v", err, tc.err)
			}
			if !bytes.Equal(got, tc.want) {
				t.Errorf("got %d bytes, want %d", len(got), len(tc.want))
			}
		})
	}
	if _, err := dearmorKey("nothing"); !errors.Is(err, errNoArmor) {
		t.Errorf("err = %v, want errNoArmor", err)
	}
}

// TestDearmorKeyMatchesGPG compares with gpg --dearmor on the host.
func TestDearmorKeyMatchesGPG(t *testing.T) {
	gpg, err := exec.LookPath("gpg")
	if err != nil {
		t.Skip("no gpg on the host")
	}
	in := armorFor(bytes.Repeat([]byte("cloudroot"), 50), "Version: test\n")
	cmd := exec.Command(gpg, "--batch", "--dearmor")
	cmd.Env = []string{"GNUPGHOME=" + t.TempDir()}
	cmd.Stdin = strings.NewReader(in)
	want, err := cmd.Output()
	if err != nil {
		t.Fatalf("gpg --dearmor: %v", err)
	}
	got, err := dearmorKey(in)
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("dearmorKey = %d bytes, %v; gpg --dearmor gave %d bytes", len(got), err, len(want))
	}
}

func FuzzDearmorKey(f *testing.F) {
	f.Add(armorFor([]byte("seed key bytes"), "Comment: x\n"))
	f.Add("-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n=AAAA\n-----END PGP PUBLIC KEY BLOCK-----\n")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		b, err := dearmorKey(s)
		if err == nil && len(b) == 0 {
			t.Error("no error and no bytes")
		}
	})
}
