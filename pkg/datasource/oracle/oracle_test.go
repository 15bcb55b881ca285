package oracle

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/dstest"
	"github.com/cloudroot/cloudroot/pkg/internal/golden"
	"github.com/cloudroot/cloudroot/pkg/netconfig"
)

var onOCI = bootenv.DMI{ChassisAssetTag: ChassisAssetTag}

// macs are the machine's interfaces in the golden cases.
var macs = netconfig.MACs{"02:00:17:00:00:01": "ens3", "02:00:17:00:00:02": "ens4", "02:00:17:00:aa:bb": "ens3"}

// auth answers like the metadata service: /opc/v2/ requires the Bearer
// header, /opc/v1/ must not get it.
func auth(t *testing.T) func(w http.ResponseWriter, r *http.Request) bool {
	return func(w http.ResponseWriter, r *http.Request) bool {
		got := r.Header.Get(AuthHeader)
		switch {
		case strings.HasPrefix(r.URL.Path, "/opc/v2/") && got != AuthValue:
			t.Errorf("%s without %s: %s", r.URL, AuthHeader, AuthValue)
			http.Error(w, "", http.StatusUnauthorized)
			return true
		case strings.HasPrefix(r.URL.Path, "/opc/v1/") && got != "":
			t.Errorf("%s with %s", r.URL, AuthHeader)
		}
		return false
	}
}

func env(url string) datasource.Env {
	return datasource.Env{DMI: onOCI, NetworkUp: true, Budget: 5 * time.Second,
		Config: map[string]any{"Oracle": map[string]any{"metadata_url": url}}}
}

// caseSpec is a golden case's optional case.json.
type caseSpec struct {
	// Tree names the case whose tree/ is served (default: this case).
	Tree string `json:"tree"`
	// NetworkUp is Env.NetworkUp (default true).
	NetworkUp *bool `json:"network_up"`
	// Cmdline is the kernel command line.
	Cmdline string `json:"cmdline"`
	// ConfigureSecondary is configure_secondary_nics.
	ConfigureSecondary *bool `json:"configure_secondary_nics"`
}

// TestGolden reads each testdata/<case>: tree/ served on 127.0.0.1, run/
// as the initramfs's /run, case.json for the rest. want.json is the Data;
// want.network is its network description converted by
// netconfig.ConvertOracle (with macs) and rendered as netplan, or the
// conversion's error.
// upstreamDiffers are the fields of each case's upstream golden where
// cloudroot deliberately differs (docs/datasources.md). The iSCSI cases
// have no upstream golden: upstream reads klibc's files from /run itself.
var upstreamDiffers = map[string]dstest.Differs{
	"no-user-data": {"network_config": "a service without vnics: cloud-init renders an empty network config (no interface configured), cloudroot's conversion reports none and the boot falls back to DHCP on the first NIC"},
	"v1-fallback":  {"found": "cloud-init's Oracle requires ociAdName (KeyError on this older instance document); cloudroot reads it without an availability zone"},
}

func TestGolden(t *testing.T) {
	for _, name := range dstest.Cases(t, "testdata") {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("testdata", name)
			var spec caseSpec
			if b, err := os.ReadFile(filepath.Join(dir, "case.json")); err == nil {
				if err := json.Unmarshal(b, &spec); err != nil {
					t.Fatal(err)
				}
			}
			tree := dir
			if spec.Tree != "" {
				tree = filepath.Join("testdata", spec.Tree)
			}
			srv := dstest.Serve(t, filepath.Join(tree, "tree"), auth(t))
			e := env(srv.URL)
			if spec.NetworkUp != nil {
				e.NetworkUp = *spec.NetworkUp
			}
			e.Cmdline = bootenv.ParseCmdline(spec.Cmdline)
			if spec.ConfigureSecondary != nil {
				e.Config["Oracle"].(map[string]any)["configure_secondary_nics"] = *spec.ConfigureSecondary
			}
			d, err := (&Source{RunDir: filepath.Join(dir, "run")}).Get(context.Background(), e)
			secondary := spec.ConfigureSecondary != nil && *spec.ConfigureSecondary
			dstest.UpstreamWith(t, dir, d, err, srv.URL, upstreamDiffers[name], func(d *datasource.Data) (*netconfig.Config, error) {
				b, err := json.Marshal(d.NetworkConfig[NetworkKey])
				if err != nil {
					return nil, err
				}
				var doc any
				if err := json.Unmarshal(b, &doc); err != nil {
					return nil, err
				}
				return netconfig.ConvertOracle(doc, secondary, macs)
			})
			if err != nil {
				t.Fatal(err)
			}
			dstest.Golden(t, filepath.Join(dir, "want.json"), d, srv.URL)
			golden.CheckString(t, filepath.Join(dir, "want.network"), network(t, d))
			iscsi, _, _ := ISCSIRoot(filepath.Join(dir, "run"), e.Cmdline)
			asked := false
			for _, r := range srv.Requests() {
				asked = asked || strings.HasSuffix(r.Path, "/vnics/")
			}
			_, statErr := os.Stat(filepath.Join(dir, "run"))
			if want := !iscsi || secondary || statErr != nil; asked != want {
				t.Errorf("vnics asked: %v, want %v (iSCSI root %v, configure_secondary_nics %v)", asked, want, iscsi, secondary)
			}
		})
	}
}

