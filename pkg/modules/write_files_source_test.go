package modules

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestWriteFilesSourceUpstream: write_files' source.uri against an
// httptest server on 127.0.0.1 answering as the one of
// scripts/goldens/write-files-source.py (/ok echoes Authorization,
// /missing 404, /broken 500) does what upstream's cc_write_files did
// (testdata/write_files_source/upstream.json): the same files, the same
// number of requests per path (three retries), the same warnings; file://
// reads the target and an entry with neither key writes an empty file.
func TestWriteFilesSourceUpstream(t *testing.T) {
	var up struct {
		Files    map[string]string `json:"files"`
		Hits     map[string]int    `json:"hits"`
		Warnings []string          `json:"warnings"`
	}
	b, err := os.ReadFile("testdata/write_files_source/upstream.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &up); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	hits := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.URL.Path]++
		mu.Unlock()
		switch r.URL.Path {
		case "/ok":
			w.Write([]byte("token=" + r.Header.Get("Authorization") + "\n"))
		case "/broken":
			http.Error(w, "down", http.StatusInternalServerError)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	if !strings.HasPrefix(srv.URL, "http://127.0.0.1:") {
		t.Fatalf("server not on loopback: %s", srv.URL)
	}
	cfgText, err := os.ReadFile("testdata/write_files_source/config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg := yamlCfg(t, strings.ReplaceAll(string(cfgText), "@URL@", srv.URL))
	c, _, _ := testContext(t, cfg, map[string]string{"etc/passwd": "root:x:0:0::/root:/bin/sh\n", "etc/group": "root:x:0:\n",
		"srv/payload": "from the target\n"})
	var warns []string
	c.Warn = func(m string) { warns = append(warns, m) }
	if err := NewWriteFiles(WriteFilesOptions{Delay: time.Millisecond}).Run(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	for p, want := range up.Files {
		if got := readFile(t, c, p); got != want {
			t.Errorf("%s = %q, upstream %q", p, got, want)
		}
	}
	if c.Root.Exists("/etc/skipped") {
		t.Error("/etc/skipped written without content")
	}
	if diff := cmp.Diff(up.Hits, hits); diff != "" {
		t.Errorf("requests per path (-upstream +cloudroot):\n%s", diff)
	}
	if len(warns) != len(up.Warnings) {
		t.Fatalf("warnings %q, upstream %q", warns, up.Warnings)
	}
	for i, w := range up.Warnings {
		if w = strings.ReplaceAll(w, "@URL@", srv.URL); !strings.HasPrefix(warns[i], w) {
			t.Errorf("warning %d = %q, upstream %q", i, warns[i], w)
		}
	}
}
