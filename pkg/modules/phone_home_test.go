package modules

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cloudroot/cloudroot/pkg/modules/internal/modtest"
)

// phoneServer records POSTs; the first failFirst answer 500.
type phoneServer struct {
	mu        sync.Mutex
	failFirst int
	status    int
	posts     []phonePost
}

type phonePost struct {
	Path, ContentType, UserAgent, Body string
}

func (s *phoneServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.posts = append(s.posts, phonePost{r.Method + " " + r.URL.RequestURI(), r.Header.Get("Content-Type"), r.Header.Get("User-Agent"), string(b)})
	if len(s.posts) <= s.failFirst {
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	if s.status != 0 {
		w.WriteHeader(s.status)
	}
}

func phoneHomeRun(t *testing.T, cfg string, files map[string]string, srv *phoneServer) (*Context, []string) {
	t.Helper()
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	if !strings.HasPrefix(ts.URL, "http://127.0.0.1:") {
		t.Fatalf("test server at %s, not loopback", ts.URL)
	}
	c, _, _ := testContext(t, yamlCfg(t, strings.ReplaceAll(cfg, "SERVER", ts.URL)), files)
	var warns []string
	c.Warn = func(m string) { warns = append(warns, m) }
	m := NewPhoneHome(PhoneHomeOptions{Delay: time.Millisecond})
	if err := m.Run(context.Background(), c); err != nil {
		t.Fatalf("phone_home: %v", err)
	}
	return c, warns
}

var hostKeyFiles = map[string]string{
	"etc/os-release":                   "ID=debian\nVERSION_ID=12\n",
	"etc/ssh/ssh_host_rsa_key.pub":     "ssh-rsa AAAArsa root@host\n",
	"etc/ssh/ssh_host_ecdsa_key.pub":   "ecdsa-sha2-nistp256 AAAAecdsa root@host\n",
	"etc/ssh/ssh_host_ed25519_key.pub": "ssh-ed25519 AAAAed/25519+x= root@host\n",
}

func TestPhoneHomeAll(t *testing.T) {
	srv := &phoneServer{}
	_, warns := phoneHomeRun(t, "phone_home:\n  url: SERVER/$INSTANCE_ID/\n  post: all\n  tries: 1\n", hostKeyFiles, srv)
	if len(srv.posts) != 1 {
		t.Fatalf("posts %v", srv.posts)
	}
	got := srv.posts[0]
	want := phonePost{
		Path:        "POST /iid-test/",
		ContentType: "application/x-www-form-urlencoded",
		UserAgent:   "Cloud-Init/26.2-cloudroot",
		// Python's urlencode of the dict, in POST_LIST_ALL's order.
		Body: "pub_key_rsa=ssh-rsa+AAAArsa+root%40host%0A" +
			"&pub_key_ecdsa=ecdsa-sha2-nistp256+AAAAecdsa+root%40host%0A" +
			"&pub_key_ed25519=ssh-ed25519+AAAAed%2F25519%2Bx%3D+root%40host%0A" +
			"&instance_id=iid-test&hostname=meta-host&fqdn=meta-host",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("-want +got:\n%s", d)
	}
	if len(warns) != 0 {
		t.Errorf("warnings %q", warns)
	}
	v, err := url.ParseQuery(got.Body)
	if err != nil || v.Get("pub_key_ed25519") != hostKeyFiles["etc/ssh/ssh_host_ed25519_key.pub"] {
		t.Errorf("body does not decode back: %v %v", v, err)
	}
}

// TestPhoneHomeListRetries is the OpenStack rotation case's config: a
// list of keys, a query in the URL, retries until the server answers.
func TestPhoneHomeListRetries(t *testing.T) {
	srv := &phoneServer{failFirst: 3}
	_, warns := phoneHomeRun(t, "phone_home:\n  url: SERVER/phone_home?unset=admin_pass&id=${INSTANCE_ID}\n  post: [instance_id, fqdn, instance_id, nope]\n  tries: 5\n",
		map[string]string{"etc/os-release": "ID=debian\n"}, srv)
	if len(srv.posts) != 4 {
		t.Fatalf("%d posts, want 4 (3 failures, then success)", len(srv.posts))
	}
	for _, p := range srv.posts {
		if p.Path != "POST /phone_home?unset=admin_pass&id=iid-test" || p.Body != "instance_id=iid-test&fqdn=meta-host&nope=N%2FA" {
			t.Errorf("post %+v", p)
		}
	}
	if !cmp.Equal(warns, []string{"Requested key nope from 'post' configuration list not available"}) {
		t.Errorf("warnings %q", warns)
	}
}

// TestPhoneHomeGivesUp: `tries` attempts, then a warning; the module
// itself succeeds, as cloud-init's logs and goes on.
func TestPhoneHomeGivesUp(t *testing.T) {
	srv := &phoneServer{failFirst: 100}
	_, warns := phoneHomeRun(t, "phone_home:\n  url: SERVER/\n  post: [hostname]\n  tries: 3\n", nil, srv)
	if len(srv.posts) != 3 {
		t.Errorf("%d posts, want 3", len(srv.posts))
	}
	if len(warns) != 1 || !strings.HasPrefix(warns[0], "Failed to post phone home data to http://127.0.0.1:") || !strings.Contains(warns[0], " in 3 tries") {
		t.Errorf("warnings %q", warns)
	}
}

func TestPhoneHomeDecode(t *testing.T) {
	for _, tc := range []struct {
		cfg   string
		ok    bool
		tries int
		post  []string
		notes int
	}{
		{"phone_home: {url: 'http://x/', tries: 2}", true, 2, PhoneHomePostAll, 0},
		{"phone_home: {url: 'http://x/', tries: 'x'}", true, 10, PhoneHomePostAll, 1},
		{"phone_home: {url: 'http://x/'}", true, 10, PhoneHomePostAll, 1},
		{"phone_home: {url: 'http://x/', tries: '4', post: [fqdn]}", true, 4, []string{"fqdn"}, 0},
		{"phone_home: {post: all}", false, 0, nil, 1},
		{"other: 1", false, 0, nil, 0},
	} {
		p, ok, err := decodePhoneHome(modtest.Typed[phoneHomeKeys](yamlCfg(t, tc.cfg)))
		if err != nil || ok != tc.ok || p.Tries != tc.tries || !cmp.Equal(p.Post, tc.post) || len(p.Notes) != tc.notes {
			t.Errorf("%s: %+v ok=%v err=%v", tc.cfg, p, ok, err)
		}
	}
}

// TestPhoneHomeDocsExamples: cloud-init's documented examples decode.
func TestPhoneHomeDocsExamples(t *testing.T) {
	for _, f := range []string{"testdata/docs/phone_home/example1.yaml", "testdata/docs/phone_home/example2.yaml"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		p, ok, err := decodePhoneHome(modtest.Typed[phoneHomeKeys](yamlCfg(t, string(b))))
		if err != nil || !ok || p.URL == "" || len(p.Post) == 0 {
			t.Errorf("%s: %+v ok=%v err=%v", f, p, ok, err)
		}
	}
}

// TestPhoneHomeUpstream sends the cases of testdata/phone_home/upstream.json
// (recorded from upstream cloud-init by scripts/goldens/phone-home.py) and
// requires the same method, path, Content-Type and body.
func TestPhoneHomeUpstream(t *testing.T) {
	b, err := os.ReadFile("testdata/phone_home/upstream.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases map[string]struct {
		Config   map[string]any `json:"config"`
		Requests []struct {
			Method      string `json:"method"`
			Path        string `json:"path"`
			ContentType string `json:"content_type"`
			Body        string `json:"body"`
		} `json:"requests"`
	}
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	files := modtest.HostKeyRoot()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cfg, _ := json.Marshal(map[string]any{"phone_home": tc.Config})
			srv := &phoneServer{}
			phoneHomeRun(t, strings.ReplaceAll(string(cfg), "http://HOST", "SERVER"), files, srv)
			var want, got []phonePost
			for _, r := range tc.Requests {
				want = append(want, phonePost{Path: r.Method + " " + r.Path, ContentType: r.ContentType, Body: r.Body})
			}
			for _, p := range srv.posts {
				p.UserAgent = ""
				got = append(got, p)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("-upstream +cloudroot:\n%s", d)
			}
		})
	}
}
