package azure

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/dstest"
	"github.com/cloudroot/cloudroot/pkg/target"
)

var onAzure = bootenv.DMI{ChassisAssetTag: ChassisAssetTag, SysVendor: "Microsoft Corporation"}

// testHash is SHA-512 crypt with a fixed salt, so golden files are stable.
func testHash(pw string) (string, error) { return target.SHA512Crypt(pw, "$6$cloudroottests$") }

// source is the Source under test: no real sysfs, a stable hash.
func source(sys fs.FS) *Source {
	if sys == nil {
		sys = fstest.MapFS{}
	}
	return &Source{Sys: sys, Hash: testHash}
}

// imdsHook answers like IMDS: the Metadata header is required, an
// api-version not in versions gets 400, and the newest version must ask
// for extended.
func imdsHook(t *testing.T, versions []string) func(w http.ResponseWriter, r *http.Request) bool {
	return func(w http.ResponseWriter, r *http.Request) bool {
		if r.Header.Get(MetadataHeader) != MetadataValue {
			t.Errorf("%s without %s: %s", r.URL, MetadataHeader, MetadataValue)
			http.Error(w, `{"error": "Bad request. Required metadata header not specified"}`, http.StatusBadRequest)
			return true
		}
		q, _ := url.ParseQuery(r.URL.RawQuery)
		v := q.Get("api-version")
		if v == APIVersion && q.Get("extended") != "true" {
			t.Errorf("%s without extended=true", r.URL)
		}
		if !slices.Contains(versions, v) {
			http.Error(w, `{"error": "Bad request. api-version is invalid"}`, http.StatusBadRequest)
			return true
		}
		return false
	}
}

func env(url string) datasource.Env {
	return datasource.Env{DMI: onAzure, NetworkUp: true, Budget: 5 * time.Second,
		Config: map[string]any{"Azure": map[string]any{"metadata_url": url}}}
}

// mapFS serves files for Env.OpenFS and Env.Root.
func mapFS(files map[string][]byte) fstest.MapFS {
	m := fstest.MapFS{}
	for n, b := range files {
		m[n] = &fstest.MapFile{Data: b, Mode: 0o644}
	}
	return m
}

func openFS(byPath map[string]fs.FS) func(bootenv.Device) (fs.FS, func(), error) {
	return func(d bootenv.Device) (fs.FS, func(), error) {
		if f, ok := byPath[d.Path]; ok {
			return f, func() {}, nil
		}
		return nil, nil, &fs.PathError{Op: "open", Path: d.Path, Err: fs.ErrNotExist}
	}
}

var sr0 = bootenv.Device{Name: "sr0", Path: "/dev/sr0", Removable: true, FS: bootenv.FS{Type: "iso9660", Label: "rd_rdfe_stable.240101-0000"}}

func gunzip(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.WriteFile(dst, dstest.Gunzip(t, src), 0o644); err != nil {
		t.Fatal(err)
	}
}

// caseSpec is a golden case's case.json.
type caseSpec struct {
	// APIVersions IMDS accepts; tree/ is served when there is one, else
	// IMDS is absent.
	APIVersions []string `json:"api_versions"`
	// OVF says where the case's ovf-env.xml is: "device" (sr0 through
	// Env.OpenFS), "udf" (media.iso.gz, a real UDF image, read from a
	// file), "seed" or "datadir" (the target root), "" nowhere.
	OVF         string         `json:"ovf"`
	NotAzure    bool           `json:"not_azure"`
	UUID        string         `json:"uuid"`
	PreviousIID string         `json:"previous_iid"`
	Sys         string         `json:"sys"`
	BudgetMS    int            `json:"budget_ms"`
	Config      map[string]any `json:"config"`
}

