package imdsserve

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/ec2"
	"github.com/cloudroot/cloudroot/pkg/datasource/gce"
	"github.com/cloudroot/cloudroot/pkg/datasource/openstack"
	"github.com/cloudroot/cloudroot/pkg/internal/testtree"
)

const testdata = "../datasource"

// serve starts a Server on an httptest server.
func serve(t *testing.T, o Options) (*Server, *httptest.Server, *bytes.Buffer) {
	t.Helper()
	var log bytes.Buffer
	if o.Log == nil {
		o.Log = &lockedBuf{b: &log}
	}
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return s, hs, &log
}

type lockedBuf struct{ b *bytes.Buffer }

func (l *lockedBuf) Write(p []byte) (int, error) { return l.b.Write(p) }

type reply struct {
	code int
	body string
	hdr  http.Header
}

func do(t *testing.T, method, url string, hdr map[string]string) reply {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{resp.StatusCode, string(b), resp.Header}
}

func TestNewErrors(t *testing.T) {
	if _, err := New(Options{Cloud: "digitalocean", Dir: t.TempDir()}); err == nil {
		t.Error("unknown cloud accepted")
	}
	if _, err := New(Options{Cloud: CloudEC2}); err == nil {
		t.Error("empty dir accepted")
	}
	if _, err := New(Options{Cloud: CloudEC2, Dir: filepath.Join(t.TempDir(), "nope")}); err == nil {
		t.Error("missing dir accepted")
	}
}

func TestEC2TokenDance(t *testing.T) {
	tree := filepath.Join(testdata, "ec2/testdata/aws-imdsv2/tree")
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s, hs, log := serve(t, Options{Cloud: CloudEC2, Dir: tree, RequireToken: true, Now: func() time.Time { return now }})
	u := hs.URL

	if r := do(t, "GET", u+"/latest/meta-data/instance-id", nil); r.code != 401 {
		t.Errorf("GET without token = %d, want 401", r.code)
	}
	if r := do(t, "PUT", u+TokenPath, nil); r.code != 400 {
		t.Errorf("PUT without TTL = %d, want 400", r.code)
	}
	if r := do(t, "PUT", u+TokenPath, map[string]string{TokenTTLHeader: "21601"}); r.code != 400 {
		t.Errorf("PUT TTL 21601 = %d, want 400", r.code)
	}
	if r := do(t, "PUT", u+TokenPath, map[string]string{TokenTTLHeader: "60", "X-Forwarded-For": "1.2.3.4"}); r.code != 403 {
		t.Errorf("PUT through a proxy = %d, want 403", r.code)
	}
	if r := do(t, "PUT", u+"/latest/meta-data/instance-id", map[string]string{TokenTTLHeader: "60"}); r.code != 405 {
		t.Errorf("PUT elsewhere = %d, want 405", r.code)
	}
	r := do(t, "PUT", u+TokenPath, map[string]string{TokenTTLHeader: "60"})
	if r.code != 200 || len(r.body) < 20 || r.hdr.Get(TokenTTLHeader) != "60" {
		t.Fatalf("PUT token = %d %q (ttl %q)", r.code, r.body, r.hdr.Get(TokenTTLHeader))
	}
	tok := map[string]string{TokenHeader: r.body}
	if r := do(t, "GET", u+"/latest/meta-data/instance-id", map[string]string{TokenHeader: "bogus"}); r.code != 401 {
		t.Errorf("GET with a bad token = %d, want 401", r.code)
	}
	for _, tc := range []struct{ path, want string }{
		{"/2021-03-23/meta-data/instance-id", "i-0c1d2e3f4a5b6c7d8"},
		{"/latest/meta-data/instance-id", "i-0c1d2e3f4a5b6c7d8"},
		{"/latest/meta-data/placement/", "availability-zone\navailability-zone-id\nregion"},
		{"/", "2021-03-23\nlatest"},
	} {
		r := do(t, "GET", u+tc.path, tok)
		if r.code != 200 || r.body != tc.want {
			t.Errorf("GET %s = %d %q, want 200 %q", tc.path, r.code, r.body, tc.want)
		}
	}
	for _, p := range []string{"/2018-09-24/meta-data/instance-id", "/latest/meta-data/instance-id/", "/latest/nope", "/latest/../../etc/passwd", "/latest/meta-data/public-keys/_index"} {
		if r := do(t, "GET", u+p, tok); r.code != 404 {
			t.Errorf("GET %s = %d, want 404", p, r.code)
		}
	}
	if r := do(t, "POST", u+"/latest/meta-data/", tok); r.code != 405 {
		t.Errorf("POST = %d, want 405", r.code)
	}
	now = now.Add(61 * time.Second)
	if r := do(t, "GET", u+"/latest/meta-data/instance-id", tok); r.code != 401 {
		t.Errorf("GET with an expired token = %d, want 401", r.code)
	}
	if n := s.Count("PUT", TokenPath); n != 4 {
		t.Errorf("Count(PUT token) = %d, want 4", n)
	}
	if !strings.Contains(log.String(), "imds: PUT /latest/api/token 200\n") || !strings.Contains(log.String(), "imds: GET /latest/meta-data/instance-id 401\n") {
		t.Errorf("request log lacks the token PUT or the 401:\n%s", log)
	}
	if s.Log() != log.String() {
		t.Errorf("Log() differs from what was written:\n%s\n---\n%s", s.Log(), log)
	}
}

