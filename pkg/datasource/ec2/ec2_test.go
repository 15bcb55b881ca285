package ec2

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/dstest"
)

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

// upstreamDiffers are the fields of each case's upstream golden where
// cloudroot deliberately differs (docs/datasources.md).
var upstreamDiffers = map[string]dstest.Differs{}

func TestGolden(t *testing.T) {
	for _, name := range dstest.Cases(t, "testdata") {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("testdata", name)
			var spec caseSpec
			dstest.ReadJSON(t, filepath.Join(dir, "case.json"), &spec)
			srv := dstest.Serve(t, filepath.Join(dir, "tree"), imdsHook(t, spec.IMDS))
			d, err := (&Source{}).Get(context.Background(), env(spec.DMI, srv.URL, spec.Config))
			dstest.Upstream(t, dir, d, err, srv.URL, upstreamDiffers[name])
			if err != nil {
				t.Fatal(err)
			}
			dstest.Golden(t, filepath.Join(dir, "want.json"), d, srv.URL)
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

// TestConform: the cases every metadata-URL source shares, and EC2's
// own.
func TestConform(t *testing.T) {
	srv := dstest.Serve(t, "testdata/aws-imdsv2/tree", nil)
	awsDMI := bootenv.DMI{ProductUUID: "ec2a0000-0000-0000-0000-000000000000"}
	dstest.Conform(t, dstest.Metadata{
		Source:       &Source{},
		Env:          func(base string) datasource.Env { return env(bootenv.DMI{}, base, nil) },
		Root:         "testdata/ec2like-imdsv1/tree",
		Why404Broken: "a service answering 404 to every API version is not absent for cloud-init's Ec2 either (no API version answers): \"no version answers\" below",
		NotFound: []dstest.NotFoundCase{
			{Name: "strict_id on unknown platform", Env: env(bootenv.DMI{}, srv.URL, map[string]any{"strict_id": true}), Want: datasource.ErrNotFound, Quiet: srv},
		},
		Broken: []dstest.Broken{
			{Name: "token 403 on AWS", Hook: dstest.Status(http.StatusForbidden), Want: "endpoint is disabled",
				Env: func(base string) datasource.Env { return env(awsDMI, base, nil) }},
			{Name: "no version answers", Hook: func(w http.ResponseWriter, r *http.Request) bool {
				http.NotFound(w, r)
				return true
			}, Want: "no API version answers"},
			{Name: "broken leaf", Hook: func(w http.ResponseWriter, r *http.Request) bool {
				if strings.HasSuffix(r.URL.Path, "/ami-id") {
					http.Error(w, "", http.StatusBadGateway)
					return true
				}
				return imdsHook(t, "v1")(w, r)
			}, Want: "ami-id: status 502"},
		},
	})
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

// TestParseListingAsMaterializer: the finer points of cloud-init's
// MetadataMaterializer (CloudStack's virtual router serves the same
// listings): any line end, spaces around "<n>=", no security-credentials,
// a later leaf replacing an earlier one, directories winning.
func TestParseListingAsMaterializer(t *testing.T) {
	got := ParseListing([]byte("instance-id\r\nlocal-hostname\npublic-keys/\n0=mykey\n 1=other \nsecurity-credentials/\n" +
		"security-credentials\nplacement/\nplacement\nplacement/\nname=x\nlocal-hostname\n\n/\n"))
	want := []Entry{
		{Name: "public-keys", Dir: true}, {Name: "placement", Dir: true},
		{Name: "instance-id", Resource: "instance-id"}, {Name: "local-hostname", Resource: "local-hostname"},
		{Name: "mykey", Resource: "0/openssh-key"}, {Name: "other", Resource: "1/openssh-key"},
		{Name: "name=x", Resource: "name=x"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ParseListing (-want +got):\n%s", diff)
	}
}

// TestDecodeLeafAsDecoder: the finer points of cloud-init's
// MetadataLeafDecoder: spaces around a JSON object, any line end, a lone
// line end being one empty line.
func TestDecodeLeafAsDecoder(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want any
	}{
		{"10.1.1.23", "10.1.1.23"},
		{"a\nb\n", []any{"a", "b"}},
		{"a\r\nb", []any{"a", "b"}},
		{"a\rb\n", []any{"a", "b"}},
		{"\n", []any{""}},
		{"a\rb", "a\rb"},
		{` {"k": 1} `, map[string]any{"k": 1.0}},
	} {
		if got := DecodeLeaf([]byte(tc.in)); !cmp.Equal(got, tc.want) {
			t.Errorf("DecodeLeaf(%q) = %#v, want %#v", tc.in, got, tc.want)
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
	f.Add([]byte("instance-id\npublic-keys/\n0=key\nsecurity-credentials\n"))
	f.Add([]byte("a/\na\n\r\n=\n0=\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		seen := map[string]bool{}
		dirs := true
		for _, e := range ParseListing(b) {
			if e.Name == "" || e.Name == "security-credentials" {
				t.Fatalf("entry %+v from %q", e, b)
			}
			if seen[e.Name] {
				t.Fatalf("%q listed twice from %q", e.Name, b)
			}
			seen[e.Name] = true
			if e.Dir && !dirs {
				t.Fatalf("directory %q after a leaf from %q", e.Name, b)
			}
			dirs = e.Dir
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
	f.Add([]byte(`{"a": [1]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		v := DecodeLeaf(b)
		if len(b) == 0 && v != "" {
			t.Fatalf("empty leaf decoded to %#v", v)
		}
		if _, err := json.Marshal(v); err != nil {
			t.Fatalf("DecodeLeaf(%q) = %#v is not JSON: %v", b, v, err)
		}
		_ = MaybeBase64(b)
	})
}

// urlSource is the Ec2 source for the metadata URL checks: an unknown
// platform, metadata_urls and more Ec2 settings.
var urlSource = dstest.URLSource{Source: &Source{}, Env: func(kv map[string]any, urls ...string) datasource.Env {
	cfg := map[string]any{"metadata_urls": urls}
	for k, v := range kv {
		cfg[k] = v
	}
	return env(bootenv.DMI{}, urls[0], cfg)
}}

// tokenReq is the IMDSv2 token request, the first of every attempt.
var tokenReq = dstest.Req{Method: http.MethodPut, Path: "/latest/api/token"}

func TestURLFailover(t *testing.T) {
	srv := dstest.Serve(t, "testdata/ec2like-imdsv1/tree", imdsHook(t, "v1"))
	urlSource.Failover(t, srv.URL)
}

// TestConfig: `retries`, `timeout` and `max_wait` under datasource: Ec2:
// are honoured.
func TestConfig(t *testing.T) {
	t.Run("retries", func(t *testing.T) {
		urlSource.Retries(t, dstest.Status(http.StatusServiceUnavailable), "status 503", tokenReq,
			// A service answering 5xx is there: read retries.
			dstest.Attempts{KV: nil, N: 1 + DefaultReadRetries},
			dstest.Attempts{KV: map[string]any{"retries": 4}, N: 5},
			dstest.Attempts{KV: map[string]any{"retries": 0}, N: 1},
			dstest.Attempts{KV: map[string]any{"max_wait": 0}, N: 1}, // cloud-init: one try
		)
	})
	t.Run("timeout", func(t *testing.T) {
		// The token request is never answered.
		urlSource.Timeouts(t, dstest.Serve(t, "", dstest.Hang), tokenReq, 1)
		// A slow service answers within a longer timeout.
		slow := dstest.Serve(t, "testdata/aws-imdsv2/tree", func(w http.ResponseWriter, r *http.Request) bool {
			if r.Method == http.MethodPut {
				time.Sleep(300 * time.Millisecond)
			}
			return imdsHook(t, "v2")(w, r)
		})
		if _, err := (&Source{}).Get(context.Background(), env(bootenv.DMI{}, slow.URL, map[string]any{"timeout": "5"})); err != nil {
			t.Errorf("timeout 5: %v", err)
		}
	})
	t.Run("max_wait", func(t *testing.T) { urlSource.MaxWait(t, 0.3) })
	t.Run("malformed", func(t *testing.T) {
		_, err := (&Source{}).Get(context.Background(), env(bootenv.DMI{}, "http://127.0.0.1:1", map[string]any{"timeout": "soon"}))
		if err == nil || !strings.Contains(err.Error(), "timeout") || errors.Is(err, datasource.ErrNotFound) {
			t.Errorf("err = %v, want the malformed key named", err)
		}
	})
}

// Once the service has answered, each read is retried DefaultReadRetries
// times (cloud-init's crawl): a path failing 5 times in a row is still
// read; a configured `retries` applies to reads too.
func TestReadRetries(t *testing.T) {
	flaky := func(fails int) func(w http.ResponseWriter, r *http.Request) bool {
		var mu sync.Mutex
		n := 0
		v2 := imdsHook(t, "v2")
		return func(w http.ResponseWriter, r *http.Request) bool {
			if strings.HasSuffix(r.URL.Path, "/meta-data/instance-type") {
				mu.Lock()
				n++
				fail := n <= fails
				mu.Unlock()
				if fail {
					http.Error(w, "", http.StatusServiceUnavailable)
					return true
				}
			}
			return v2(w, r)
		}
	}
	aws := bootenv.DMI{SysVendor: "Amazon EC2", ProductUUID: "EC2E1916-9099-7CAF-FD21-012345678ABC"}
	srv := dstest.Serve(t, "testdata/aws-imdsv2/tree", flaky(DefaultReadRetries))
	d, err := (&Source{}).Get(context.Background(), env(aws, srv.URL, nil))
	if err != nil {
		t.Fatalf("a path failing %d times: %v", DefaultReadRetries, err)
	}
	if got := srv.Count(http.MethodGet, "/2021-03-23/meta-data/instance-type"); got != 1+DefaultReadRetries {
		t.Errorf("instance-type asked %d times, want %d", got, 1+DefaultReadRetries)
	}
	if d.InstanceID() == "" {
		t.Error("no instance-id")
	}
	srv = dstest.Serve(t, "testdata/aws-imdsv2/tree", flaky(DefaultReadRetries))
	if _, err := (&Source{}).Get(context.Background(), env(aws, srv.URL, map[string]any{"retries": 2})); err == nil || !strings.Contains(err.Error(), "instance-type") {
		t.Errorf("retries: 2 and a path failing %d times: %v", DefaultReadRetries, err)
	}
}