// upstreamDiffers are the fields of each case's upstream golden where
// cloudroot deliberately differs (docs/datasources.md). udf-media has
// no upstream golden (upstream would mount the UDF image).
var upstreamDiffers = map[string]dstest.Differs{
	"data-dir":   {"public_keys": ovfKeys, "config_obj": azureAliases, "network_config": azureFallback},
	"ovf-media":  {"public_keys": ovfKeys, "network_config": azureFallback},
	"ovf-imds":   {"config_obj": azureAliases},
	"no-network": {"config_obj": "cloudroot omits the empty default_user name cloud-init's Azure config carries when neither OVF nor IMDS names a user", "network_config": azureFallback},
	"seed-dir":   {"found": "cloud-init's Azure requires a DMI system uuid; cloudroot falls back to the OVF's instance-id default"},
}

const (
	ovfKeys       = "without the wireserver (no IMDS here) cloud-init gets no keys; cloudroot takes the OVF's inline key values"
	azureAliases  = "the resource disk alias is handed on as the configuration's device_aliases (cloud-init answers it through device_name_to_device)"
	azureFallback = "without IMDS network metadata cloud-init writes its own fallback config; cloudroot leaves none and the boot's fallback configuration applies"
)

func TestGolden(t *testing.T) {
	for _, name := range dstest.Cases(t, "testdata") {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("testdata", name)
			var spec caseSpec
			dstest.ReadJSON(t, filepath.Join(dir, "case.json"), &spec)
			base := dstest.ClosedURL(t)
			var srv *dstest.Server
			if _, err := os.Stat(filepath.Join(dir, "tree")); err == nil {
				srv = dstest.Serve(t, filepath.Join(dir, "tree"), imdsHook(t, spec.APIVersions))
				base = srv.URL
			}
			e := env(base)
			for k, v := range spec.Config {
				e.Config["Azure"].(map[string]any)[k] = v
			}
			if spec.NotAzure {
				e.DMI = bootenv.DMI{}
			}
			e.DMI.ProductUUID = spec.UUID
			if spec.BudgetMS > 0 {
				e.Budget = time.Duration(spec.BudgetMS) * time.Millisecond
			}
			root := fstest.MapFS{}
			if spec.PreviousIID != "" {
				root["var/lib/cloud/data/instance-id"] = &fstest.MapFile{Data: []byte(spec.PreviousIID + "\n")}
			}
			ovf, _ := os.ReadFile(filepath.Join(dir, "ovf-env.xml"))
			switch spec.OVF {
			case "device":
				e.Devices = []bootenv.Device{sr0}
				e.OpenFS = openFS(map[string]fs.FS{"/dev/sr0": mapFS(map[string][]byte{"ovf-env.xml": ovf})})
			case "udf":
				img := filepath.Join(t.TempDir(), "sr0")
				gunzip(t, filepath.Join(dir, "media.iso.gz"), img)
				e.Devices = []bootenv.Device{{Name: "sr0", Path: img}}
			case "seed":
				root["var/lib/cloud/seed/azure/ovf-env.xml"] = &fstest.MapFile{Data: ovf}
			case "datadir":
				root["var/lib/waagent/ovf-env.xml"] = &fstest.MapFile{Data: ovf}
			}
			e.Root = root
			d, err := source(sysLayout(spec.Sys)).Get(context.Background(), e)
			dstest.Upstream(t, dir, d, err, base, upstreamDiffers[name])
			if err != nil {
				t.Fatal(err)
			}
			want := filepath.Join(dir, "want.json")
			if spec.OVF == "udf" {
				// The image's path is a temporary file.
				d.Subplatform = strings.Replace(d.Subplatform, e.Devices[0].Path, "/dev/sr0", 1)
				if d.Subplatform != "config-disk (/dev/sr0)" {
					t.Errorf("subplatform %q", d.Subplatform)
				}
			}
			dstest.Golden(t, want, d, base)
			if srv != nil {
				for _, r := range srv.Requests() {
					if r.Path != "/metadata/instance" {
						t.Errorf("request to %s", r.Path)
					}
				}
			}
			if pw := "Pl41n-Secret-Passw0rd"; bytes.Contains(mustJSON(t, dstest.ViewOf(d)), []byte(pw)) {
				t.Errorf("the plain password is in the data")
			}
		})
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestInstanceURL only builds URL text (the default, link-local base is
// never dialled by a test: every fetch test points at 127.0.0.1).
func TestInstanceURL(t *testing.T) {
	for _, tc := range []struct{ base, ver, want string }{
		{DefaultMetadataURL, APIVersion, "http://169.254.169.254/metadata/instance?api-version=2021-08-01&extended=true"},
		{DefaultMetadataURL + "/", FallbackAPIVersion, "http://169.254.169.254/metadata/instance?api-version=2019-06-01"},
	} {
		if got := InstanceURL(tc.base, tc.ver); got != tc.want {
			t.Errorf("InstanceURL(%q, %q) = %q, want %q", tc.base, tc.ver, got, tc.want)
		}
	}
}

func readTestdata(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", p))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestNotFound(t *testing.T) {
	srv := dstest.Serve(t, "testdata/extended/tree", nil)
	nonAzureOVF := []byte(`<?xml version="1.0"?>
<Environment xmlns="http://schemas.dmtf.org/ovf/environment/1" xmlns:oe="http://schemas.dmtf.org/ovf/environment/1">
  <PropertySection><Property oe:key="instance-id" oe:value="i-1"/></PropertySection>
</Environment>`)
	notAzure := env(srv.URL)
	notAzure.DMI = bootenv.DMI{}
	emptyDrive := env(dstest.ClosedURL(t))
	emptyDrive.Budget = 300 * time.Millisecond
	emptyDrive.Devices = []bootenv.Device{sr0, {Name: "sr1", Path: "/dev/sr1", NoMedium: true}, {Name: "vdb", Path: "/dev/vdb", FS: bootenv.FS{Type: "iso9660", Label: "OVF ENV"}}}
	emptyDrive.OpenFS = openFS(map[string]fs.FS{"/dev/sr0": fstest.MapFS{}, "/dev/vdb": mapFS(map[string][]byte{"ovf-env.xml": nonAzureOVF})})
	// The network cases have no media: IMDS absent, 404, slow.
	cases := dstest.NetworkCases(t, dstest.Network{Env: env, Up: srv, AbsentBudget: 300 * time.Millisecond})
	cases = append(cases, []dstest.NotFoundCase{
		{Name: "not Azure", Env: notAzure, Want: datasource.ErrNotFound, Quiet: srv},
		{Name: "empty drive, non-Azure OVF, IMDS absent", Env: emptyDrive, Want: datasource.ErrNotFound},
	}...)
	dstest.NotFound(t, source(nil), cases)
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		hook func(w http.ResponseWriter, r *http.Request) bool
		want string
	}{
		{"500", dstest.Status(http.StatusInternalServerError), "status 500"},
		{"both versions refused", dstest.Status(http.StatusBadRequest), "api-version=" + FallbackAPIVersion + ": status 400"},
		{"not JSON", func(w http.ResponseWriter, r *http.Request) bool {
			w.Write([]byte("<html>"))
			return true
		}, "invalid character"},
		{"no vmId", func(w http.ResponseWriter, r *http.Request) bool {
			w.Write([]byte(`{"compute": {"name": "x"}}`))
			return true
		}, "no compute.vmId"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := dstest.Serve(t, "testdata/extended/tree", tc.hook)
			e := env(srv.URL)
			e.Budget = time.Second
			_, err := source(nil).Get(context.Background(), e)
			dstest.Broke(t, err, srv.URL, tc.want)
		})
	}
}