func TestEC2OptionalToken(t *testing.T) {
	_, hs, _ := serve(t, Options{Cloud: CloudEC2, Dir: filepath.Join(testdata, "ec2/testdata/ec2like-imdsv1/tree")})
	if r := do(t, "GET", hs.URL+"/latest/meta-data/public-keys/", nil); r.code != 200 || !strings.HasPrefix(r.body, "0=") {
		t.Errorf("public-keys listing (_index) = %d %q", r.code, r.body)
	}
	if r := do(t, "GET", hs.URL+"/2009-04-04/meta-data/public-keys/0/", nil); r.code != 200 || r.body != "openssh-key" {
		t.Errorf("generated listing = %d %q", r.code, r.body)
	}
	if r := do(t, "HEAD", hs.URL+"/2009-04-04/user-data", nil); r.code != 200 || r.body != "" {
		t.Errorf("HEAD = %d %q", r.code, r.body)
	}
}

func TestVersionOnlyLatest(t *testing.T) {
	tree := testtree.Dir(t, map[string]string{"latest/meta-data/instance-id": "i-1"})
	_, hs, _ := serve(t, Options{Cloud: CloudEC2, Dir: tree})
	for _, p := range []string{"/latest/meta-data/instance-id", "/2021-03-23/meta-data/instance-id", "/2009-04-04/meta-data/instance-id"} {
		if r := do(t, "GET", hs.URL+p, nil); r.code != 200 || r.body != "i-1" {
			t.Errorf("GET %s = %d %q", p, r.code, r.body)
		}
	}
	if r := do(t, "GET", hs.URL+"/not-a-version/meta-data/instance-id", nil); r.code != 404 {
		t.Errorf("bad version = %d, want 404", r.code)
	}
}

func TestOpenStack(t *testing.T) {
	_, hs, _ := serve(t, Options{Cloud: CloudOpenStack, Dir: filepath.Join(testdata, "openstack/testdata/rocky/tree")})
	if r := do(t, "GET", hs.URL+"/openstack", nil); r.code != 200 || !strings.Contains(r.body, "2018-08-27\n") {
		t.Errorf("/openstack = %d %q", r.code, r.body)
	}
	if r := do(t, "PUT", hs.URL+TokenPath, map[string]string{TokenTTLHeader: "60"}); r.code != 405 {
		t.Errorf("token PUT = %d, want 405", r.code)
	}
	a := do(t, "GET", hs.URL+"/openstack/latest/meta_data.json", nil)
	b := do(t, "GET", hs.URL+"/openstack/2018-08-27/meta_data.json", nil)
	if a.code != 200 || b.code != 200 || !strings.Contains(a.body, `"uuid"`) {
		t.Errorf("meta_data.json = %d/%d %q", a.code, b.code, a.body)
	}
	if r := do(t, "GET", hs.URL+"/latest/meta-data/instance-id", nil); r.code != 200 || r.body == "" {
		t.Errorf("EC2-compatible instance-id = %d %q", r.code, r.body)
	}
	if r := do(t, "GET", hs.URL+"/openstack/2012-08-10/meta_data.json", nil); r.code != 404 {
		t.Errorf("unserved version = %d, want 404", r.code)
	}

	// Without openstack/_index nor openstack/latest: the listing is made
	// up and latest is the newest dated version.
	tree := testtree.Dir(t, map[string]string{
		"openstack/2013-04-04/meta_data.json": `{"uuid": "old"}`,
		"openstack/2018-08-27/meta_data.json": `{"uuid": "new"}`,
		"openstack/content/0000":              "file",
	})
	_, hs2, _ := serve(t, Options{Cloud: CloudOpenStack, Dir: tree})
	if r := do(t, "GET", hs2.URL+"/openstack/", nil); r.body != "2013-04-04\n2018-08-27\nlatest" {
		t.Errorf("/openstack/ = %q", r.body)
	}
	if r := do(t, "GET", hs2.URL+"/openstack/latest/meta_data.json", nil); r.body != `{"uuid": "new"}` {
		t.Errorf("latest meta_data.json = %q", r.body)
	}
	if r := do(t, "GET", hs2.URL+"/openstack/content/0000", nil); r.body != "file" {
		t.Errorf("content/0000 = %q", r.body)
	}
}

