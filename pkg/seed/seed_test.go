package seed

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/datasource/nocloud"
)

func mustMetaData(id, host string) []byte {
	b, err := MetaData(id, host)
	if err != nil {
		panic(err)
	}
	return b
}

var testFiles = Files{
	MetaData:      mustMetaData("iid-seed-test", "seedhost"),
	UserData:      []byte("#cloud-config\nhostname: from-user-data\n"),
	NetworkConfig: []byte("version: 2\nethernets:\n  eth0:\n    dhcp4: true\n"),
	VendorData:    []byte("#cloud-config\npackages: [vim]\n"),
}

func probe(t *testing.T, path string) bootenv.FS {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	got, err := bootenv.Probe(f, st.Size())
	if err != nil {
		t.Fatalf("probe %s: %v", path, err)
	}
	return got
}

func TestWriteReadBack(t *testing.T) {
	for _, tc := range []struct {
		format      Format
		typ, label  string
		blkidType   string
		blkidLabel  string
		wantVersion string
	}{
		{FormatISO, "iso9660", LabelISO, "iso9660", LabelISO, ""},
		{FormatVFAT, "vfat", LabelVFAT, "vfat", LabelVFAT, "FAT32"},
	} {
		t.Run(string(tc.format), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "seed.img")
			if err := Write(out, tc.format, testFiles); err != nil {
				t.Fatal(err)
			}
			// Written twice: the second replaces the first.
			if err := Write(out, tc.format, testFiles); err != nil {
				t.Fatal(err)
			}
			if m, _ := filepath.Glob(filepath.Join(filepath.Dir(out), ".*tmp")); len(m) > 0 {
				t.Errorf("temporary files left: %v", m)
			}
			fs := probe(t, out)
			if fs.Type != tc.typ || fs.Label != tc.label {
				t.Errorf("probe = %+v, want type %s label %s", fs, tc.typ, tc.label)
			}
			if tc.wantVersion != "" && fs.Version != tc.wantVersion {
				t.Errorf("version %q, want %q", fs.Version, tc.wantVersion)
			}
			d, err := nocloud.ReadDevice(out, nocloud.Overrides{})
			if err != nil {
				t.Fatal(err)
			}
			if d.InstanceID() != "iid-seed-test" || d.LocalHostname() != "seedhost" {
				t.Errorf("instance-id %q hostname %q", d.InstanceID(), d.LocalHostname())
			}
			if !bytes.Equal(d.UserData, testFiles.UserData) {
				t.Errorf("user-data %q", d.UserData)
			}
			if !bytes.Equal(d.VendorData, testFiles.VendorData) {
				t.Errorf("vendor-data %q", d.VendorData)
			}
			if d.NetworkConfig == nil {
				t.Error("no network-config")
			}
			if _, err := exec.LookPath("blkid"); err != nil {
				t.Log("no blkid: not compared")
				return
			}
			b, err := exec.Command("blkid", "-p", "-o", "export", out).Output()
			if err != nil {
				t.Skipf("blkid -p %s: %v", out, err)
			}
			kv := map[string]string{}
			for _, l := range strings.Split(string(b), "\n") {
				if k, v, ok := strings.Cut(l, "="); ok {
					kv[k] = v
				}
			}
			if kv["TYPE"] != tc.blkidType || kv["LABEL"] != tc.blkidLabel {
				t.Errorf("blkid: TYPE=%q LABEL=%q, want %q %q\n%s", kv["TYPE"], kv["LABEL"], tc.blkidType, tc.blkidLabel, b)
			}
			if fs.UUID != "" && kv["UUID"] != fs.UUID {
				t.Errorf("blkid UUID %q, probe %q", kv["UUID"], fs.UUID)
			}
		})
	}
}

func TestMinimal(t *testing.T) {
	for _, f := range []Format{FormatISO, FormatVFAT} {
		out := filepath.Join(t.TempDir(), "seed")
		if err := Write(out, f, Files{MetaData: mustMetaData("", "")}); err != nil {
			t.Fatal(err)
		}
		d, err := nocloud.ReadDevice(out, nocloud.Overrides{})
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if d.InstanceID() != DefaultInstanceID || len(d.UserData) != 0 || d.VendorData != nil {
			t.Errorf("%s: %q %q %q", f, d.InstanceID(), d.UserData, d.VendorData)
		}
	}
}

func TestWriteErrors(t *testing.T) {
	dir := t.TempDir()
	if err := Write(filepath.Join(dir, "x"), FormatISO, Files{}); err == nil {
		t.Error("no meta-data: no error")
	}
	if err := Write(filepath.Join(dir, "x"), "ext4", Files{MetaData: []byte("{}")}); err == nil {
		t.Error("ext4: no error")
	}
	if err := Write(filepath.Join(dir, "missing", "x"), FormatISO, Files{MetaData: []byte("{}")}); err == nil {
		t.Error("missing directory: no error")
	}
}

func TestParseFormat(t *testing.T) {
	for in, want := range map[string]Format{"iso": FormatISO, "ISO9660": FormatISO, "vfat": FormatVFAT, "fat32": FormatVFAT, "fat": FormatVFAT} {
		if got, err := ParseFormat(in); err != nil || got != want {
			t.Errorf("ParseFormat(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseFormat("ext4"); err == nil {
		t.Error("ext4 accepted")
	}
}

func TestMetaData(t *testing.T) {
	for _, tc := range []struct{ id, host string }{
		{"", ""}, {"i-1", "h"}, {"yes", "null"}, {"a: b", "#x"}, {"0123", "-"}, {" x ", "'q\""},
	} {
		var m map[string]any
		if err := yaml.Unmarshal(mustMetaData(tc.id, tc.host), &m); err != nil {
			t.Fatal(err)
		}
		id := tc.id
		if id == "" {
			id = DefaultInstanceID
		}
		if m["instance-id"] != id {
			t.Errorf("%q: instance-id %#v", tc.id, m["instance-id"])
		}
		if h, ok := m["local-hostname"]; tc.host == "" && ok || tc.host != "" && h != tc.host {
			t.Errorf("%q: local-hostname %#v", tc.host, h)
		}
	}
}

func FuzzMetaData(f *testing.F) {
	f.Add("iid-local01", "host")
	f.Add("yes", "~")
	f.Add("\n", "0")
	f.Fuzz(func(t *testing.T, id, host string) {
		b, err := MetaData(id, host)
		if err != nil {
			return // refused, not written wrong
		}
		var m map[string]any
		if err := yaml.Unmarshal(b, &m); err != nil {
			t.Fatalf("%q %q: %v", id, host, err)
		}
		if id == "" {
			id = DefaultInstanceID
		}
		if m["instance-id"] != id {
			t.Errorf("instance-id %#v, want %q", m["instance-id"], id)
		}
	})
}

func TestMetaDataRefused(t *testing.T) {
	for _, v := range []string{"\n", "a\tb", "\xff"} {
		if _, err := MetaData(v, ""); err == nil {
			t.Errorf("instance-id %q accepted", v)
		}
		if _, err := MetaData("", v); err == nil {
			t.Errorf("hostname %q accepted", v)
		}
	}
}
