package target

import (
	"crypto/rand"
	"crypto/sha512"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// SHA-512 crypt ("$6$"), as specified by Ulrich Drepper in "Unix crypt using
// SHA-256 and SHA-512" (the algorithm glibc, libxcrypt, chpasswd and
// `openssl passwd -6` implement). cloud-init hands plain_text_passwd to
// chpasswd, which hashes with SHA-512 by default on current distributions;
// cloudroot hashes itself because the initramfs has no chpasswd.

const (
	sha512CryptPrefix   = "$6$"
	sha512RoundsDefault = 5000
	sha512RoundsMin     = 1000
	sha512RoundsMax     = 999999999
	sha512SaltMax       = 16
	cryptAlphabet       = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
)

// HashPassword hashes password with SHA-512 crypt, a random 16-character
// salt and the default 5000 rounds, giving a string for /etc/shadow.
func HashPassword(password string) (string, error) {
	var raw [sha512SaltMax]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", fmt.Errorf("target: hash password: salt: %w", err)
	}
	salt := make([]byte, sha512SaltMax)
	for i, b := range raw {
		salt[i] = cryptAlphabet[int(b)%len(cryptAlphabet)]
	}
	return SHA512Crypt(password, sha512CryptPrefix+string(salt))
}

// SHA512Crypt computes the SHA-512 crypt of password with setting, which is
// "$6$salt", "$6$rounds=N$salt" or a complete hash (whose salt and rounds
// are reused, so SHA512Crypt(pw, hash) == hash checks a password). The salt
// is cut at 16 characters; rounds are clamped to 1000..999999999.
func SHA512Crypt(password, setting string) (string, error) {
	rest, ok := strings.CutPrefix(setting, sha512CryptPrefix)
	if !ok {
		return "", errors.New("target: sha512-crypt: setting does not start with $6$")
	}
	rounds, custom := sha512RoundsDefault, false
	if r, after, ok := strings.Cut(rest, "$"); ok && strings.HasPrefix(r, "rounds=") {
		n, err := strconv.ParseUint(strings.TrimPrefix(r, "rounds="), 10, 64)
		if err != nil {
			return "", fmt.Errorf("target: sha512-crypt: bad rounds %q", r)
		}
		rounds, custom = int(min(max(n, sha512RoundsMin), sha512RoundsMax)), true
		rest = after
	}
	salt, _, _ := strings.Cut(rest, "$")
	if len(salt) > sha512SaltMax {
		salt = salt[:sha512SaltMax]
	}
	sum := sha512CryptSum([]byte(password), []byte(salt), rounds)

	var b strings.Builder
	b.WriteString(sha512CryptPrefix)
	if custom {
		fmt.Fprintf(&b, "rounds=%d$", rounds)
	}
	b.WriteString(salt)
	b.WriteByte('$')
	for _, t := range sha512Perm {
		b64From24(&b, sum[t[0]], sum[t[1]], sum[t[2]], 4)
	}
	b64From24(&b, 0, 0, sum[63], 2)
	return b.String(), nil
}

// sha512Perm is the byte order of the final encoding (Drepper, step 22).
var sha512Perm = [21][3]int{
	{0, 21, 42}, {22, 43, 1}, {44, 2, 23}, {3, 24, 45}, {25, 46, 4},
	{47, 5, 26}, {6, 27, 48}, {28, 49, 7}, {50, 8, 29}, {9, 30, 51},
	{31, 52, 10}, {53, 11, 32}, {12, 33, 54}, {34, 55, 13}, {56, 14, 35},
	{15, 36, 57}, {37, 58, 16}, {59, 17, 38}, {18, 39, 60}, {40, 61, 19},
	{62, 20, 41},
}

func b64From24(b *strings.Builder, b2, b1, b0 byte, n int) {
	w := uint(b2)<<16 | uint(b1)<<8 | uint(b0)
	for ; n > 0; n-- {
		b.WriteByte(cryptAlphabet[w&0x3f])
		w >>= 6
	}
}

// sha512CryptSum is steps 1-21 of the specification.
func sha512CryptSum(key, salt []byte, rounds int) [sha512.Size]byte {
	// Digest B: key, salt, key.
	h := sha512.New()
	h.Write(key)
	h.Write(salt)
	h.Write(key)
	db := h.Sum(nil)

	// Digest A: key, salt, B repeated to len(key), then for each bit of
	// len(key) either B (bit set) or the key (bit clear).
	h.Reset()
	h.Write(key)
	h.Write(salt)
	h.Write(repeatTo(db, len(key)))
	for n := len(key); n > 0; n >>= 1 {
		if n&1 != 0 {
			h.Write(db)
		} else {
			h.Write(key)
		}
	}
	da := h.Sum(nil)

	// P: digest of the key len(key) times, repeated to len(key).
	h.Reset()
	for range len(key) {
		h.Write(key)
	}
	p := repeatTo(h.Sum(nil), len(key))

	// S: digest of the salt 16+A[0] times, repeated to len(salt).
	h.Reset()
	for range 16 + int(da[0]) {
		h.Write(salt)
	}
	s := repeatTo(h.Sum(nil), len(salt))

	c := da
	for i := range rounds {
		h.Reset()
		if i&1 != 0 {
			h.Write(p)
		} else {
			h.Write(c)
		}
		if i%3 != 0 {
			h.Write(s)
		}
		if i%7 != 0 {
			h.Write(p)
		}
		if i&1 != 0 {
			h.Write(c)
		} else {
			h.Write(p)
		}
		c = h.Sum(c[:0])
	}
	var out [sha512.Size]byte
	copy(out[:], c)
	return out
}

// repeatTo returns d repeated (and cut) to n bytes.
func repeatTo(d []byte, n int) []byte {
	out := make([]byte, 0, n)
	for len(out) < n {
		out = append(out, d[:min(len(d), n-len(out))]...)
	}
	return out
}