// network converts d's network description as the network stage does.
func network(t *testing.T, d *datasource.Data) string {
	t.Helper()
	v, ok := d.NetworkConfig[NetworkKey]
	if !ok {
		return "no network description\n"
	}
	// The description crosses the state file as JSON.
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	cfg, err := netconfig.ConvertOracle(doc, false, macs)
	if err != nil {
		return "ERROR: " + err.Error() + "\n"
	}
	out, err := netconfig.RenderNetplan(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := string(out.Files[netconfig.NetplanPath].Data)
	for _, w := range cfg.Warnings {
		s += "# WARNING: " + w + "\n"
	}
	return s
}

// TestV2First: v1 is not asked when v2 answers.
func TestV2First(t *testing.T) {
	srv := dstest.Serve(t, "testdata/v2/tree", auth(t))
	if _, err := (&Source{URL: srv.URL, RunDir: t.TempDir()}).Get(context.Background(), datasource.Env{DMI: onOCI, NetworkUp: true}); err != nil {
		t.Fatal(err)
	}
	for _, r := range srv.Requests() {
		if strings.HasPrefix(r.Path, "/opc/v1/") {
			t.Errorf("v1 asked: %s", r.Path)
		}
	}
}

// TestBaseThatAnswered: with several metadata URLs, the one that answers
// the instance document also serves vnics and names the subplatform.
func TestBaseThatAnswered(t *testing.T) {
	srv := dstest.Serve(t, "testdata/v2/tree", auth(t))
	e := env("")
	e.Config["Oracle"] = map[string]any{"metadata_urls": []any{dstest.ClosedURL(t), srv.URL}}
	d, err := (&Source{RunDir: t.TempDir()}).Get(context.Background(), e)
	if err != nil {
		t.Fatal(err)
	}
	if want := "metadata (" + srv.URL + "/opc/v2/)"; d.Subplatform != want {
		t.Errorf("subplatform %q, want %q", d.Subplatform, want)
	}
	if d.DS["vnics_data"] == nil {
		t.Error("vnics not read from the base that answered")
	}
}

func TestISCSIRoot(t *testing.T) {
	state := "DEVICE='ens3'\nPROTO='dhcp'\n"
	for _, tc := range []struct {
		name    string
		files   map[string]string
		cmdline string
		want    bool
		paths   []string
	}{
		{"nothing", nil, "root=/dev/sda1", false, nil},
		{"klibc state", map[string]string{"net-ens3.conf": state}, "", true, []string{"/run/net-ens3.conf"}},
		{"klibc state in order", map[string]string{"net6-ens3.conf": state, "net-ens4.conf": state, "net-ens3.conf": state, "other.conf": state}, "",
			true, []string{"/run/net-ens3.conf", "/run/net-ens4.conf", "/run/net6-ens3.conf"}},
		{"ip=", nil, "root=LABEL=root ip=dhcp", true, nil},
		{"ip6=", nil, "ip6=dhcp", true, nil},
		{"ip= static", nil, "ip=10.0.0.5::10.0.0.1:255.255.255.0:host:ens3:off", true, nil},
		{"ip=off", nil, "ip=off", false, nil},
		{"ip=none", nil, "ip=none", false, nil},
		{"bare ip flag", nil, "ip", false, nil},
		{"ip=off with state", map[string]string{"net-ens3.conf": state}, "ip=off", true, []string{"/run/net-ens3.conf"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for n, c := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, n), []byte(c), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, files, err := ISCSIRoot(dir, bootenv.ParseCmdline(tc.cmdline))
			if err != nil {
				t.Fatal(err)
			}
			var paths []string
			for _, f := range files {
				paths = append(paths, f.Path)
				if f.Content != state {
					t.Errorf("%s content %q", f.Path, f.Content)
				}
			}
			if got != tc.want || !cmp.Equal(paths, tc.paths) {
				t.Errorf("ISCSIRoot = %v, %q; want %v, %q", got, paths, tc.want, tc.paths)
			}
		})
	}
	// An unreadable state file is reported and left out.
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "net-ens3.conf"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, files, err := ISCSIRoot(dir, bootenv.Cmdline{}); err == nil || len(files) != 0 {
		t.Errorf("directory as a state file: %v, %v", files, err)
	}
	big := filepath.Join(t.TempDir(), "net-ens3.conf")
	if err := os.WriteFile(big, make([]byte, maxStateFile+1), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ISCSIRoot(filepath.Dir(big), bootenv.Cmdline{}); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("oversized state file: %v", err)
	}
}