func TestGCE(t *testing.T) {
	_, hs, _ := serve(t, Options{Cloud: CloudGCE, Dir: filepath.Join(testdata, "gce/testdata/instance-and-project-keys/tree")})
	g := map[string]string{FlavorHeader: Flavor}
	u := hs.URL + "/computeMetadata/v1/"
	r := do(t, "GET", u+"instance/id", nil)
	if r.code != 403 || r.hdr.Get(FlavorHeader) != Flavor {
		t.Errorf("without the flavor header = %d (flavor %q), want 403 with the header", r.code, r.hdr.Get(FlavorHeader))
	}
	if r := do(t, "GET", u+"instance/id", map[string]string{FlavorHeader: "google"}); r.code != 403 {
		t.Errorf("wrong flavor = %d, want 403", r.code)
	}
	r = do(t, "GET", u+"instance/attributes/?recursive=true", g)
	var attrs map[string]any
	if r.code != 200 || json.Unmarshal([]byte(r.body), &attrs) != nil || attrs["user-data-encoding"] != "base64" || r.hdr.Get("Content-Type") != "application/json" {
		t.Errorf("recursive attributes = %d %q %q", r.code, r.hdr.Get("Content-Type"), r.body)
	}
	if r := do(t, "GET", u+"instance/attributes/user-data-encoding", g); r.code != 200 || r.body != "base64" {
		t.Errorf("one attribute from _index = %d %q", r.code, r.body)
	}
	if r := do(t, "GET", u+"instance/attributes/user-data-encoding?alt=json", g); r.body != `"base64"` {
		t.Errorf("alt=json = %q", r.body)
	}
	if r := do(t, "GET", u+"instance/attributes/", g); r.code != 200 || !strings.Contains(r.body, "ssh-keys\n") {
		t.Errorf("attributes listing = %d %q", r.code, r.body)
	}
	if r := do(t, "GET", u+"instance/attributes/nope", g); r.code != 404 || r.hdr.Get(FlavorHeader) != Flavor {
		t.Errorf("missing attribute = %d (flavor %q)", r.code, r.hdr.Get(FlavorHeader))
	}
	if r := do(t, "GET", u+"instance/", g); r.body != "attributes/\nhostname\nid\nzone\n" {
		t.Errorf("instance/ listing = %q", r.body)
	}
	r = do(t, "GET", u+"instance/?recursive=true", g)
	var inst map[string]any
	if err := json.Unmarshal([]byte(r.body), &inst); err != nil || inst["id"] == nil {
		t.Errorf("recursive instance = %q (%v)", r.body, err)
	} else if a, ok := inst["attributes"].(map[string]any); !ok || a["user-data-encoding"] != "base64" {
		t.Errorf("recursive instance attributes = %v", inst["attributes"])
	}
}