// TestBrokenMedia: a provisioning document that is there but broken is an
// error naming the file and the line, and IMDS is not asked.
func TestBrokenMedia(t *testing.T) {
	good := readTestdata(t, "ovf-media/ovf-env.xml")
	for _, tc := range []struct {
		name, doc string
		seed      bool
		want      []string
	}{
		{"syntax on device", "<?xml version=\"1.0\"?>\n<Environment>\n  <wa:ProvisioningSection xmlns:wa=\"" + WANamespace + "\">\n  </Environment>\n",
			false, []string{"ovf-env.xml on /dev/sr0", "line 4"}},
		{"syntax in seed", string(good[:len(good)/2]), true,
			[]string{SeedDir + "/ovf-env.xml", "line"}},
		{"no UserName", strings.Replace(string(good), "<UserName>azureuser</UserName>", "", 1), false,
			[]string{"ovf-env.xml on /dev/sr0", "line 5", `missing configuration for "UserName"`}},
		{"two HostNames", strings.Replace(string(good), "<HostName>cr-ovf-vm</HostName>", "<HostName>a</HostName>\n<HostName>b</HostName>", 1), false,
			[]string{"line 8", `multiple configuration matches for "HostName" (2)`}},
		{"bad CustomData", strings.Replace(string(good), "<CustomData>", "<CustomData>=", 1), false,
			[]string{"CustomData is not base64"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := dstest.Serve(t, "testdata/extended/tree", nil)
			e := env(srv.URL)
			if tc.seed {
				e.Root = mapFS(map[string][]byte{"var/lib/cloud/seed/azure/ovf-env.xml": []byte(tc.doc)})
			} else {
				e.Devices = []bootenv.Device{sr0}
				e.OpenFS = openFS(map[string]fs.FS{"/dev/sr0": mapFS(map[string][]byte{"ovf-env.xml": []byte(tc.doc)})})
			}
			_, err := source(nil).Get(context.Background(), e)
			if err == nil || errors.Is(err, datasource.ErrNotFound) {
				t.Fatalf("err = %v, want a broken-source error", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err = %v, want it to contain %q", err, w)
				}
			}
			if n := len(srv.Requests()); n != 0 {
				t.Errorf("%d IMDS requests for a broken document", n)
			}
		})
	}
}