// TestConform: the cases every metadata-URL source shares, every server
// checking the v2 Authorization header (and its absence on v1), the v2
// instance document served truncated; and Oracle's own: not OCI, an
// iSCSI root's network, broken documents (each error names the URL that
// failed).
func TestConform(t *testing.T) {
	srv := dstest.Serve(t, "testdata/v2/tree", auth(t))
	notOCI := env(srv.URL)
	notOCI.DMI = bootenv.DMI{}
	// On an iSCSI root the initramfs network is used without
	// Env.NetworkUp; when nothing answers on it, the caller is told to
	// bring a network up.
	iscsiAbsent := env(dstest.ClosedURL(t))
	iscsiAbsent.Budget = time.Second
	iscsiAbsent.NetworkUp = false
	iscsiAbsent.Cmdline = bootenv.ParseCmdline("ip=dhcp")
	// ip= given but no initramfs state yet: nothing is up to read over,
	// so the caller is asked at once (and nothing is sent).
	noState := env(srv.URL)
	noState.NetworkUp = false
	noState.Cmdline = bootenv.ParseCmdline("ip=dhcp")
	instance := func(body string) func(w http.ResponseWriter, r *http.Request) bool {
		return dstest.Answer("/instance/", http.StatusOK, body)
	}
	dstest.Conform(t, dstest.Metadata{
		Source: &Source{RunDir: t.TempDir()},
		Env: func(base string) datasource.Env {
			e := env(base)
			e.Budget = time.Second // 5xx are retried until the budget ends
			return e
		},
		Root:         "testdata/v2/tree",
		Hook:         auth(t),
		Doc:          "/opc/v2/instance/",
		AbsentBudget: time.Second,
		NotFound: []dstest.NotFoundCase{
			{Name: "not OCI", Env: notOCI, Want: datasource.ErrNotFound, Quiet: srv},
			{Name: "iSCSI root, absent", Env: iscsiAbsent, Want: datasource.ErrNeedNetwork},
			{Name: "ip= without state files", Env: noState, Want: datasource.ErrNeedNetwork, Quiet: srv},
		},
		Broken: []dstest.Broken{
			{Name: "500 says where", Code: http.StatusInternalServerError, Want: "/opc/v2/instance/: status 500"},
			{Name: "not JSON", Hook: instance("id: x\n"), Want: "/opc/v2/instance/: invalid character"},
			{Name: "JSON list", Hook: instance(`["id"]`), Want: "cannot unmarshal array"},
			{Name: "no id", Hook: instance(`{"hostname": "h"}`), Want: "no id"},
			{Name: "bad base64", Hook: instance(`{"id": "i", "metadata": {"user_data": "abc"}}`), Want: "user_data: illegal base64"},
			{Name: "v2 refused, v1 truncated", Hook: dstest.Chain(dstest.Answer("/opc/v2/instance/", http.StatusUnauthorized, ""),
				dstest.Answer("/opc/v1/instance/", http.StatusOK, `{"id": "i", "metadata": {`)), Want: "/opc/v1/instance/: unexpected end of JSON input"},
			{Name: "vnics not JSON", Hook: dstest.Answer("/vnics/", http.StatusOK, `[{"macAddr": `), Want: "/opc/v2/vnics/: unexpected end of JSON input"},
		},
	})
}

