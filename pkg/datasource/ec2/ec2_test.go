package ec2

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
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
)

var update = flag.Bool("update", false, "rewrite testdata/*/want.json")

const testToken = "AQAEAFcloudroot-test-token=="

// caseSpec is testdata/<case>/case.json.
type caseSpec struct {
	DMI bootenv.DMI `json:"dmi"`
	// IMDS is "v2" (a token is required on every GET) or "v1" (the token
	// PUT is 405, as on EC2-compatible services without IMDSv2).
	IMDS   string         `json:"imds"`
	Config map[string]any `json:"config"`
}

// imdsHook fakes the token dance: PUT latest/api/token answers a token
// (v2) or 405 (v1); on v2 every GET must carry the token.
func imdsHook(t *testing.T, mode string) func(w http.ResponseWriter, r *http.Request) bool {
	return func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path == "/latest/api/token" {
			if r.Method != http.MethodPut {
				http.Error(w, "", http.StatusMethodNotAllowed)
				return true
			}
			if mode == "v1" {
				http.Error(w, "", http.StatusMethodNotAllowed)
				return true
			}
			if r.Header.Get(TokenTTLHeader) != TokenTTL {
				t.Errorf("token PUT without %s: %v", TokenTTLHeader, r.Header)
				http.Error(w, "", http.StatusBadRequest)
				return true
			}
			w.Write([]byte(testToken))
			return true
		}
		if mode == "v2" && r.Header.Get(TokenHeader) != testToken {
			t.Errorf("%s %s without the token", r.Method, r.URL.Path)
			http.Error(w, "", http.StatusUnauthorized)
			return true
		}
		return false
	}
}

func env(dmi bootenv.DMI, url string, cfg map[string]any) datasource.Env {
	c := map[string]any{"Ec2": map[string]any{"metadata_urls": []any{url}}}
	for k, v := range cfg {
		c["Ec2"].(map[string]any)[k] = v
	}
	return datasource.Env{DMI: dmi, NetworkUp: true, Config: c, Budget: 5 * time.Second}
}

func TestGolden(t *testing.T) {
	for _, name := range dstest.Cases(t, "testdata") {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("testdata", name)
			b, err := os.ReadFile(filepath.Join(dir, "case.json"))
			if err != nil {
				t.Fatal(err)
			}
			var spec caseSpec
			if err := json.Unmarshal(b, &spec); err != nil {
				t.Fatal(err)
			}
			srv := dstest.Serve(t, filepath.Join(dir, "tree"), imdsHook(t, spec.IMDS))
			d, err := (&Source{}).Get(context.Background(), env(spec.DMI, srv.URL, spec.Config))
			if err != nil {
				t.Fatal(err)
			}
			dstest.Golden(t, filepath.Join(dir, "want.json"), d, srv.URL, *update)
		})
	}
}

// TestVersionProbe checks the probe order: newest first, stopping at the
// first version that answers.
func TestVersionProbe(t *testing.T) {
	srv := dstest.Serve(t, "testdata/ec2like-imdsv1/tree", imdsHook(t, "v1"))
	if _, err := (&Source{}).Get(context.Background(), env(bootenv.DMI{}, srv.URL, nil)); err != nil {
		t.Fatal(err)
	}
	var probes []string
	for _, r := range srv.Requests() {
		if strings.HasSuffix(r.Path, "/meta-data/instance-id") && len(probes) < 4 {
			probes = append(probes, r.Path)
		}
	}
	want := []string{"/2021-03-23/meta-data/instance-id", "/2018-09-24/meta-data/instance-id", "/2016-09-02/meta-data/instance-id", "/2009-04-04/meta-data/instance-id"}
	if diff := cmp.Diff(want, probes); diff != "" {
		t.Errorf("probes (-want +got):\n%s", diff)
	}
}

func TestNoRequests(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  func(url string) datasource.Env
		want error
	}{
		{"network down", func(url string) datasource.Env {
			e := env(bootenv.DMI{}, url, nil)
			e.NetworkUp = false
			return e
		}, datasource.ErrNeedNetwork},
		{"strict_id on unknown platform", func(url string) datasource.Env {
			return env(bootenv.DMI{}, url, map[string]any{"strict_id": true})
		}, datasource.ErrNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := dstest.Serve(t, "testdata/aws-imdsv2/tree", nil)
			_, err := (&Source{}).Get(context.Background(), tc.env(srv.URL))
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if n := len(srv.Requests()); n != 0 {
				t.Errorf("%d requests made, want none", n)
			}
		})
	}
}

func TestAbsent(t *testing.T) {
	e := env(bootenv.DMI{}, dstest.ClosedURL(t), nil)
	_, err := (&Source{}).Get(context.Background(), e)
	if !errors.Is(err, datasource.ErrNotFound) {
		t.Fatalf("err = %v, want ErrNotFound", err)
	}
}

