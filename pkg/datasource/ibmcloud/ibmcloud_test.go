package ibmcloud

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	diskfs "github.com/diskfs/go-diskfs"
	"github.com/diskfs/go-diskfs/disk"
	"github.com/diskfs/go-diskfs/filesystem"
	"github.com/diskfs/go-diskfs/filesystem/iso9660"
	"github.com/google/go-cmp/cmp"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/dstest"
	"github.com/cloudroot/cloudroot/pkg/netconfig"
)

// xenProc is a proc directory on Xen, with PID 1 started at boot.
func xenProc(t *testing.T, boot time.Time) string {
	t.Helper()
	p := t.TempDir()
	if err := os.MkdirAll(filepath.Join(p, "xen"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(p, "1"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := filepath.Join(p, "1", "environ")
	if err := os.WriteFile(env, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(env, boot, boot); err != nil {
		t.Fatal(err)
	}
	return p
}

type caseSpec struct {
	Label string `json:"label"`
	UUID  string `json:"uuid"`
	Type  string `json:"type"`
}

func readCase(t *testing.T, dir string) caseSpec {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "case.json"))
	if err != nil {
		t.Fatal(err)
	}
	var c caseSpec
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// distractors are disks that are not IBM's: an OpenStack config drive, a
// NoCloud seed, the root.
var distractors = []bootenv.Device{
	{Name: "xvda1", Path: "/dev/xvda1", FS: bootenv.FS{Type: "ext4", Label: "cloudimg-rootfs", UUID: "a8d3c4e2-3b9f-4c1e-9d2a-5f6e7d8c9b0a"}},
	{Name: "sr0", Path: "/dev/sr0", FS: bootenv.FS{Type: "iso9660", Label: "config-2", UUID: "2024-01-01-00-00-00-00"}},
	{Name: "xvdc", Path: "/dev/xvdc", FS: bootenv.FS{Type: "vfat", Label: "cidata", UUID: "1234-ABCD"}},
}

// upstreamDiffers are the fields of each case's upstream golden where
// cloudroot deliberately differs (docs/datasources.md).
var upstreamDiffers = map[string]dstest.Differs{}

func TestGolden(t *testing.T) {
	for _, name := range dstest.Cases(t, "testdata") {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("testdata", name)
			c := readCase(t, dir)
			dev := bootenv.Device{Name: "xvdh", Path: "/dev/xvdh", FS: bootenv.FS{Type: c.Type, Label: c.Label, UUID: c.UUID}}
			e := datasource.Env{
				Devices: append(append([]bootenv.Device(nil), distractors...), dev),
				OpenFS:  dstest.DirOpener(t, map[string]string{"/dev/xvdh": filepath.Join(dir, "disk")}),
			}
			d, err := (&Source{Proc: xenProc(t, time.Now()), HypervisorUUID: noUUID(t)}).Get(context.Background(), e)
			dstest.Upstream(t, dir, d, err, "", upstreamDiffers[name])
			if err != nil {
				t.Fatal(err)
			}
			dstest.Golden(t, filepath.Join(dir, "want.json"), d, "")
		})
	}
}

// TestNetworkConfig: OS-Code's network_data.json converts as OpenStack's;
// a template boot's network configuration is disabled.
func TestNetworkConfig(t *testing.T) {
	for name, want := range map[string]bool{"os-code": true, "template-live": false} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("testdata", name)
			c := readCase(t, dir)
			dev := bootenv.Device{Path: "/dev/xvdh", FS: bootenv.FS{Type: c.Type, Label: c.Label, UUID: c.UUID}}
			e := datasource.Env{Devices: []bootenv.Device{dev}, OpenFS: dstest.DirOpener(t, map[string]string{"/dev/xvdh": filepath.Join(dir, "disk")})}
			d, err := (&Source{Proc: xenProc(t, time.Now()), HypervisorUUID: noUUID(t)}).Get(context.Background(), e)
			if err != nil {
				t.Fatal(err)
			}
			nd, ok := d.NetworkConfig[datasource.NetworkKeyOpenStack]
			if ok != want {
				t.Fatalf("network config %v: want network_data %t", d.NetworkConfig, want)
			}
			if !want {
				b, _ := json.Marshal(d.NetworkConfig)
				cfg, err := netconfig.Parse(b, nil)
				if err != nil || !cfg.Disabled {
					t.Errorf("template network config %s: parsed %+v, %v; want disabled", b, cfg, err)
				}
				return
			}
			b, err := json.Marshal(nd)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := netconfig.ParseNetworkData(b, netconfig.MACs{"06:00:f1:bd:da:25": "eth0", "06:98:5e:d0:7f:86": "eth1"})
			if err != nil {
				t.Fatalf("ParseNetworkData: %v", err)
			}
			if cfg == nil || cfg.Disabled {
				t.Errorf("converted network config %+v", cfg)
			}
		})
	}
}

