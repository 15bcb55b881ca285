package bootenv

// Network-boot command-line contract (netboot.go):
//   - BOOTIF=01-aa-bb-cc-dd-ee-ff is pxelinux's (and iPXE's ${netX/mac})
//     boot NIC: an ARP hardware type of 01 (Ethernet) then the MAC with '-'
//     or ':' separators. A bare MAC (aa:bb:… or aa-bb-…) is accepted too.
//   - root=live:URL names a root image to run from RAM: http:// or https://
//     are downloaded, anything starting with '/' is a local path (a file in
//     the initramfs or a block device). The format comes from rootfstype= or
//     the name (.squashfs/.sfs, .erofs, .img/.ext4 = ext4); squashfs when
//     neither says. Its checksum is cloudroot.live-sha256=HEX, else the
//     `<URL>.sha256` file next to it (cloudroot.live-sha256=none skips it).
//   - cloudroot.image=URL with cloudroot.image-target=/dev/… writes a disk
//     image (raw, .gz, .zst, .xz; cloudroot.image-compression= overrides the
//     name) to the target; cloudroot.image-sha256=HEX|none as for the live
//     root; cloudroot.image-overwrite (bare or =1/true/yes) lets it replace
//     a disk that is not empty.
//   - Checksums are 64 hex digits, any case; anything else is an error, never
//     a silently skipped check.

import (
	"errors"
	"fmt"
	"net"
	"path"
	"strings"
)

// ParseBootIF parses a BOOTIF= value: "01-52-54-00-12-34-56" (pxelinux's
// hardware type 01 then the MAC), or a bare MAC with '-' or ':'.
func ParseBootIF(v string) (net.HardwareAddr, error) {
	s := strings.ReplaceAll(strings.TrimSpace(v), "-", ":")
	parts := strings.Split(s, ":")
	switch len(parts) {
	case 7:
		if parts[0] != "01" {
			return nil, fmt.Errorf("BOOTIF=%s: hardware type %q is not Ethernet (01)", v, parts[0])
		}
		parts = parts[1:]
	case 6:
	default:
		return nil, fmt.Errorf("BOOTIF=%s: want 01-xx-xx-xx-xx-xx-xx", v)
	}
	mac, err := net.ParseMAC(strings.Join(parts, ":"))
	if err != nil {
		return nil, fmt.Errorf("BOOTIF=%s: %w", v, err)
	}
	return mac, nil
}

// BootIF returns the boot NIC's MAC from BOOTIF=; ok is false when absent.
func (c Cmdline) BootIF() (mac net.HardwareAddr, ok bool, err error) {
	v, ok := c.Get("BOOTIF")
	if !ok {
		return nil, false, nil
	}
	mac, err = ParseBootIF(v)
	return mac, true, err
}

// ErrBadChecksum reports a checksum that is not 64 hex digits.
var ErrBadChecksum = errors.New("not a SHA-256 (64 hex digits)")

// ChecksumNone disables the checksum of a live root or image.
const ChecksumNone = "none"

// Checksum says how a download is verified.
type Checksum struct {
	// SHA256 is the expected digest, lower-case hex; "" when it is to be
	// read from SumURL or when Skip is set.
	SHA256 string
	// SumURL is the `<URL>.sha256` file to read the digest from (set for
	// downloads without an explicit SHA256).
	SumURL string
	// Skip: the command line said none.
	Skip bool
}

// parseChecksum reads an explicit value (or "" when the key is absent) for
// the download u.
func parseChecksum(key, v string, present bool, u string) (Checksum, error) {
	switch {
	case !present || v == "":
		if isRemote(u) {
			return Checksum{SumURL: u + ".sha256"}, nil
		}
		return Checksum{}, nil
	case strings.EqualFold(v, ChecksumNone):
		return Checksum{Skip: true}, nil
	}
	h, err := NormalizeSHA256(v)
	if err != nil {
		return Checksum{}, fmt.Errorf("%s=%s: %w", key, v, err)
	}
	return Checksum{SHA256: h}, nil
}

