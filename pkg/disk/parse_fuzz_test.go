package disk

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/cloudroot/cloudroot/pkg/yaml11"
)

// fuzzDeviceEnv is a machine with a partitioned vda, a whole vdb (the
// ephemeral disk) and a partitioned sdb.
func fuzzDeviceEnv() DeviceEnv {
	devs := []string{"/dev/vda", "/dev/vda1", "/dev/vdb", "/dev/sdb", "/dev/sdb1", "/dev/sdb2"}
	meta := map[string]string{"ephemeral0": "vdb", "swap": "sdb2", "root": "/dev/vda1"}
	return DeviceEnv{
		Meta:   func(n string) string { return meta[n] },
		Exists: func(p string) bool { return slices.Contains(devs, p) },
	}
}

// fuzzCloudConfig decodes cloud-config text as the boot does (YAML 1.1);
// ok is false for text that is not a mapping.
func fuzzCloudConfig(s string) (map[string]any, bool) {
	m, _, err := yaml11.LoadMap("user-data", []byte(s))
	return m, err == nil
}

// FuzzParseMountInfo: no panic on any input, and what is parsed survives
// being written back as the kernel writes mountinfo (octal escapes for
// space, tab, newline and backslash) and parsed again.
func FuzzParseMountInfo(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		mounts, err := ParseMountInfo(bytes.NewReader(b))
		if err != nil {
			if !strings.Contains(err.Error(), "mountinfo") {
				t.Fatalf("error %q does not name its source", err)
			}
			return
		}
		var out strings.Builder
		for i, m := range mounts {
			if m.Options == "" || m.FSType == "" || m.Source == "" || m.MountPoint == "" || m.Root == "" {
				t.Fatalf("mount %d has an empty field: %+v", i, m)
			}
			fmt.Fprintf(&out, "%d 1 %d:%d %s %s %s shared:1 - %s %s rw\n", i+20, m.Major, m.Minor,
				escapeMount(m.Root), escapeMount(m.MountPoint), m.Options, m.FSType, escapeMount(m.Source))
		}
		again, err := ParseMountInfo(strings.NewReader(out.String()))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(mounts, again); diff != "" {
			t.Fatalf("re-parsing %q (-first +again):\n%s", out.String(), diff)
		}
	})
}

// escapeMount is the kernel's mangle(): space, tab, newline and backslash
// as three-digit octal escapes.
func escapeMount(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case ' ', '\t', '\n', '\\':
			fmt.Fprintf(&b, `\%03o`, c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// FuzzRenderFstab: cc_mounts on any fstab and any cloud-config never
// panics; what it writes is stable (rendering its own output again with
// the same config gives the same file); every generated line is tagged,
// and the image's own lines are kept, in order.
func FuzzRenderFstab(f *testing.F) {
	f.Fuzz(func(t *testing.T, fstab []byte, config string) {
		cfg, ok := fuzzCloudConfig(config)
		if !ok {
			return
		}
		mc := MountsConfig{}
		if m, ok := cfg["mounts"].([]any); ok {
			mc.Mounts = m
		}
		if v, ok := cfg["mount_default_fields"]; ok && v != nil {
			fields, err := ParseDefaultFields(v)
			if err != nil {
				if !strings.Contains(err.Error(), "mount_default_fields") {
					t.Fatalf("error %q does not name the key", err)
				}
				return
			}
			mc.DefaultFields = fields
		}
		env := fuzzDeviceEnv()
		res := RenderFstab(fstab, mc, env)
		if !res.Write {
			if !bytes.Equal(res.Content, fstab) {
				t.Fatal("fstab changed without a write")
			}
			return
		}
		var kept []string
		for l := range strings.SplitSeq(string(fstab), "\n") {
			if !strings.Contains(l, MountComment) && strings.TrimSpace(l) != "" {
				kept = append(kept, l)
			}
		}
		lines := strings.Split(strings.TrimSuffix(string(res.Content), "\n"), "\n")
		if len(lines) != len(kept)+len(res.Entries) {
			t.Fatalf("%d lines written for %d kept and %d generated:\n%s", len(lines), len(kept), len(res.Entries), res.Content)
		}
		if diff := cmp.Diff(kept, lines[:len(kept)], cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("image lines not kept (-want +got):\n%s", diff)
		}
		for _, l := range lines[len(kept):] {
			if !strings.Contains(l, MountComment) {
				t.Fatalf("generated line %q is not tagged", l)
			}
		}
		again := RenderFstab(res.Content, mc, env)
		if !again.Write || !bytes.Equal(again.Content, res.Content) {
			t.Fatalf("not stable:\nfirst:\n%s\nagain:\n%s", res.Content, again.Content)
		}
	})
}

// FuzzParseSetup: disk_setup, fs_setup and device_aliases of any
// cloud-config decode without panicking; each warning names the key it is
// about, and what is accepted is a table type cloudroot can write.
func FuzzParseSetup(f *testing.F) {
	f.Fuzz(func(t *testing.T, config string) {
		cfg, ok := fuzzCloudConfig(config)
		if !ok {
			return
		}
		sc, warns := ParseSetup(cfg, fuzzDeviceEnv())
		for _, w := range warns {
			if !strings.HasPrefix(w, "disk_setup") && !strings.HasPrefix(w, "fs_setup") && !strings.HasPrefix(w, "device_aliases") {
				t.Fatalf("warning %q does not name its key", w)
			}
		}
		for name, d := range sc.Disks {
			if d.TableType != "mbr" && d.TableType != "gpt" {
				t.Fatalf("disk %s: table type %q accepted", name, d.TableType)
			}
		}
		if _, ok := cfg["disk_setup"].(map[string]any); !ok && len(sc.Disks) > 0 {
			t.Fatal("disks without a disk_setup mapping")
		}
		if _, ok := cfg["fs_setup"].([]any); !ok && len(sc.Filesystems) > 0 {
			t.Fatal("filesystems without an fs_setup list")
		}
	})
}

// The kernel separates mountinfo fields with single spaces and escapes
// only space, tab, newline and backslash: other white space (a UTF-8
// no-break space, a carriage return) is part of a path.
func TestParseMountInfoSeparators(t *testing.T) {
	in := "29 28 0:26 / /mnt/\u00a0nbsp rw shared:2 - tmpfs tmp\rfs rw\n" +
		"30 28 8:1 /a\\040b /srv/x\\011y rw - ext4 /dev/sda1 rw\n"
	got, err := ParseMountInfo(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []Mount{
		{Major: 0, Minor: 26, Root: "/", MountPoint: "/mnt/\u00a0nbsp", Options: "rw", FSType: "tmpfs", Source: "tmp\rfs"},
		{Major: 8, Minor: 1, Root: "/a b", MountPoint: "/srv/x\ty", Options: "rw", FSType: "ext4", Source: "/dev/sda1"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