// TestIMDSBrokenWithMedia: with a provisioning document, an IMDS failure
// is logged and the document used alone.
func TestIMDSBrokenWithMedia(t *testing.T) {
	for name, hook := range map[string]func(w http.ResponseWriter, r *http.Request) bool{
		"500":      func(w http.ResponseWriter, r *http.Request) bool { http.Error(w, "", 500); return true },
		"not JSON": func(w http.ResponseWriter, r *http.Request) bool { w.Write([]byte("<html>")); return true },
		"404":      func(w http.ResponseWriter, r *http.Request) bool { http.NotFound(w, r); return true },
	} {
		t.Run(name, func(t *testing.T) {
			srv := dstest.Serve(t, "", hook)
			e := env(srv.URL)
			e.Budget = 500 * time.Millisecond
			e.Devices = []bootenv.Device{sr0}
			e.OpenFS = openFS(map[string]fs.FS{"/dev/sr0": mapFS(map[string][]byte{"ovf-env.xml": readTestdata(t, "ovf-media/ovf-env.xml")})})
			d, err := source(nil).Get(context.Background(), e)
			if err != nil {
				t.Fatal(err)
			}
			if d.LocalHostname() != "cr-ovf-vm" || d.Subplatform != "config-disk (/dev/sr0)" || len(obj(d.MetaData["imds"])) != 0 {
				t.Errorf("hostname %q, subplatform %q, imds %v", d.LocalHostname(), d.Subplatform, d.MetaData["imds"])
			}
		})
	}
}

func TestPreprovisioned(t *testing.T) {
	doc := strings.Replace(string(readTestdata(t, "ovf-media/ovf-env.xml")), "<PreprovisionedVm>false</PreprovisionedVm>", "<PreprovisionedVm>true</PreprovisionedVm>", 1)
	e := env(dstest.ClosedURL(t))
	e.Budget = 300 * time.Millisecond
	e.Devices = []bootenv.Device{sr0}
	e.OpenFS = openFS(map[string]fs.FS{"/dev/sr0": mapFS(map[string][]byte{"ovf-env.xml": []byte(doc)})})
	_, err := source(nil).Get(context.Background(), e)
	if !errors.Is(err, ErrPreprovisioned) || !strings.Contains(err.Error(), "Running") {
		t.Fatalf("err = %v, want ErrPreprovisioned (Running)", err)
	}
	in := Input{URL: "u", Document: []byte(`{"compute": {"vmId": "v"}, "extended": {"compute": {"ppsType": "Savable"}}}`)}
	if _, err := Build(&in); !errors.Is(err, ErrPreprovisioned) || !strings.Contains(err.Error(), "Savable") {
		t.Errorf("IMDS ppsType: err = %v", err)
	}
}