// NormalizeSHA256 checks a hex SHA-256 and returns it lower-cased.
func NormalizeSHA256(v string) (string, error) {
	v = strings.TrimSpace(v)
	if len(v) != 64 {
		return "", ErrBadChecksum
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return "", ErrBadChecksum
		}
	}
	return strings.ToLower(v), nil
}

func isRemote(u string) bool {
	return strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://")
}

// Live root formats.
const (
	LiveSquashfs = "squashfs"
	LiveErofs    = "erofs"
	LiveExt4     = "ext4"
)

// LiveRoot is root=live:….
type LiveRoot struct {
	// URL is an http(s) URL, or Path a local file or block device.
	URL  string
	Path string
	// FSType is the image's filesystem (LiveSquashfs, LiveErofs, LiveExt4
	// or what rootfstype= says).
	FSType   string
	Checksum Checksum
}

// Source is the URL or the path.
func (l LiveRoot) Source() string {
	if l.URL != "" {
		return l.URL
	}
	return l.Path
}

// ParseLiveRoot parses the part of root= after "live:" (fstype is
// rootfstype=, "" when absent).
func ParseLiveRoot(v, fstype string) (LiveRoot, error) {
	var l LiveRoot
	switch {
	case v == "":
		return l, errors.New("root=live: names no image")
	case isRemote(v):
		if strings.ContainsAny(v, " \t\n") || len(v) <= len("https://") {
			return l, fmt.Errorf("root=live:%s: bad URL", v)
		}
		l.URL = v
	case strings.HasPrefix(v, "/"):
		l.Path = path.Clean(v)
	default:
		return l, fmt.Errorf("root=live:%s: want http://, https:// or an absolute path: %w", v, ErrUnsupported)
	}
	l.FSType = fstype
	if l.FSType == "" {
		l.FSType = fsTypeFromName(v)
	}
	return l, nil
}

func fsTypeFromName(v string) string {
	name := v
	if i := strings.IndexAny(name, "?#"); i >= 0 {
		name = name[:i]
	}
	switch strings.ToLower(path.Ext(name)) {
	case ".erofs":
		return LiveErofs
	case ".img", ".ext4", ".ext2", ".ext3":
		return LiveExt4
	}
	return LiveSquashfs
}

// LiveRoot returns root=live:… with its checksum; ok is false when root=
// is not a live root.
func (c Cmdline) LiveRoot() (l LiveRoot, ok bool, err error) {
	v, present := c.Get("root")
	rest, live := strings.CutPrefix(v, "live:")
	if !present || !live {
		return l, false, nil
	}
	fstype, _ := c.Get("rootfstype")
	l, err = ParseLiveRoot(rest, fstype)
	if err != nil {
		return l, true, err
	}
	sum, has := c.Get("cloudroot.live-sha256")
	l.Checksum, err = parseChecksum("cloudroot.live-sha256", sum, has, l.URL)
	return l, true, err
}

// Image compressions.
const (
	CompressNone = "none"
	CompressGzip = "gzip"
	CompressZstd = "zstd"
	CompressXz   = "xz"
)

// CompressionFromName guesses a download's compression from its name.
func CompressionFromName(u string) string {
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		u = u[:i]
	}
	switch strings.ToLower(path.Ext(u)) {
	case ".gz", ".gzip":
		return CompressGzip
	case ".zst", ".zstd":
		return CompressZstd
	case ".xz":
		return CompressXz
	}
	return CompressNone
}

// ParseCompression accepts a compression name or an alias.
func ParseCompression(v string) (string, error) {
	switch strings.ToLower(v) {
	case "", "none", "raw":
		return CompressNone, nil
	case "gz", "gzip":
		return CompressGzip, nil
	case "zst", "zstd":
		return CompressZstd, nil
	case "xz":
		return CompressXz, nil
	}
	return "", fmt.Errorf("compression %q: want none, gzip, zstd or xz: %w", v, ErrUnsupported)
}