// TestSlow: a service that never answers costs the budget, not more.
func TestSlow(t *testing.T) {
	srv := dstest.Serve(t, "", func(w http.ResponseWriter, r *http.Request) bool {
		select {
		case <-r.Context().Done():
		case <-time.After(time.Minute):
		}
		return true
	})
	e := env(bootenv.DMI{}, srv.URL, nil)
	e.Budget = 300 * time.Millisecond
	start := time.Now()
	_, err := (&Source{}).Get(context.Background(), e)
	if !errors.Is(err, datasource.ErrNotFound) {
		t.Fatalf("err = %v, want ErrNotFound", err)
	}
	if el := time.Since(start); el > 20*time.Second {
		t.Errorf("took %v with a 300ms budget", el)
	}
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		dmi  bootenv.DMI
		hook func(w http.ResponseWriter, r *http.Request) bool
		want string
	}{
		{"500 everywhere", bootenv.DMI{}, func(w http.ResponseWriter, r *http.Request) bool {
			http.Error(w, "", http.StatusInternalServerError)
			return true
		}, "status 500"},
		{"token 403 on AWS", bootenv.DMI{ProductUUID: "ec2a0000-0000-0000-0000-000000000000"}, func(w http.ResponseWriter, r *http.Request) bool {
			http.Error(w, "", http.StatusForbidden)
			return true
		}, "endpoint is disabled"},
		{"no version answers", bootenv.DMI{}, func(w http.ResponseWriter, r *http.Request) bool {
			http.NotFound(w, r)
			return true
		}, "no API version answers"},
		{"broken leaf", bootenv.DMI{}, func(w http.ResponseWriter, r *http.Request) bool {
			if strings.HasSuffix(r.URL.Path, "/ami-id") {
				http.Error(w, "", http.StatusBadGateway)
				return true
			}
			return imdsHook(t, "v1")(w, r)
		}, "ami-id: status 502"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := dstest.Serve(t, "testdata/ec2like-imdsv1/tree", tc.hook)
			_, err := (&Source{}).Get(context.Background(), env(tc.dmi, srv.URL, nil))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want containing %q", err, tc.want)
			}
			if errors.Is(err, datasource.ErrNotFound) {
				t.Errorf("a service that answers wrongly is not ErrNotFound: %v", err)
			}
			if !strings.Contains(err.Error(), srv.URL) {
				t.Errorf("error does not name the URL: %v", err)
			}
		})
	}
}

func TestParseListing(t *testing.T) {
	got := ParseListing([]byte("ami-id\nblock-device-mapping/\n0=deploy\n\n  hostname  \nx/\nx\nami-id\n=y\n"))
	want := []Entry{
		{Name: "block-device-mapping", Dir: true},
		{Name: "x", Dir: true},
		{Name: "ami-id", Resource: "ami-id"},
		{Name: "deploy", Resource: "0/openssh-key"},
		{Name: "hostname", Resource: "hostname"},
		{Name: "=y", Resource: "=y"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestDecodeLeaf(t *testing.T) {
	for in, want := range map[string]any{
		"":              "",
		"a":             "a",
		"a\nb":          []any{"a", "b"},
		"a\n":           []any{"a"},
		`{"k": 1}`:      map[string]any{"k": 1.0},
		`{not json}`:    "{not json}",
		"\xff\xfe":      "//4=",
		"{\n\"a\":2\n}": map[string]any{"a": 2.0},
	} {
		if diff := cmp.Diff(want, DecodeLeaf([]byte(in))); diff != "" {
			t.Errorf("DecodeLeaf(%q) (-want +got):\n%s", in, diff)
		}
	}
}

func TestMaybeBase64(t *testing.T) {
	for in, want := range map[string]string{
		"I2Nsb3VkLWNvbmZpZwo=": "#cloud-config\n",
		"#cloud-config\n":      "#cloud-config\n",
		"I2Nsb3Vk\nLWNv":       "I2Nsb3Vk\nLWNv",
		"abc":                  "abc",
	} {
		if got := string(MaybeBase64([]byte(in))); got != want {
			t.Errorf("MaybeBase64(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPlatform(t *testing.T) {
	for _, tc := range []struct {
		dmi  bootenv.DMI
		want string
	}{
		{bootenv.DMI{ProductUUID: "EC2E1916-9099-7CAF-FD21-012345678ABC"}, "aws"},
		{bootenv.DMI{ProductUUID: "45E12AEC-DCD1-B213-94ED-012345ABCDEF"}, "aws"},
		{bootenv.DMI{ProductSerial: "srv-abcde.gb1.brightbox.com"}, "brightbox"},
		{bootenv.DMI{SysVendor: "3DS Outscale", ProductName: "3DS Outscale VM"}, "outscale"},
		{bootenv.DMI{ProductUUID: "12345678-0000-0000-0000-000000000000"}, "unknown"},
	} {
		if got := Platform(tc.dmi); got != tc.want {
			t.Errorf("Platform(%+v) = %q, want %q", tc.dmi, got, tc.want)
		}
	}
}

func FuzzParseListing(f *testing.F) {
	f.Add([]byte("ami-id\nplacement/\n0=key\n"))
	f.Add([]byte("1=a=b\n/\n//\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		seen := map[string]bool{}
		for _, e := range ParseListing(b) {
			if e.Name == "" {
				t.Fatalf("empty name from %q", b)
			}
			if seen[e.Name] {
				t.Fatalf("%q listed twice from %q", e.Name, b)
			}
			seen[e.Name] = true
			if !e.Dir && e.Resource == "" {
				t.Fatalf("leaf %q without resource", e.Name)
			}
		}
	})
}

func FuzzDecodeLeaf(f *testing.F) {
	f.Add([]byte(`{"Code":"Success"}`))
	f.Add([]byte("a\nb\n"))
	f.Add([]byte("\xff"))
	f.Fuzz(func(t *testing.T, b []byte) {
		v := DecodeLeaf(b)
		if _, err := json.Marshal(v); err != nil {
			t.Fatalf("DecodeLeaf(%q) = %#v is not JSON: %v", b, v, err)
		}
		_ = MaybeBase64(b)
	})
}