// TestSecretsNotLogged: the plain password reaches neither the log nor
// Data, only its hash.
func TestSecretsNotLogged(t *testing.T) {
	const pw = "Pl41n-Secret-Passw0rd"
	var logBuf bytes.Buffer
	e := env(dstest.ClosedURL(t))
	e.Budget = 300 * time.Millisecond
	e.Log = slog.New(slog.NewJSONHandler(&logBuf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	e.Devices = []bootenv.Device{sr0}
	e.OpenFS = openFS(map[string]fs.FS{"/dev/sr0": mapFS(map[string][]byte{"ovf-env.xml": readTestdata(t, "ovf-media/ovf-env.xml")})})
	d, err := (&Source{Sys: fstest.MapFS{}}).Get(context.Background(), e)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(logBuf.String(), pw) {
		t.Errorf("password logged:\n%s", logBuf.String())
	}
	if bytes.Contains(mustJSON(t, dstest.ViewOf(d)), []byte(pw)) {
		t.Error("password in Data")
	}
	h, _ := d.Config["system_info"].(map[string]any)["default_user"].(map[string]any)["hashed_passwd"].(string)
	if got, err := target.SHA512Crypt(pw, h); err != nil || got != h {
		t.Errorf("hashed_passwd %q does not verify: %v", h, err)
	}
	env, _ := ParseOVFEnv(readTestdata(t, "ovf-media/ovf-env.xml"))
	var b bytes.Buffer
	slog.New(slog.NewTextHandler(&b, nil)).Info("x", "env", env, "pw", env.Password)
	if s := b.String() + mustString(t, env); strings.Contains(s, pw) {
		t.Errorf("password shown: %s", s)
	}
}

func mustString(t *testing.T, env *OVFEnv) string {
	t.Helper()
	b, err := json.Marshal(env)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestBadUserData: undecodable userData is skipped, not fatal.
func TestBadUserData(t *testing.T) {
	in := Input{URL: "u", Document: []byte(`{"compute": {"vmId": "v", "userData": "not base64!"}}`)}
	d, err := Build(&in)
	if err != nil {
		t.Fatal(err)
	}
	if d.UserData != nil || in.BadUserData == nil {
		t.Errorf("user-data %q, warning %v", d.UserData, in.BadUserData)
	}
}

func TestInstanceID(t *testing.T) {
	const sys = "a1c27a5c-6f9c-8e4b-a0d2-1f2e3d4c5b6a"
	swapped := ByteSwapUUID(sys)
	if swapped != "5c7ac2a1-9c6f-4b8e-a0d2-1f2e3d4c5b6a" {
		t.Fatalf("ByteSwapUUID = %s", swapped)
	}
	if ByteSwapUUID(swapped) != sys || ByteSwapUUID("nope") != "" {
		t.Error("ByteSwapUUID is not an involution")
	}
	for _, tc := range []struct{ system, prev, want string }{
		{"", "x", ""},
		{strings.ToUpper(sys), "", sys},
		{sys, "other", sys},
		{sys, swapped, swapped},
		{sys, strings.ToUpper(sys), strings.ToUpper(sys)},
	} {
		if got := instanceID(tc.system, tc.prev); got != tc.want {
			t.Errorf("instanceID(%q, %q) = %q, want %q", tc.system, tc.prev, got, tc.want)
		}
	}
}

func TestCandidates(t *testing.T) {
	devs := []bootenv.Device{
		{Name: "vda", Path: "/dev/vda", FS: bootenv.FS{Type: "ext4"}},
		{Name: "sr1", Path: "/dev/sr1"},
		{Name: "vdb", Path: "/dev/vdb", FS: bootenv.FS{Type: "iso9660", Label: "cidata"}},
		{Name: "sr0", Path: "/dev/sr0"},
		{Name: "sr2", Path: "/dev/sr2", NoMedium: true},
		{Name: "vdc", Path: "/dev/vdc", FS: bootenv.FS{Label: "rd_rdfe_stable.1"}},
		{Name: "vdd", Path: "/dev/vdd", FS: bootenv.FS{Type: "vfat", Label: "rd_rdfe_stable.2"}},
	}
	var got []string
	for _, d := range Candidates(devs) {
		got = append(got, d.Name)
	}
	if want := []string{"sr0", "vdb", "sr1", "vdc"}; !slices.Equal(got, want) {
		t.Errorf("Candidates = %v, want %v", got, want)
	}
}

// TestOpenMediaISO: a plain ISO9660 volume (no UDF) is read through
// go-diskfs, upper-case name and all.
func TestOpenMediaISO(t *testing.T) {
	img := filepath.Join(t.TempDir(), "iso")
	gunzip(t, "testdata/udf-media/media.iso.gz", img)
	b, err := os.ReadFile(img)
	if err != nil {
		t.Fatal(err)
	}
	// Blank the UDF recognition sequence: only ISO9660 is left.
	for off := 32768; off < 32768+16*2048; off += 2048 {
		if s := string(b[off+1 : off+6]); s == "BEA01" || s == "NSR02" || s == "NSR03" || s == "TEA01" {
			copy(b[off:off+7], make([]byte, 7))
		}
	}
	if err := os.WriteFile(img, b, 0o644); err != nil {
		t.Fatal(err)
	}
	fsys, closeFS, err := OpenMedia(bootenv.Device{Name: "sr0", Path: img})
	if err != nil {
		t.Fatal(err)
	}
	defer closeFS()
	name, doc, err := readOVF(fsys)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ParseOVFEnv(doc); err != nil {
		t.Errorf("%s: %v", name, err)
	}
	if _, _, err := OpenMedia(bootenv.Device{Name: "x", Path: filepath.Join(t.TempDir(), "none")}); err == nil {
		t.Error("no error for a missing device")
	}
}

func FuzzBuild(f *testing.F) {
	for _, c := range []string{"extended", "fallback-2019", "no-network"} {
		b, _ := os.ReadFile(filepath.Join("testdata", c, "tree/metadata/instance"))
		f.Add(b)
	}
	f.Add([]byte(`{"compute": {"vmId": "x", "publicKeys": [1, {"keyData": 2}], "userData": "=="}, "network": []}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		in := Input{URL: "u", Document: doc}
		d, err := Build(&in)
		if err != nil {
			return
		}
		if d.InstanceID() == "" {
			t.Fatal("Data without instance-id")
		}
		b, err := json.Marshal(dstest.ViewOf(d))
		if err != nil {
			t.Fatal(err)
		}
		if imds, _ := d.MetaData["imds"].(map[string]any); imds != nil {
			if c, _ := imds["compute"].(map[string]any); c != nil {
				if _, ok := c["userData"]; ok {
					t.Fatalf("userData kept in meta-data: %s", b)
				}
			}
		}
	})
}

// TestConform: the cases every volume source shares, on Azure with no
// IMDS answering (a volume that is not Azure's leaves IMDS to decide).
func TestConform(t *testing.T) {
	e := env(dstest.ClosedURL(t))
	e.Budget = 500 * time.Millisecond
	dstest.ConformMedia(t, dstest.Media{Source: source(nil), Env: e, Device: sr0,
		Root: "testdata/ovf-media", Doc: "ovf-env.xml",
		WhyUnreadableNotFound: "Azure's provisioning media is optional: one that cannot be read is logged and IMDS decides, as cloud-init's crawl_metadata goes on past a device it cannot mount; with no IMDS here that is not found"})
}

// TestPyStr: the IMDS profile's values are formatted as Python's str() of
// what json.load made of them (the minimal OVF cloud-init writes from them).
func TestPyStr(t *testing.T) {
	m := map[string]any{"s": "azureuser", "b": true, "f": 1.0, "n": nil, "l": []any{"a", false}}
	for k, want := range map[string]string{"s": "azureuser", "b": "True", "f": "1.0", "n": "None", "absent": "None", "l": "['a', False]"} {
		if got := pyStr(m, k); got != want {
			t.Errorf("pyStr(%s) = %q, want %q", k, got, want)
		}
	}
}