// Image is an image-to-disk request (command line or cloud-config).
type Image struct {
	URL         string
	Target      string
	Compression string
	Checksum    Checksum
	Overwrite   bool
}

// ParseImage checks an image request's fields; sha256 and compression may
// be empty (then the name and `<URL>.sha256` decide).
func ParseImage(url, target, sha256, compression string, overwrite bool) (Image, error) {
	img := Image{URL: url, Target: target, Overwrite: overwrite}
	if !isRemote(url) && !strings.HasPrefix(url, "/") {
		return img, fmt.Errorf("cloudroot.image=%s: want an http(s) URL or an absolute path", url)
	}
	if !strings.HasPrefix(target, "/dev/") || strings.Contains(target, "..") {
		return img, fmt.Errorf("cloudroot.image-target=%q: want a /dev/ path", target)
	}
	var err error
	if compression == "" {
		img.Compression = CompressionFromName(url)
	} else if img.Compression, err = ParseCompression(compression); err != nil {
		return img, fmt.Errorf("cloudroot.image-compression: %w", err)
	}
	img.Checksum, err = parseChecksum("cloudroot.image-sha256", sha256, sha256 != "", url)
	return img, err
}

// ParseBool reads a flag value as the kernel's kstrtobool does (bare = true).
func ParseBool(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "", "1", "y", "yes", "true", "on":
		return true, nil
	case "0", "n", "no", "false", "off":
		return false, nil
	}
	return false, fmt.Errorf("%q is not a boolean", v)
}

// Image returns cloudroot.image= and its companions; ok is false when
// cloudroot.image= is absent.
func (c Cmdline) Image() (img Image, ok bool, err error) {
	u, ok := c.Get("cloudroot.image")
	if !ok {
		return img, false, nil
	}
	target, _ := c.Get("cloudroot.image-target")
	sum, _ := c.Get("cloudroot.image-sha256")
	comp, _ := c.Get("cloudroot.image-compression")
	overwrite := false
	if v, has := c.Get("cloudroot.image-overwrite"); has {
		if overwrite, err = ParseBool(v); err != nil {
			return img, true, fmt.Errorf("cloudroot.image-overwrite: %w", err)
		}
	}
	img, err = ParseImage(u, target, sum, comp, overwrite)
	return img, true, err
}

// CloudConfigURL returns cloud-config-url= (or the deprecated url=) and the
// key it was given as, as cloud-init's parse_cmdline_url reads them.
func (c Cmdline) CloudConfigURL() (key, url string, ok bool) {
	for _, k := range []string{"cloud-config-url", "url"} {
		if v, has := c.Get(k); has && v != "" {
			return k, v, true
		}
	}
	return "", "", false
}

// SourceConfig is the datasource configuration a ds= selection carries
// beyond NoCloud's s=/i=/h=: `ds=ec2;metadata_urls=http://a,http://b`
// becomes {metadata_urls: [http://a, http://b]}, other keys stay strings.
// Nil when there is none.
func (d DSArg) SourceConfig() map[string]any {
	var out map[string]any
	for k, v := range d.Raw {
		switch k {
		case "s", "seedfrom", "i", "instance-id", "h", "local-hostname", "":
			continue
		}
		if out == nil {
			out = map[string]any{}
		}
		if k == "metadata_urls" {
			var urls []any
			for _, u := range strings.Split(v, ",") {
				if u = strings.TrimSpace(u); u != "" {
					urls = append(urls, u)
				}
			}
			out[k] = urls
			continue
		}
		out[k] = v
	}
	return out
}

// LinkByMAC returns the name of the link whose MAC is mac (case and
// separators ignored).
func LinkByMAC(links []NetLink, mac net.HardwareAddr) (string, bool) {
	for _, l := range links {
		m, err := net.ParseMAC(l.MAC)
		if err == nil && m.String() == mac.String() {
			return l.Name, true
		}
	}
	return "", false
}