// TestBadConfig: a configure_secondary_nics that is not a boolean is an
// error naming the key, before any request.
func TestBadConfig(t *testing.T) {
	srv := dstest.Serve(t, "testdata/v2/tree", nil)
	for _, v := range []any{"maybe", 3, []any{true}} {
		e := env(srv.URL)
		e.Config["Oracle"].(map[string]any)["configure_secondary_nics"] = v
		_, err := (&Source{RunDir: t.TempDir()}).Get(context.Background(), e)
		if err == nil || !strings.Contains(err.Error(), "configure_secondary_nics") {
			t.Errorf("configure_secondary_nics %v: err = %v", v, err)
		}
	}
	e := env(srv.URL)
	e.Config["Oracle"].(map[string]any)["configure_secondary_nics"] = "True"
	if _, err := (&Source{RunDir: t.TempDir()}).Get(context.Background(), e); err != nil {
		t.Errorf("configure_secondary_nics \"True\": %v", err)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("%d requests, want 2 (instance and vnics of the valid run)", n)
	}
}

// TestVnicsFail: a failing vnics endpoint costs only the network config.
func TestVnicsFail(t *testing.T) {
	srv := dstest.Serve(t, "testdata/v2/tree", func(w http.ResponseWriter, r *http.Request) bool {
		if strings.HasSuffix(r.URL.Path, "/vnics/") {
			http.Error(w, "", http.StatusInternalServerError)
			return true
		}
		return false
	})
	e := env(srv.URL)
	e.Budget = time.Second
	d, err := (&Source{RunDir: t.TempDir()}).Get(context.Background(), e)
	if err != nil {
		t.Fatal(err)
	}
	if d.NetworkConfig != nil {
		t.Errorf("network config %v without vnics", d.NetworkConfig)
	}
}

func FuzzBuild(f *testing.F) {
	for _, c := range []string{"v2/tree/opc/v2", "v1-fallback/tree/opc/v1"} {
		i, _ := os.ReadFile(filepath.Join("testdata", c, "instance/_index"))
		v, _ := os.ReadFile(filepath.Join("testdata", c, "vnics/_index"))
		k, _ := os.ReadFile("testdata/iscsi/run/net-ens3.conf")
		f.Add(i, v, false, string(k))
		f.Add(i, v, true, string(k))
	}
	f.Add([]byte(`{"id": "x", "metadata": {"user_data": "", "ssh_authorized_keys": ["a", 1]}}`), []byte(`null`), true, "")
	f.Add([]byte(`{"id": "x"}`), []byte(`[{"macAddr": "02:00:17:00:00:01", "nicIndex": 0}]`), true, "DEVICE=ens3")
	f.Fuzz(func(t *testing.T, inst, vnics []byte, iscsi bool, state string) {
		in := Input{URL: "http://x/opc/v2/", Instance: inst, Vnics: vnics, ISCSIRoot: iscsi, ConfigureSecondary: true,
			Initramfs: []StateFile{{Path: "/run/net-ens3.conf", Content: state}}}
		d, err := Build(in)
		if err != nil {
			return
		}
		if d.InstanceID() == "" {
			t.Fatal("Data without instance-id")
		}
		if _, err := json.Marshal(dstest.ViewOf(d)); err != nil {
			t.Fatal(err)
		}
		if v, ok := d.NetworkConfig[NetworkKey]; ok {
			if cfg, err := netconfig.ConvertOracle(v, false, macs); err == nil {
				if _, err := netconfig.RenderNetplan(cfg); err != nil {
					t.Fatalf("render: %v", err)
				}
			}
		}
	})
}

// TestTwoAnsweringBases: with both base URLs answering, the race keeps one
// and reads the vnics from that same base (run under -race: no shared
// state between the racing requests).
func TestTwoAnsweringBases(t *testing.T) {
	a := dstest.Serve(t, "testdata/v2/tree", nil)
	b := dstest.Serve(t, "testdata/v2/tree", nil)
	e := env(a.URL)
	e.Config = map[string]any{"Oracle": map[string]any{"metadata_urls": []any{a.URL, b.URL}}}
	d, err := (&Source{RunDir: t.TempDir()}).Get(context.Background(), e)
	if err != nil {
		t.Fatal(err)
	}
	won := a
	if !strings.Contains(d.Subplatform, a.URL) {
		won = b
	}
	var vnics int
	for _, r := range won.Requests() {
		if strings.Contains(r.Path, "/vnics/") {
			vnics++
		}
	}
	if vnics != 1 {
		t.Errorf("the base that answered (%s, subplatform %q) served %d vnics requests, want 1", won.URL, d.Subplatform, vnics)
	}
}