// writeImage writes the tree src into a new image of kind (vfat or
// iso9660) labelled label, with go-diskfs.
func writeImage(t *testing.T, out, kind, label, src string) {
	t.Helper()
	spec := disk.FilesystemSpec{Partition: 0, VolumeLabel: label}
	size := int64(40 << 20) // FAT32 needs 65525 clusters
	if kind == "iso9660" {
		size = 4 << 20
		spec.FSType = filesystem.TypeISO9660
		spec.WorkDir = t.TempDir()
	} else {
		spec.FSType = filesystem.TypeFat32
	}
	d, err := diskfs.Create(out, size, diskfs.SectorSizeDefault)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if kind == "iso9660" {
		d.LogicalBlocksize = 2048
	}
	fsys, err := d.CreateFilesystem(spec)
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(src, func(p string, de fs.DirEntry, err error) error {
		if err != nil || p == src {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		name := "/" + filepath.ToSlash(rel)
		if de.IsDir() {
			return fsys.Mkdir(name)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		f, err := fsys.OpenFile(name, os.O_CREATE|os.O_RDWR|os.O_TRUNC)
		if err != nil {
			return err
		}
		if _, err := f.Write(b); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
	if iso, ok := fsys.(*iso9660.FileSystem); ok {
		if err := iso.Finalize(iso9660.FinalizeOptions{RockRidge: true, VolumeIdentifier: label}); err != nil {
			t.Fatal(err)
		}
	}
}

// setFATSerial sets a FAT32 volume's serial number (its blkid UUID).
func setFATSerial(t *testing.T, img string, serial uint32) {
	t.Helper()
	f, err := os.OpenFile(img, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := []byte{byte(serial), byte(serial >> 8), byte(serial >> 16), byte(serial >> 24)}
	if _, err := f.WriteAt(b, 67); err != nil {
		t.Fatal(err)
	}
}

// probe describes img as bootenv sees a block device.
func probe(t *testing.T, img string) bootenv.Device {
	t.Helper()
	f, err := os.Open(img)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	fsi, err := bootenv.Probe(f, st.Size())
	if err != nil {
		t.Fatalf("probing %s: %v", img, err)
	}
	return bootenv.Device{Name: filepath.Base(img), Path: img, Size: st.Size(), FS: fsi}
}

// TestImages: real images written with go-diskfs, found by their probed
// label and UUID and read through the default OpenFS, give what the
// directories give.
func TestImages(t *testing.T) {
	for _, tc := range []struct {
		name, kind, label string
		platform          Platform
	}{
		{"os-code", "vfat", "config-2", OSCode},
		{"template-live", "iso9660", "METADATA", TemplateLiveMetadata},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := filepath.Join("testdata", tc.name, "disk")
			img := filepath.Join(t.TempDir(), tc.name+".img")
			writeImage(t, img, tc.kind, tc.label, src)
			if tc.kind == "vfat" {
				setFATSerial(t, img, 0x9796932E)
			}
			dev := probe(t, img)
			if tc.kind == "vfat" && dev.FS.UUID != ConfigUUID {
				t.Fatalf("probed UUID %q, want %s", dev.FS.UUID, ConfigUUID)
			}
			if !strings.EqualFold(dev.FS.Label, tc.label) || dev.FS.Type != tc.kind {
				t.Fatalf("probed %+v, want a %s labelled %s", dev.FS, tc.kind, tc.label)
			}
			proc := xenProc(t, time.Now())
			got, err := (&Source{Proc: proc, HypervisorUUID: noUUID(t)}).Get(context.Background(), datasource.Env{Devices: []bootenv.Device{dev}})
			if err != nil {
				t.Fatal(err)
			}
			if want := string(tc.platform) + " (" + img + ")"; got.Subplatform != want {
				t.Errorf("subplatform %q, want %q", got.Subplatform, want)
			}
			want, err := (&Source{Proc: proc, HypervisorUUID: noUUID(t)}).Get(context.Background(), datasource.Env{
				Devices: []bootenv.Device{{Path: "/dev/xvdh", FS: dev.FS}},
				OpenFS:  dstest.DirOpener(t, map[string]string{"/dev/xvdh": src}),
			})
			if err != nil {
				t.Fatal(err)
			}
			got.Subplatform = want.Subplatform
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("image differs from the directory (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDetect(t *testing.T) {
	cfg2 := func(path, label, uuid string) bootenv.Device {
		return bootenv.Device{Path: path, FS: bootenv.FS{Type: "vfat", Label: label, UUID: uuid}}
	}
	meta := func(path, label string) bootenv.Device {
		return bootenv.Device{Path: path, FS: bootenv.FS{Type: "iso9660", Label: label}}
	}
	for _, tc := range []struct {
		name     string
		facts    Facts
		platform Platform
		dev      string
		ok       bool
	}{
		{"not xen", Facts{Devices: []bootenv.Device{cfg2("/dev/xvdh", "config-2", ConfigUUID)}}, "", "", false},
		{"nothing", Facts{Xen: true}, "", "", false},
		{"os code", Facts{Xen: true, Devices: []bootenv.Device{cfg2("/dev/xvdh", "config-2", ConfigUUID)}}, OSCode, "/dev/xvdh", true},
		{"os code, upper label, lower uuid", Facts{Xen: true, Devices: []bootenv.Device{cfg2("/dev/xvdh", "CONFIG-2", "9796-932e")}}, OSCode, "/dev/xvdh", true},
		{"openstack config drive", Facts{Xen: true, Devices: []bootenv.Device{cfg2("/dev/sr0", "config-2", "1234-5678")}}, "", "", false},
		{"os code even while provisioning", Facts{Xen: true, Provisioning: true, Devices: []bootenv.Device{meta("/dev/xvda", "METADATA"), cfg2("/dev/xvdh", "config-2", ConfigUUID)}}, OSCode, "/dev/xvdh", true},
		{"template live", Facts{Xen: true, Devices: []bootenv.Device{meta("/dev/xvdh", "metadata")}}, TemplateLiveMetadata, "/dev/xvdh", true},
		{"template provisioning", Facts{Xen: true, Provisioning: true, Devices: []bootenv.Device{meta("/dev/xvdh", "METADATA")}}, TemplateProvisioningMetadata, "/dev/xvdh", true},
		{"template provisioning, no data", Facts{Xen: true, Provisioning: true}, TemplateProvisioningNodata, "", true},
		{"first by path", Facts{Xen: true, Devices: []bootenv.Device{meta("/dev/xvdi", "METADATA"), meta("/dev/xvdb", "METADATA")}}, TemplateLiveMetadata, "/dev/xvdb", true},
		{"foreign config-2 before IBM's", Facts{Xen: true, Devices: []bootenv.Device{cfg2("/dev/xvdz", "config-2", ConfigUUID), cfg2("/dev/sr0", "config-2", "2024-01-01-00-00-00-00")}}, OSCode, "/dev/xvdz", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, dev, ok := Detect(tc.facts)
			if p != tc.platform || dev.Path != tc.dev || ok != tc.ok {
				t.Errorf("Detect = %q %q %t, want %q %q %t", p, dev.Path, ok, tc.platform, tc.dev, tc.ok)
			}
			if ok && p.Provisioning() != (p == TemplateProvisioningMetadata || p == TemplateProvisioningNodata) {
				t.Errorf("%s.Provisioning() = %t", p, p.Provisioning())
			}
		})
	}
}

func TestIsXen(t *testing.T) {
	if !isXen(xenProc(t, time.Now()), bootenv.DMI{}) {
		t.Error("proc with xen/: not Xen")
	}
	if isXen(t.TempDir(), bootenv.DMI{SysVendor: "QEMU"}) {
		t.Error("QEMU without /proc/xen: Xen")
	}
	if !isXen(t.TempDir(), bootenv.DMI{SysVendor: "Xen\n"}) {
		t.Error("DMI sys_vendor Xen: not Xen")
	}
}

func TestProvisioning(t *testing.T) {
	boot := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	cfg := &fstest.MapFile{Data: []byte("prov"), ModTime: boot.Add(-time.Hour)}
	logAt := func(t time.Time) *fstest.MapFile { return &fstest.MapFile{Data: []byte("log"), ModTime: t} }
	noRef := t.TempDir()
	for _, tc := range []struct {
		name string
		root fs.FS
		proc string
		want bool
	}{
		{"no root", nil, xenProc(t, boot), false},
		{"no config", fstest.MapFS{"root/swinstall.log": logAt(boot.Add(time.Minute))}, xenProc(t, boot), false},
		{"config, no log", fstest.MapFS{"root/provisioningConfiguration.cfg": cfg}, xenProc(t, boot), true},
		{"log from this boot", fstest.MapFS{"root/provisioningConfiguration.cfg": cfg, "root/swinstall.log": logAt(boot.Add(time.Minute))}, xenProc(t, boot), true},
		{"log from the previous boot", fstest.MapFS{"root/provisioningConfiguration.cfg": cfg, "root/swinstall.log": logAt(boot.Add(-time.Minute))}, xenProc(t, boot), false},
		{"log, no reference", fstest.MapFS{"root/provisioningConfiguration.cfg": cfg, "root/swinstall.log": logAt(boot.Add(time.Minute))}, noRef, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := isProvisioning(tc.root, tc.proc, slog.New(slog.DiscardHandler)); got != tc.want {
				t.Errorf("isProvisioning = %t, want %t", got, tc.want)
			}
		})
	}
}

func TestNotFound(t *testing.T) {
	boot := time.Now().Add(-time.Hour)
	prov := fstest.MapFS{"root/provisioningConfiguration.cfg": {Data: []byte("x")}}
	metaDev := bootenv.Device{Path: "/dev/xvdh", FS: bootenv.FS{Type: "iso9660", Label: "METADATA"}}
	for _, tc := range []struct {
		name string
		src  Source
		env  datasource.Env
		want string
	}{
		{"not xen", Source{Proc: t.TempDir()}, datasource.Env{Devices: []bootenv.Device{metaDev}}, "not on Xen"},
		{"no disk", Source{Proc: xenProc(t, boot)}, datasource.Env{Devices: distractors}, "no disk labelled METADATA"},
		{"provisioning with data", Source{Proc: xenProc(t, boot)}, datasource.Env{Root: prov, Devices: []bootenv.Device{metaDev}}, "disabled during provisioning (Template/Provisioning/Metadata)"},
		{"provisioning without data", Source{Proc: xenProc(t, boot)}, datasource.Env{Root: prov}, "disabled during provisioning (Template/Provisioning/No-Metadata)"},
		{"nothing at all", Source{Proc: t.TempDir()}, datasource.Env{}, "not on Xen"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.env.OpenFS = dstest.DirOpener(t, nil)
			_, err := tc.src.Get(context.Background(), tc.env)
			if !errors.Is(err, datasource.ErrNotFound) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want ErrNotFound containing %q", err, tc.want)
			}
		})
	}
}

func TestBroken(t *testing.T) {
	md := &fstest.MapFile{Data: []byte(`{"uuid": "u"}`)}
	for _, tc := range []struct {
		name  string
		files fstest.MapFS
		want  string
	}{
		{"no meta_data.json", fstest.MapFS{"openstack/latest/user_data": {Data: []byte("x")}}, "missing required file 'openstack/latest/meta_data.json'"},
		{"meta_data.json a list", fstest.MapFS{"openstack/latest/meta_data.json": {Data: []byte(`["uuid"]`)}}, "expected a JSON object"},
		{"bad random_seed", fstest.MapFS{"openstack/latest/meta_data.json": {Data: []byte(`{"uuid": "u", "random_seed": "abc"}`)}}, "badly formatted metadata random_seed"},
		{"random_seed not text", fstest.MapFS{"openstack/latest/meta_data.json": {Data: []byte(`{"uuid": "u", "random_seed": 7}`)}}, "badly formatted metadata random_seed"},
		{"bad vendor_data.json", fstest.MapFS{"openstack/latest/meta_data.json": md, "openstack/latest/vendor_data.json": {Data: []byte("{x")}}, "decoding openstack/latest/vendor_data.json"},
		{"bad network_data.json", fstest.MapFS{"openstack/latest/meta_data.json": md, "openstack/latest/network_data.json": {Data: []byte("[1]")}}, "decoding openstack/latest/network_data.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dev := bootenv.Device{Path: "/dev/xvdh", FS: bootenv.FS{Type: "vfat", Label: "config-2", UUID: ConfigUUID}}
			e := datasource.Env{Devices: []bootenv.Device{dev}, OpenFS: func(bootenv.Device) (fs.FS, func(), error) { return tc.files, func() {}, nil }}
			_, err := (&Source{Proc: xenProc(t, time.Now()), HypervisorUUID: noUUID(t)}).Get(context.Background(), e)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "/dev/xvdh") || !errors.Is(err, ErrBroken) {
				t.Fatalf("err = %v, want ErrBroken naming /dev/xvdh, containing %q", err, tc.want)
			}
			if errors.Is(err, datasource.ErrNotFound) {
				t.Errorf("a broken disk is not ErrNotFound: %v", err)
			}
		})
	}
}

// TestConform: the cases every volume source shares, on Xen.
func TestConform(t *testing.T) {
	dstest.ConformMedia(t, dstest.Media{Source: &Source{Proc: xenProc(t, time.Now()), HypervisorUUID: noUUID(t)},
		Device: bootenv.Device{Name: "xvdh", Path: "/dev/xvdh", FS: bootenv.FS{Type: "iso9660", Label: "METADATA"}},
		Root:   "testdata/os-code/disk", Doc: "openstack/latest/meta_data.json",
		WhyEmptyBroken: "cloud-init's IBMCloud reads the one disk its detection chose: a METADATA disk without openstack/latest/meta_data.json is BrokenMetadata"})
}

func TestMetaData(t *testing.T) {
	md, err := ParseMetaData([]byte(`{"uuid": "u-1", "hostname": "h", "name": "n", "public_keys": {"k": "ssh-rsa A"}, "random_seed": "bm90LX\nJhbmRvbQo=", "meta": {"dsmode": "local"}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"instance-id": "u-1", "local-hostname": "h", "public-keys": map[string]any{"k": "ssh-rsa A"}, "random_seed": "bm90LX\nJhbmRvbQo="}
	if diff := cmp.Diff(want, md); diff != "" {
		t.Errorf("meta-data (-want +got):\n%s", diff)
	}
	d, err := Build(Input{Platform: OSCode, Source: "/dev/x", MetaData: []byte(`{"hostname": "h"}`)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d.InstanceID() != DefaultInstanceID || d.NetworkConfig != nil {
		t.Errorf("no uuid: instance-id %q, network %v; want %s and none", d.InstanceID(), d.NetworkConfig, DefaultInstanceID)
	}
	// Vendor data convert_vendordata rejects is dropped with a warning.
	var b strings.Builder
	d, err = Build(Input{Platform: OSCode, Source: "/dev/x", MetaData: []byte(`{}`), VendorData: []byte(`{"cloud-init": {"a": 1}}`)},
		slog.New(slog.NewTextHandler(&b, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if d.VendorData != nil || !strings.Contains(b.String(), "invalid content in vendor-data") {
		t.Errorf("vendor-data %q, log %q: want none and a warning", d.VendorData, b.String())
	}
}

// FuzzBuild feeds arbitrary meta_data.json, vendor_data.json and
// network_data.json to the parser.
func FuzzBuild(f *testing.F) {
	for _, c := range []string{"os-code", "template-live", "os-code-no-userdata"} {
		read := func(p string) []byte { b, _ := os.ReadFile(filepath.Join("testdata", c, "disk", p)); return b }
		f.Add(read(PathMetaData), read(PathVendorData), read(PathNetworkData), true)
	}
	f.Add([]byte(`{"random_seed": "=", "public_keys": [1, {"a": null}]}`), []byte(`["x", 1]`), []byte(`{}`), false)
	f.Fuzz(func(t *testing.T, md, vd, nd []byte, osCode bool) {
		p := TemplateLiveMetadata
		if osCode {
			p = OSCode
		}
		d, err := Build(Input{Platform: p, Source: "/dev/fuzz", MetaData: md, VendorData: vd, NetworkData: nd, UserData: md}, nil)
		if err != nil {
			if !errors.Is(err, ErrBroken) {
				t.Fatalf("error %v is not ErrBroken", err)
			}
			return
		}
		if _, ok := d.MetaData["instance-id"]; !ok || d.Name != "IBMCloud" {
			t.Fatalf("bad data %+v", d)
		}
		for k := range d.MetaData {
			switch k {
			case "instance-id", "local-hostname", "public-keys", "random_seed":
			default:
				t.Fatalf("meta-data key %q kept", k)
			}
		}
		if _, err := json.Marshal(dstest.ViewOf(d)); err != nil {
			t.Fatal(err)
		}
		_ = d.Description()
	})
}

// noUUID is a hypervisor UUID file that does not exist (tests never read
// the host's /sys/hypervisor/uuid).
func noUUID(t *testing.T) string {
	return filepath.Join(t.TempDir(), "no-uuid")
}

// TestCheckInstanceID: the system UUID read with the data is kept and
// compared on a later boot.
func TestCheckInstanceID(t *testing.T) {
	dir := t.TempDir()
	uuidFile := filepath.Join(dir, "uuid")
	if err := os.WriteFile(uuidFile, []byte("f5e6b1c2-aaaa-bbbb-cccc-0123456789ab\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := &Source{HypervisorUUID: uuidFile}
	cached := &datasource.Data{MetaData: map[string]any{"instance-id": "i-1"}, DS: map[string]any{"system-uuid": "f5e6b1c2-aaaa-bbbb-cccc-0123456789ab"}}
	if !src.CheckInstanceID(datasource.Env{}, cached) {
		t.Error("same system UUID not accepted")
	}
	if err := os.WriteFile(uuidFile, []byte("00000000-aaaa-bbbb-cccc-0123456789ab\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if src.CheckInstanceID(datasource.Env{}, cached) {
		t.Error("another system UUID accepted")
	}
	if (&Source{HypervisorUUID: noUUID(t)}).CheckInstanceID(datasource.Env{}, cached) {
		t.Error("accepted without a system UUID")
	}
	if src.CheckInstanceID(datasource.Env{}, &datasource.Data{}) {
		t.Error("accepted a cache without a kept UUID")
	}
}

// TestGetKeepsSystemUUID: Get records the system UUID for the later check.
func TestGetKeepsSystemUUID(t *testing.T) {
	dir := filepath.Join("testdata", "os-code")
	c := readCase(t, dir)
	dev := bootenv.Device{Name: "xvdh", Path: "/dev/xvdh", FS: bootenv.FS{Type: c.Type, Label: c.Label, UUID: c.UUID}}
	uuidFile := filepath.Join(t.TempDir(), "uuid")
	if err := os.WriteFile(uuidFile, []byte("f5e6b1c2-aaaa-bbbb-cccc-0123456789ab\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := &Source{Proc: xenProc(t, time.Now()), HypervisorUUID: uuidFile}
	d, err := src.Get(context.Background(), datasource.Env{Devices: []bootenv.Device{dev}, OpenFS: dstest.DirOpener(t, map[string]string{"/dev/xvdh": filepath.Join(dir, "disk")})})
	if err != nil {
		t.Fatal(err)
	}
	if got := d.DS["system-uuid"]; got != "f5e6b1c2-aaaa-bbbb-cccc-0123456789ab" {
		t.Errorf("ds.system-uuid = %v", got)
	}
	if !src.CheckInstanceID(datasource.Env{}, d) {
		t.Error("its own data does not check")
	}
}
