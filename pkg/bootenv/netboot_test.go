package bootenv

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseBootIF(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		bad      bool
	}{
		{in: "01-52-54-00-12-34-56", want: "52:54:00:12:34:56"},
		{in: "01-AA-BB-CC-DD-EE-FF", want: "aa:bb:cc:dd:ee:ff"},
		{in: "52:54:00:12:34:56", want: "52:54:00:12:34:56"},
		{in: "52-54-00-12-34-56", want: "52:54:00:12:34:56"},
		{in: "06-52-54-00-12-34-56", bad: true}, // not Ethernet
		{in: "01-52-54-00-12", bad: true},
		{in: "", bad: true},
		{in: "01-zz-54-00-12-34-56", bad: true},
	} {
		got, err := ParseBootIF(tc.in)
		if tc.bad {
			if err == nil {
				t.Errorf("ParseBootIF(%q) = %v, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || got.String() != tc.want {
			t.Errorf("ParseBootIF(%q) = %v, %v; want %s", tc.in, got, err, tc.want)
		}
	}
	mac, ok, err := ParseCmdline("console=ttyS0 BOOTIF=01-52-54-00-12-34-56").BootIF()
	if !ok || err != nil || mac.String() != "52:54:00:12:34:56" {
		t.Errorf("Cmdline.BootIF = %v %v %v", mac, ok, err)
	}
	if name, ok := LinkByMAC([]NetLink{{Name: "eth0", MAC: "52:54:00:00:00:01"}, {Name: "eth1", MAC: "52:54:00:12:34:56"}}, mac); !ok || name != "eth1" {
		t.Errorf("LinkByMAC = %q %v, want eth1", name, ok)
	}
}

const sum = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

func TestLiveRoot(t *testing.T) {
	for _, tc := range []struct {
		cmdline string
		want    LiveRoot
		notLive bool
		bad     string
	}{
		{cmdline: "root=LABEL=x", notLive: true},
		{cmdline: "ro", notLive: true},
		{cmdline: "root=live:http://10.0.0.1/rootfs.squashfs", want: LiveRoot{URL: "http://10.0.0.1/rootfs.squashfs", FSType: LiveSquashfs, Checksum: Checksum{SumURL: "http://10.0.0.1/rootfs.squashfs.sha256"}}},
		{cmdline: "root=live:https://h/r.erofs cloudroot.live-sha256=" + strings.ToUpper(sum), want: LiveRoot{URL: "https://h/r.erofs", FSType: LiveErofs, Checksum: Checksum{SHA256: sum}}},
		{cmdline: "root=live:http://h/r.img cloudroot.live-sha256=none", want: LiveRoot{URL: "http://h/r.img", FSType: LiveExt4, Checksum: Checksum{Skip: true}}},
		{cmdline: "root=live:http://h/r?x=1 rootfstype=erofs", want: LiveRoot{URL: "http://h/r?x=1", FSType: "erofs", Checksum: Checksum{SumURL: "http://h/r?x=1.sha256"}}},
		{cmdline: "root=live:/run/rootfs.squashfs", want: LiveRoot{Path: "/run/rootfs.squashfs", FSType: LiveSquashfs}},
		{cmdline: "root=live:/dev/sr0/../sr0", want: LiveRoot{Path: "/dev/sr0", FSType: LiveSquashfs}},
		{cmdline: "root=live:", bad: "names no image"},
		{cmdline: "root=live:CDLABEL=x", bad: "not supported"},
		{cmdline: "root=live:http://h/r.squashfs cloudroot.live-sha256=abc", bad: "64 hex"},
	} {
		t.Run(tc.cmdline, func(t *testing.T) {
			got, ok, err := ParseCmdline(tc.cmdline).LiveRoot()
			if ok == tc.notLive {
				t.Fatalf("live = %v", ok)
			}
			if tc.bad != "" {
				if err == nil || !strings.Contains(err.Error(), tc.bad) {
					t.Fatalf("err = %v, want %q", err, tc.bad)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v, %v\nwant %+v", got, err, tc.want)
			}
		})
	}
}

func TestImage(t *testing.T) {
	for _, tc := range []struct {
		cmdline string
		want    Image
		none    bool
		bad     string
	}{
		{cmdline: "ro", none: true},
		{cmdline: "cloudroot.image=http://h/disk.img.zst cloudroot.image-target=/dev/vda",
			want: Image{URL: "http://h/disk.img.zst", Target: "/dev/vda", Compression: CompressZstd, Checksum: Checksum{SumURL: "http://h/disk.img.zst.sha256"}}},
		{cmdline: "cloudroot.image=http://h/disk.img.gz cloudroot.image-target=/dev/nvme0n1 cloudroot.image-overwrite cloudroot.image-sha256=" + sum,
			want: Image{URL: "http://h/disk.img.gz", Target: "/dev/nvme0n1", Compression: CompressGzip, Overwrite: true, Checksum: Checksum{SHA256: sum}}},
		{cmdline: "cloudroot.image=https://h/d.xz cloudroot.image-target=/dev/sda cloudroot.image-overwrite=0",
			want: Image{URL: "https://h/d.xz", Target: "/dev/sda", Compression: CompressXz, Checksum: Checksum{SumURL: "https://h/d.xz.sha256"}}},
		{cmdline: "cloudroot.image=http://h/d cloudroot.image-target=/dev/sda cloudroot.image-compression=zst cloudroot.image-sha256=none",
			want: Image{URL: "http://h/d", Target: "/dev/sda", Compression: CompressZstd, Checksum: Checksum{Skip: true}}},
		{cmdline: "cloudroot.image=http://h/d.img", bad: "/dev/"},
		{cmdline: "cloudroot.image=http://h/d.img cloudroot.image-target=/dev/../etc/x", bad: "/dev/"},
		{cmdline: "cloudroot.image=ftp://h/d.img cloudroot.image-target=/dev/vda", bad: "http(s)"},
		{cmdline: "cloudroot.image=http://h/d.img cloudroot.image-target=/dev/vda cloudroot.image-overwrite=maybe", bad: "boolean"},
		{cmdline: "cloudroot.image=http://h/d.img cloudroot.image-target=/dev/vda cloudroot.image-compression=lz4", bad: "not supported"},
	} {
		t.Run(tc.cmdline, func(t *testing.T) {
			got, ok, err := ParseCmdline(tc.cmdline).Image()
			if ok == tc.none {
				t.Fatalf("ok = %v", ok)
			}
			if tc.bad != "" {
				if err == nil || !strings.Contains(err.Error(), tc.bad) {
					t.Fatalf("err = %v, want %q", err, tc.bad)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v, %v\nwant %+v", got, err, tc.want)
			}
		})
	}
	if _, err := ParseCompression("lz4"); !errors.Is(err, ErrUnsupported) {
		t.Errorf("lz4: %v", err)
	}
}

func TestCloudConfigURL(t *testing.T) {
	for _, tc := range []struct{ in, key, url string }{
		{"ro cloud-config-url=http://h/c.yaml", "cloud-config-url", "http://h/c.yaml"},
		{"url=http://h/old", "url", "http://h/old"},
		{"url=http://a cloud-config-url=http://b", "cloud-config-url", "http://b"},
		{"ro", "", ""},
	} {
		k, u, ok := ParseCmdline(tc.in).CloudConfigURL()
		if k != tc.key || u != tc.url || ok != (tc.key != "") {
			t.Errorf("%q: got %q %q %v", tc.in, k, u, ok)
		}
	}
}

func TestDSSourceConfig(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want map[string]any
	}{
		{"ds=nocloud;s=http://h/", nil},
		{"ds=ec2;metadata_urls=http://10.1.1.1:50061,http://10.1.1.2", map[string]any{"metadata_urls": []any{"http://10.1.1.1:50061", "http://10.1.1.2"}}},
		{"ds=ec2;metadata_urls=http://h;strict_id=false", map[string]any{"metadata_urls": []any{"http://h"}, "strict_id": "false"}},
	} {
		d, _ := ParseCmdline(tc.in).DS()
		if got := d.SourceConfig(); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: got %#v, want %#v", tc.in, got, tc.want)
		}
	}
}

func FuzzNetbootCmdline(f *testing.F) {
	for _, s := range []string{
		"BOOTIF=01-52-54-00-12-34-56 root=live:http://h/r.squashfs cloudroot.live-sha256=" + sum,
		"cloudroot.image=http://h/d.img.xz cloudroot.image-target=/dev/vda cloudroot.image-overwrite=yes",
		"root=live:/x rootfstype=erofs ds=ec2;metadata_urls=http://a,http://b cloud-config-url=http://c",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c := ParseCmdline(s)
		if mac, ok, err := c.BootIF(); ok && err == nil && len(mac) != 6 {
			t.Fatalf("BootIF gave %d bytes", len(mac))
		}
		if l, ok, err := c.LiveRoot(); ok && err == nil {
			if (l.URL == "") == (l.Path == "") {
				t.Fatalf("live root %+v: exactly one of URL and Path", l)
			}
			if l.Checksum.SHA256 != "" && len(l.Checksum.SHA256) != 64 {
				t.Fatalf("checksum %q", l.Checksum.SHA256)
			}
		}
		if img, ok, err := c.Image(); ok && err == nil && !strings.HasPrefix(img.Target, "/dev/") {
			t.Fatalf("image target %q", img.Target)
		}
		if d, ok := c.DS(); ok {
			_ = d.SourceConfig()
		}
	})
}
