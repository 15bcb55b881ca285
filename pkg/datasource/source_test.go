package datasource

import (
	"context"
	"errors"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cloudroot/cloudroot/pkg/imds"
)

type fake string

func (f fake) Name() string                            { return string(f) }
func (f fake) Get(context.Context, Env) (*Data, error) { return nil, ErrNotFound }

func TestRegistry(t *testing.T) {
	r := Registry{fake("NoCloud"), fake("Ec2"), fake("GCE")}
	if s, ok := r.Lookup("ec2"); !ok || s.Name() != "Ec2" {
		t.Errorf("Lookup(ec2) = %v, %v", s, ok)
	}
	if _, ok := r.Lookup("Azure"); ok {
		t.Error("Lookup(Azure) found something")
	}
	sel, missing := r.Select([]string{"GCE", "Azure", "NoCloud", "None"})
	if diff := cmp.Diff([]string{"GCE", "NoCloud"}, sel.Names()); diff != "" {
		t.Errorf("Select (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"Azure", "None"}, missing); diff != "" {
		t.Errorf("missing (-want +got):\n%s", diff)
	}
}

func TestEnvConfig(t *testing.T) {
	e := Env{Config: map[string]any{
		"Ec2":       map[string]any{"metadata_urls": []any{"http://a", 5, "http://b"}},
		"gce":       map[string]any{"metadata_url": "http://g/"},
		"OpenStack": map[string]any{"metadata_urls": "http://o"},
		"Bad":       "x",
	}}
	for name, want := range map[string][]string{
		"Ec2": {"http://a", "http://b"}, "GCE": {"http://g/"}, "OpenStack": {"http://o"}, "Bad": nil, "Azure": nil,
	} {
		if diff := cmp.Diff(want, e.MetadataURLs(name)); diff != "" {
			t.Errorf("MetadataURLs(%s) (-want +got):\n%s", name, diff)
		}
	}
	ctx, cancel := Env{}.WithBudget(context.Background(), time.Hour)
	defer cancel()
	if dl, ok := ctx.Deadline(); !ok || time.Until(dl) < 59*time.Minute {
		t.Errorf("default budget not applied: %v %v", dl, ok)
	}
	Env{}.Logger("x").Info("discarded")
}

func TestCloudID(t *testing.T) {
	for _, tc := range []struct {
		name, region, platform, want string
	}{
		{"aws", "cn-north-1", "ec2", "aws-china"},
		{"aws", "us-gov-west-1", "ec2", "aws-gov"},
		{"aws", "eu-west-1", "ec2", "aws"},
		{"azure", "chinaeast2", "azure", "azure-china"},
		{"unknown", "cn-north-1", "ec2", "ec2"},
		{"", "", "nocloud", "nocloud"},
		{"gce", "", "gce", "gce"},
		{"openstack", "cn-north-1", "openstack", "openstack"},
	} {
		d := &Data{CloudName: tc.name, Region: tc.region, Platform: tc.platform}
		if got := d.CloudID(); got != tc.want {
			t.Errorf("CloudID(%q, %q, %q) = %q, want %q", tc.name, tc.region, tc.platform, got, tc.want)
		}
	}
}

func TestNormalizePubKeys(t *testing.T) {
	got := NormalizePubKeys(map[string]any{
		"b": []any{"ssh-rsa B", 3},
		"a": "ssh-rsa A1\n# comment\n\nssh-rsa A2\n",
	})
	if diff := cmp.Diff([]string{"ssh-rsa A1", "ssh-rsa A2", "ssh-rsa B"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if NormalizePubKeys(nil) != nil {
		t.Error("nil gave keys")
	}
}

func TestHostnameOverride(t *testing.T) {
	d := &Data{MetaData: map[string]any{"local-hostname": "a.example.com"}}
	if d.LocalHostname() != "a.example.com" {
		t.Error(d.LocalHostname())
	}
	d.Hostname = "a"
	if d.LocalHostname() != "a" {
		t.Error(d.LocalHostname())
	}
}

// overlong is a file that reads past the size its Stat reports, as
// go-diskfs's FAT files do.
type overlong struct{ fs.File }

func (o overlong) Read(b []byte) (int, error) {
	for i := range b {
		b[i] = 0
	}
	return len(b), nil
}

type overlongFS struct{ fstest.MapFS }

func (o overlongFS) Open(name string) (fs.File, error) {
	f, err := o.MapFS.Open(name)
	if err != nil {
		return nil, err
	}
	return overlong{f}, nil
}

func TestReadFile(t *testing.T) {
	m := fstest.MapFS{"a": {Data: []byte("12345")}, "d/x": {Data: nil}}
	b, err := ReadFile(overlongFS{m}, "a")
	if err != nil || len(b) != 5 {
		t.Errorf("ReadFile = %q, %v; want 5 bytes", b, err)
	}
	if _, err := ReadFile(m, "d"); err == nil {
		t.Error("reading a directory succeeded")
	}
	if _, err := ReadFile(m, "missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
	if b, err := ReadFile(m, "d/x"); err != nil || len(b) != 0 {
		t.Errorf("empty file: %q, %v", b, err)
	}
}

func TestEnvIMDS(t *testing.T) {
	def := IMDSDefaults{BaseURLs: []string{"http://default"}, Timeout: 3 * time.Second, Budget: 7 * time.Second}
	for _, tc := range []struct {
		name    string
		env     Env
		urls    []string
		budget  time.Duration
		timeout time.Duration
		probe   time.Duration
		retries int
		err     string
	}{
		{name: "defaults", urls: []string{"http://default"}, budget: 7 * time.Second, timeout: 3 * time.Second},
		{name: "env budget", env: Env{Budget: 2 * time.Second}, urls: []string{"http://default"}, budget: 2 * time.Second, timeout: 3 * time.Second},
		{name: "config wins", env: Env{Budget: 2 * time.Second, Config: map[string]any{"ec2": map[string]any{
			"metadata_urls": []any{"http://127.0.0.1:1", "http://127.0.0.1:2"}, "max_wait": 30, "timeout": "1.5", "retries": 4}}},
			urls: []string{"http://127.0.0.1:1", "http://127.0.0.1:2"}, budget: 30 * time.Second, timeout: 1500 * time.Millisecond, retries: 4},
		{name: "max_wait zero is one attempt", env: Env{Config: map[string]any{"Ec2": map[string]any{"max_wait": 0}}},
			urls: []string{"http://default"}, budget: 7 * time.Second, timeout: 3 * time.Second, retries: -1},
		// Under the boot's policy the source's defaults give way: the
		// policy's window, timeout and deadline; configuration still wins.
		{name: "policy", env: Env{Budget: 2 * time.Second, Policy: &imds.Policy{}},
			urls: []string{"http://default"}, budget: imds.DefaultDeadline, timeout: imds.DefaultReadTimeout, probe: imds.DefaultProbe},
		{name: "policy, config wins", env: Env{Policy: &imds.Policy{Deadline: time.Minute}, Config: map[string]any{"Ec2": map[string]any{
			"max_wait": 30, "timeout": 50, "retries": 4}}},
			urls: []string{"http://default"}, budget: time.Minute, timeout: 50 * time.Second, probe: 30 * time.Second, retries: 4},
		{name: "policy, max_wait zero is one attempt", env: Env{Policy: &imds.Policy{}, Config: map[string]any{"Ec2": map[string]any{"max_wait": -1}}},
			urls: []string{"http://default"}, budget: imds.DefaultDeadline, timeout: imds.DefaultReadTimeout, probe: imds.DefaultProbe, retries: -1},
		{name: "bad timeout", env: Env{Config: map[string]any{"Ec2": map[string]any{"timeout": "soon"}}}, err: `datasource Ec2: timeout: "soon" is not a number`},
		{name: "bad max_wait", env: Env{Config: map[string]any{"Ec2": map[string]any{"max_wait": []any{1}}}}, err: "datasource Ec2: max_wait:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := tc.env.IMDS("Ec2", def)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(c.BaseURLs, tc.urls) || c.Budget != tc.budget || c.Timeout != tc.timeout || c.Retries != tc.retries || c.ProbeWindow != tc.probe {
				t.Errorf("got urls %v budget %v timeout %v retries %d probe %v", c.BaseURLs, c.Budget, c.Timeout, c.Retries, c.ProbeWindow)
			}
		})
	}
	if _, err := (Env{}).IMDS("X", IMDSDefaults{}); err == nil {
		t.Error("no URL: no error")
	}
}

type plainErrFS struct{}

func (plainErrFS) Open(name string) (fs.File, error) {
	return nil, errors.New("could not find directory " + name)
}

// TestReadFileNotExist: go-diskfs's plain "could not find" errors read as
// fs.ErrNotExist, so a config drive without ec2/latest is not broken.
func TestReadFileNotExist(t *testing.T) {
	_, err := ReadFile(plainErrFS{}, "ec2/latest/meta-data.json")
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "could not find directory") {
		t.Errorf("err = %v, want fs.ErrNotExist keeping the original text", err)
	}
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{fs.ErrNotExist, true},
		{errors.New("open x: file does not exist"), true},
		{errors.New("permission denied"), false},
	} {
		if got := IsNotExist(tc.err); got != tc.want {
			t.Errorf("IsNotExist(%v) = %v", tc.err, got)
		}
	}
}

