package imdsserve

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseFaults(t *testing.T) {
	f, err := ParseFaults("errors=0.1, spikes=0.05,spike=300ms,seed=7")
	if err != nil {
		t.Fatal(err)
	}
	want := Faults{ErrorRate: 0.1, SpikeRate: 0.05, Spike: 300 * time.Millisecond, Seed: 7}
	if f != want {
		t.Errorf("got %+v, want %+v", f, want)
	}
	if again, err := ParseFaults(f.String()); err != nil || again != f {
		t.Errorf("String %q parses as %+v, %v", f, again, err)
	}
	for _, bad := range []string{"errors=2", "errors=-0.1", "spikes=x", "spike=-1s", "spike", "noise=1"} {
		if _, err := ParseFaults(bad); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("%q: error %v does not quote the spec", bad, err)
		}
	}
	if (Faults{}).Enabled() || (Faults{SpikeRate: 1}).Enabled() || !(Faults{ErrorRate: 0.01}).Enabled() {
		t.Error("Enabled wrong")
	}
}

// The same seed fails the same requests (in arrival order), and the rate
// is about what was asked for.
func TestFaultsSeeded(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	run := func(seed uint64) (string, FaultStats) {
		h := WithFaults(ok, Faults{ErrorRate: 0.1, Seed: seed})
		var pattern strings.Builder
		for range 2000 {
			w := &recorder{header: http.Header{}}
			h.ServeHTTP(w, (&http.Request{Method: "GET"}).WithContext(context.Background()))
			if w.code >= 500 {
				pattern.WriteByte('x')
			} else {
				pattern.WriteByte('.')
			}
		}
		return pattern.String(), h.Stats()
	}
	a, sa := run(1)
	b, _ := run(1)
	c, _ := run(2)
	if a != b {
		t.Error("same seed, different failures")
	}
	if a == c {
		t.Error("different seeds, same failures")
	}
	if sa.Requests != 2000 || sa.Errors < 140 || sa.Errors > 260 {
		t.Errorf("stats %+v: want ~200 errors of 2000", sa)
	}
	if n := strings.Count(a, "x"); int64(n) != sa.Errors {
		t.Errorf("%d failures seen, %d counted", n, sa.Errors)
	}
}

type recorder struct {
	header http.Header
	code   int
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) Write(b []byte) (int, error) {
	if r.code == 0 {
		r.code = 200
	}
	return len(b), nil
}
func (r *recorder) WriteHeader(c int) { r.code = c }

// PerClient: a client bound to 127.0.0.2 reads its own tree, one bound to
// 127.0.0.3 another, one without a tree gets 404; every request records
// its client. Faults apply to all and are recorded as served.
func TestPerClient(t *testing.T) {
	dir := t.TempDir()
	for ip, iid := range map[string]string{"127.0.0.2": "i-two", "127.0.0.3": "i-three"} {
		p := filepath.Join(dir, ip, "2021-03-23", "meta-data")
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, "instance-id"), []byte(iid), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := New(Options{Cloud: CloudEC2, Dir: dir, PerClient: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	run, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	get := func(from string) (int, string) {
		t.Helper()
		tr := &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}).DialContext}
		defer tr.CloseIdleConnections()
		resp, err := (&http.Client{Transport: tr}).Get(run.URL() + "/latest/meta-data/instance-id")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for from, want := range map[string]string{"127.0.0.2": "i-two", "127.0.0.3": "i-three"} {
		if code, body := get(from); code != 200 || body != want {
			t.Errorf("from %s: %d %q, want %q", from, code, body, want)
		}
	}
	if code, _ := get("127.0.0.4"); code != 404 {
		t.Errorf("client without a tree: %d, want 404", code)
	}
	var clients []string
	for _, r := range s.Requests() {
		clients = append(clients, r.Client)
	}
	if strings.Join(clients, " ") != "127.0.0.2 127.0.0.3 127.0.0.4" && strings.Join(clients, " ") != "127.0.0.3 127.0.0.2 127.0.0.4" {
		t.Errorf("clients recorded: %q", clients)
	}
}

func TestServerFaults(t *testing.T) {
	s, hs, _ := serve(t, Options{Cloud: CloudEC2, Dir: t.TempDir(), Faults: Faults{ErrorRate: 1}})
	resp, err := http.Get(hs.URL + "/latest/meta-data/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode < 500 {
		t.Errorf("status %d with every request failing", resp.StatusCode)
	}
	if st := s.FaultStats(); st.Errors != 1 || st.Requests != 1 {
		t.Errorf("stats %+v", st)
	}
	if r := s.Requests(); len(r) != 1 || r[0].Status != resp.StatusCode {
		t.Errorf("recorded %+v", r)
	}
	if _, err := New(Options{Cloud: CloudEC2, Dir: t.TempDir(), Faults: Faults{ErrorRate: 2}}); err == nil {
		t.Error("a rate of 2 accepted")
	}
}
