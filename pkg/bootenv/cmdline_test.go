package bootenv

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseCmdline(t *testing.T) {
	for _, tc := range []struct {
		name   string
		in     string
		params []Param
		init   []string
	}{
		{"empty", "", nil, nil},
		{"spaces and newline", "  quiet\t ro \n", []Param{{Key: "quiet"}, {Key: "ro"}}, nil},
		{"key value", "root=/dev/vda1 console=ttyS0,115200n8",
			[]Param{{"root", "/dev/vda1", true}, {"console", "ttyS0,115200n8", true}}, nil},
		{"empty value", "foo= bar", []Param{{"foo", "", true}, {Key: "bar"}}, nil},
		{"value with equals", "ds=nocloud;s=http://10.0.2.2:8000/?a=b",
			[]Param{{"ds", "nocloud;s=http://10.0.2.2:8000/?a=b", true}}, nil},
		{"quoted value", `foo="bar baz" next`, []Param{{"foo", "bar baz", true}, {Key: "next"}}, nil},
		{"quoted token", `"foo=bar baz" next`, []Param{{"foo", "bar baz", true}, {Key: "next"}}, nil},
		{"quoted flag", `"a b"`, []Param{{Key: "a b"}}, nil},
		{"quote mid value kept", `foo=a"b c"d e`, []Param{{"foo", `a"b c"d`, true}, {Key: "e"}}, nil},
		{"unterminated quote", `foo="bar baz`, []Param{{"foo", "bar baz", true}}, nil},
		{"lone quote", `"`, []Param{{Key: ""}}, nil},
		{"dashes end kernel params", "ro -- single foo=bar \"x y\"",
			[]Param{{Key: "ro"}}, []string{"single", "foo=bar", "x y"}},
		{"second dashes are init's", "-- a -- b", nil, []string{"a", "--", "b"}},
		{"dashes with value are a param", "--=x", []Param{{"--", "x", true}}, nil},
		{"ds with spaces quoted", `ds="nocloud;s=http://x/;h=my host" quiet`,
			[]Param{{"ds", "nocloud;s=http://x/;h=my host", true}, {Key: "quiet"}}, nil},
		{"dotted keys", "ci.ds=NoCloud ci.datasource=Ec2",
			[]Param{{"ci.ds", "NoCloud", true}, {"ci.datasource", "Ec2", true}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := ParseCmdline(tc.in)
			if diff := cmp.Diff(tc.params, c.Params()); diff != "" {
				t.Errorf("params (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.init, c.InitArgs()); diff != "" {
				t.Errorf("init args (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCmdlineLookup(t *testing.T) {
	c := ParseCmdline(`console=tty0 console=ttyS0 quiet cloud-init=disabled -- console=init`)
	if v, ok := c.Get("console"); !ok || v != "ttyS0" {
		t.Errorf("Get(console) = %q, %v; want ttyS0 (last wins, not after --)", v, ok)
	}
	if diff := cmp.Diff([]string{"tty0", "ttyS0"}, c.All("console")); diff != "" {
		t.Errorf("All(console) (-want +got):\n%s", diff)
	}
	if v, ok := c.Get("quiet"); !ok || v != "" {
		t.Errorf("Get(quiet) = %q, %v; want \"\", true", v, ok)
	}
	if !c.Has("quiet") || !c.Has("console") || c.Has("splash") {
		t.Error("Has mismatch")
	}
	if !c.Disabled() {
		t.Error("Disabled() = false")
	}
	if ParseCmdline("cloud-init=enabled").Disabled() || ParseCmdline("cloud-init").Disabled() {
		t.Error("Disabled() true without cloud-init=disabled")
	}
	if got := c.String(); got != `console=tty0 console=ttyS0 quiet cloud-init=disabled -- console=init` {
		t.Errorf("String() = %q", got)
	}
}

func TestRoot(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    RootSpec
		wantErr error // nil: no error; errAny: some error
	}{
		{in: "root=LABEL=cloudimg-rootfs ro", want: RootSpec{Kind: ByLabel, Value: "cloudimg-rootfs", ReadOnly: true}},
		{in: "root=UUID=6F1C8D2E-7A4B-4C3D-9E5F-0A1B2C3D4E5F", want: RootSpec{Kind: ByUUID, Value: "6F1C8D2E-7A4B-4C3D-9E5F-0A1B2C3D4E5F"}},
		{in: "root=PARTUUID=5eed1234-01 rootwait rootdelay=3", want: RootSpec{Kind: ByPartUUID, Value: "5eed1234-01", Wait: true, Delay: 3 * time.Second}},
		{in: "root=PARTUUID=5eed1234-01/PARTNROFF=1", wantErr: ErrUnsupported},
		{in: "root=PARTLABEL=root", want: RootSpec{Kind: ByPartLabel, Value: "root"}},
		{in: "root=/dev/vda1 rootfstype=ext4 rootflags=noatime,discard init=/sbin/init.real",
			want: RootSpec{Kind: ByPath, Value: "/dev/vda1", FSType: "ext4", Flags: "noatime,discard", Init: "/sbin/init.real"}},
		{in: "root=vda1", want: RootSpec{Kind: ByPath, Value: "/dev/vda1"}},
		{in: `root=/dev/disk/by-label/my\x20root`, want: RootSpec{Kind: ByLabel, Value: "my root"}},
		{in: "root=/dev/disk/by-uuid/abcd-1234", want: RootSpec{Kind: ByUUID, Value: "abcd-1234"}},
		{in: "root=/dev/disk/by-partuuid/5eed1234-02", want: RootSpec{Kind: ByPartUUID, Value: "5eed1234-02"}},
		{in: "root=/dev/disk/by-partlabel/root", want: RootSpec{Kind: ByPartLabel, Value: "root"}},
		{in: "root=/dev/disk/by-id/virtio-abc", want: RootSpec{Kind: ByPath, Value: "/dev/disk/by-id/virtio-abc"}},
		{in: "root=fe01", want: RootSpec{Kind: ByDevNum, Value: "fe01", Major: 254, Minor: 1}},
		{in: "root=801", want: RootSpec{Kind: ByDevNum, Value: "801", Major: 8, Minor: 1}},
		{in: "root=253:16", want: RootSpec{Kind: ByDevNum, Value: "253:16", Major: 253, Minor: 16}},
		{in: "root=LABEL=x ro rw", want: RootSpec{Kind: ByLabel, Value: "x"}},
		{in: "root=LABEL=x rw ro", want: RootSpec{Kind: ByLabel, Value: "x", ReadOnly: true}},
		{in: "root=LABEL=a root=LABEL=b", want: RootSpec{Kind: ByLabel, Value: "b"}},
		{in: `root="LABEL=with space"`, want: RootSpec{Kind: ByLabel, Value: "with space"}},
		{in: "root=LABEL=x rootdelay=abc", want: RootSpec{Kind: ByLabel, Value: "x"}},
		{in: "quiet", wantErr: ErrNoRoot},
		{in: "root=", wantErr: errAny},
		{in: "root=LABEL=", wantErr: errAny},
		{in: "root=ZFS=rpool/root", wantErr: errAny},
		{in: "root=LABEL=x -- root=LABEL=y", want: RootSpec{Kind: ByLabel, Value: "x"}},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseCmdline(tc.in).Root()
			switch {
			case tc.wantErr == errAny:
				if err == nil {
					t.Fatalf("Root() = %+v, want an error", got)
				}
				return
			case tc.wantErr != nil:
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("Root() error = %v, want %v", err, tc.wantErr)
				}
				return
			case err != nil:
				t.Fatalf("Root(): %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

var errAny = errors.New("any error")

func TestRootSpecString(t *testing.T) {
	for in, want := range map[string]string{
		"LABEL=x":        "LABEL=x",
		"/dev/vda1":      "/dev/vda1",
		"fe01":           "254:1",
		"PARTUUID=ab-01": "PARTUUID=ab-01",
	} {
		spec, err := ParseRoot(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := spec.String(); got != want {
			t.Errorf("ParseRoot(%q).String() = %q, want %q", in, got, want)
		}
	}
}

func TestDS(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want DSArg
		ok   bool
	}{
		{"quiet", DSArg{}, false},
		{"ds=nocloud", DSArg{Name: "nocloud"}, true},
		{"ds=nocloud;s=http://10.0.2.2:8000/;i=iid-01;h=myhost", DSArg{
			Name: "nocloud", SeedFrom: "http://10.0.2.2:8000/", InstanceID: "iid-01", Hostname: "myhost",
			Raw: map[string]string{"s": "http://10.0.2.2:8000/", "i": "iid-01", "h": "myhost"},
		}, true},
		{"ds=nocloud-net;seedfrom=http://x/?a=b;instance-id=i;local-hostname=h;", DSArg{
			Name: "nocloud-net", SeedFrom: "http://x/?a=b", InstanceID: "i", Hostname: "h",
			Raw: map[string]string{"seedfrom": "http://x/?a=b", "instance-id": "i", "local-hostname": "h"},
		}, true},
		{`ds="nocloud;s=file:///seed/;h=host with space"`, DSArg{
			Name: "nocloud", SeedFrom: "file:///seed/", Hostname: "host with space",
			Raw: map[string]string{"s": "file:///seed/", "h": "host with space"},
		}, true},
		{"ci.ds=Ec2", DSArg{Name: "Ec2"}, true},
		{"ds=nocloud ci.datasource=OpenStack", DSArg{Name: "OpenStack"}, true},
		{"ds=nocloud;dsmode=net;flag", DSArg{Name: "nocloud", Raw: map[string]string{"dsmode": "net", "flag": ""}}, true},
		{"ds", DSArg{}, false},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, ok := ParseCmdline(tc.in).DS()
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestDSArgModes(t *testing.T) {
	for _, tc := range []struct {
		in               string
		nocloud, network bool
	}{
		{"nocloud", true, false},
		{"NoCloud-Net", true, true},
		{"nocloud;s=https://seed/", true, true},
		{"nocloud;s=ftps://seed/", true, true},
		{"nocloud-net;s=file:///var/seed/", true, false},
		{"nocloud;s=/var/seed/", true, false},
		{"ec2", false, false},
	} {
		d := ParseDSString(tc.in)
		if d.NoCloud() != tc.nocloud || d.Network() != tc.network {
			t.Errorf("%q: NoCloud=%v Network=%v, want %v %v", tc.in, d.NoCloud(), d.Network(), tc.nocloud, tc.network)
		}
	}
}

func TestReadDMI(t *testing.T) {
	sys := t.TempDir()
	dir := filepath.Join(sys, "class", "dmi", "id")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]string{
		"sys_vendor":        "QEMU\n",
		"product_name":      "Standard PC (Q35 + ICH9, 2009)\n",
		"product_serial":    "ds=nocloud;s=http://10.0.2.2:8000/;i=iid-smbios\n",
		"product_uuid":      "  3f0e1a2b-0000-4000-8000-000000000001 \n",
		"chassis_asset_tag": "\n",
		"board_vendor":      "QEMU",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := ReadDMI(sys)
	want := DMI{
		SysVendor:     "QEMU",
		ProductName:   "Standard PC (Q35 + ICH9, 2009)",
		ProductSerial: "ds=nocloud;s=http://10.0.2.2:8000/;i=iid-smbios",
		ProductUUID:   "3f0e1a2b-0000-4000-8000-000000000001",
		BoardVendor:   "QEMU",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	ds, ok := got.DS()
	if !ok || !ds.NoCloud() || ds.SeedFrom != "http://10.0.2.2:8000/" || ds.InstanceID != "iid-smbios" {
		t.Errorf("DMI.DS() = %+v, %v", ds, ok)
	}
	if _, ok := (DMI{ProductSerial: "GoogleCloud-123"}).DS(); ok {
		t.Error("DS() found a selection in a plain serial")
	}
	if got := ReadDMI(filepath.Join(sys, "missing")); got != (DMI{}) {
		t.Errorf("missing tree: %+v", got)
	}
}