// TestDescription: str(DataSource) as cloud-init prints it per class.
func TestDescription(t *testing.T) {
	for _, tc := range []struct {
		d    Data
		want string
	}{
		{Data{Name: "NoCloud", Subplatform: "config-disk (/dev/sr0)", Mode: "net"}, "DataSourceNoCloud [seed=/dev/sr0]"},
		{Data{Name: "NoCloud", Subplatform: "seed-dir (/var/lib/cloud/seed/nocloud)", Mode: "local"}, "DataSourceNoCloud [seed=/var/lib/cloud/seed/nocloud][dsmode=local]"},
		{Data{Name: "NoCloud", Subplatform: "seed-dir (http://10.0.0.1/)", Mode: "net", NetworkStage: true}, "DataSourceNoCloudNet [seed=http://10.0.0.1/]"},
		{Data{Name: "NoCloud", Mode: "net"}, "DataSourceNoCloud "},
		{Data{Name: "OpenNebula", Subplatform: "seed-dir (/var/lib/cloud/seed/opennebula)"}, "DataSourceOpenNebula [seed=/var/lib/cloud/seed/opennebula][dsmode=net]"},
		{Data{Name: "ConfigDrive", Subplatform: "config-disk (/dev/sr0)", Mode: "net"}, "DataSourceConfigDrive [net,ver=2][source=/dev/sr0]"},
		{Data{Name: "OpenStack", Subplatform: "metadata (http://127.0.0.1:8169)", Mode: "net"}, "DataSourceOpenStackLocal [net,ver=2]"},
		{Data{Name: "Azure", Subplatform: "config-disk (/dev/sr0)"}, "DataSourceAzure [seed=/dev/sr0]"},
		{Data{Name: "Ec2", Subplatform: "metadata (http://127.0.0.1:8169)"}, "DataSourceEc2Local"},
		{Data{Name: "GCE"}, "DataSourceGCELocal"},
		{Data{Name: "Hetzner", Subplatform: "metadata (http://127.0.0.1:8169/hetzner/v1/metadata)"}, "DataSourceHetzner"},
		{Data{Name: "None"}, "DataSourceNone"},
		{Data{Name: "SmartOS", Describe: "DataSourceSmartOS [client=X]"}, "DataSourceSmartOS [client=X]"},
	} {
		if got := tc.d.Description(); got != tc.want {
			t.Errorf("%s: Description() = %q, want %q", tc.d.Name, got, tc.want)
		}
	}
}