// TestGoldenRoundTrip reads every golden tree through the simulator with the
// real datasource and compares with the case's want.json.
func TestGoldenRoundTrip(t *testing.T) {
	type caseSpec struct {
		DMI         bootenv.DMI `json:"dmi"`
		IMDS        string      `json:"imds"`
		DefaultUser string      `json:"default_user"`
	}
	for _, cloud := range Clouds() {
		if cloud == CloudAzure {
			continue // TestAzureGoldenRoundTrip
		}
		dsDir := filepath.Join(testdata, map[string]string{CloudEC2: "ec2", CloudOpenStack: "openstack", CloudGCE: "gce"}[cloud], "testdata")
		cases, err := os.ReadDir(dsDir)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			if !c.IsDir() {
				continue
			}
			t.Run(cloud+"/"+c.Name(), func(t *testing.T) {
				dir := filepath.Join(dsDir, c.Name())
				var spec caseSpec
				if b, err := os.ReadFile(filepath.Join(dir, "case.json")); err == nil {
					if err := json.Unmarshal(b, &spec); err != nil {
						t.Fatal(err)
					}
				}
				_, hs, _ := serve(t, Options{Cloud: cloud, Dir: filepath.Join(dir, "tree"), RequireToken: spec.IMDS == "v2", Log: io.Discard})
				env := datasource.Env{DMI: spec.DMI, NetworkUp: true, Budget: 5 * time.Second, DefaultUser: spec.DefaultUser}
				var src datasource.Source
				switch cloud {
				case CloudEC2:
					src = &ec2.Source{URLs: []string{hs.URL}}
				case CloudOpenStack:
					src = &openstack.Source{URLs: []string{hs.URL}}
				case CloudGCE:
					env.DMI.ProductName = "Google Compute Engine"
					src = &gce.Source{URLs: []string{hs.URL + "/computeMetadata/v1/"}}
				}
				d, err := src.Get(context.Background(), env)
				if err != nil {
					t.Fatal(err)
				}
				b, err := os.ReadFile(filepath.Join(dir, "want.json"))
				if err != nil {
					t.Fatal(err)
				}
				var want map[string]any
				if err := json.Unmarshal(b, &want); err != nil {
					t.Fatal(err)
				}
				got := map[string]any{
					"instance_id":    d.InstanceID(),
					"local_hostname": d.LocalHostname(),
					"meta_data":      d.MetaData,
				}
				if len(d.PublicKeys) > 0 {
					got["public_keys"] = d.PublicKeys
				}
				if d.UserData != nil {
					got["user_data"] = string(d.UserData)
				}
				got = normalise(t, got, hs.URL)
				for k, g := range got {
					if !reflect.DeepEqual(want[k], g) {
						t.Errorf("%s = %v\nwant.json has %v", k, g, want[k])
					}
				}
				if _, ok := want["public_keys"]; ok && got["public_keys"] == nil {
					t.Errorf("no public keys; want.json has %v", want["public_keys"])
				}
			})
		}
	}
}

// normalise round-trips v through JSON, the base URL replaced by BASE as in
// the golden files.
func normalise(t *testing.T, v map[string]any, base string) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.ReplaceAll(b, []byte(base), []byte("BASE"))
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestCheckLoopback(t *testing.T) {
	for _, a := range []string{"127.0.0.1:0", "127.0.0.1:8169", "127.1.2.3:80", "[::1]:80", "[::ffff:127.0.0.1]:80"} {
		if err := CheckLoopback(a); err != nil {
			t.Errorf("CheckLoopback(%s) = %v", a, err)
		}
	}
	for _, a := range []string{":80", "0.0.0.0:80", "localhost:80", "169.254.169.254:80", "[::]:80", "10.0.2.2:80", "127.0.0.1", "127.0.0.1:http2x", "[fe80::1%lo]:80"} {
		if err := CheckLoopback(a); err == nil {
			t.Errorf("CheckLoopback(%s) accepted", a)
		}
	}
}

func TestStart(t *testing.T) {
	tree := testtree.Dir(t, map[string]string{"latest/meta-data/instance-id": "i-1"})
	s, err := New(Options{Cloud: CloudEC2, Dir: tree})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Start("0.0.0.0:0"); err == nil {
		t.Fatal("Start on 0.0.0.0 accepted")
	}
	r, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(r.Addr(), "127.0.0.1:") || r.Port() == 0 {
		t.Errorf("Addr %s Port %d", r.Addr(), r.Port())
	}
	if got := do(t, "GET", r.URL()+"/latest/meta-data/instance-id", nil); got.body != "i-1" {
		t.Errorf("GET = %d %q", got.code, got.body)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := r.Wait(ctx); err != nil {
		t.Errorf("Wait: %v", err)
	}
	if err := r.Close(); err != nil {
		t.Errorf("Close after Wait: %v", err)
	}
}