// TestBoundAndWindow: a source's waits on its platform follow the Policy
// when there is one, Env.Budget when there is not, the source's default
// when neither; a configured max_wait is the detection window.
func TestBoundAndWindow(t *testing.T) {
	pol := &imds.Policy{Deadline: 90 * time.Second, Probe: 4 * time.Second}
	maxWait := map[string]any{"Src": map[string]any{"max_wait": 7}}
	for _, tc := range []struct {
		name          string
		env           Env
		bound, window time.Duration
	}{
		{"defaults", Env{}, time.Minute, 3 * time.Second},
		{"budget", Env{Budget: 2 * time.Second}, 2 * time.Second, 2 * time.Second},
		{"policy over budget", Env{Budget: 2 * time.Second, Policy: pol}, 90 * time.Second, 4 * time.Second},
		{"policy defaults", Env{Policy: &imds.Policy{}}, imds.DefaultDeadline, imds.DefaultProbe},
		{"max_wait", Env{Budget: 2 * time.Second, Policy: pol, Config: maxWait}, 90 * time.Second, 7 * time.Second},
		{"max_wait without policy", Env{Config: maxWait}, time.Minute, 7 * time.Second},
		{"max_wait 0 keeps the window", Env{Policy: pol, Config: map[string]any{"src": map[string]any{"max_wait": 0}}}, 90 * time.Second, 4 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.env.Bound(time.Minute); got != tc.bound {
				t.Errorf("Bound = %v, want %v", got, tc.bound)
			}
			if got := tc.env.Window("Src", 3*time.Second); got != tc.window {
				t.Errorf("Window = %v, want %v", got, tc.window)
			}
		})
	}
}
