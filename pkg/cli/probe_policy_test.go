package cli

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cloudroot/cloudroot/pkg/imdsserve"
)

// TestProbePolicy: probe runs under the boot's timing policy. A service
// slower than Ec2's own per-request default (2 s) but within the policy's
// (10 s) is read; a hanging service ends at the deadline the command
// line's cloudroot.ds-deadline= or --timeout gives.
func TestProbePolicy(t *testing.T) {
	tree := filepath.Join("..", "datasource", "ec2", "testdata", "aws-imdsv2", "tree")
	srv, err := imdsserve.New(imdsserve.Options{Cloud: imdsserve.CloudEC2, Dir: tree, RequireToken: true})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	t.Run("slow read", func(t *testing.T) {
		hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/meta-data/instance-id") {
				select {
				case <-r.Context().Done():
					return
				case <-time.After(2500 * time.Millisecond):
				}
			}
			srv.ServeHTTP(w, r)
		}))
		defer hs.Close()
		env, out, errb := probeEnvForTest(t)
		if code := Run(context.Background(), env, []string{"probe", "--datasource", "Ec2", "--metadata-url", hs.URL}); code != 0 {
			t.Fatalf("exit %d\n%s", code, errb)
		}
		if got := field(decodeProbe(t, out), "v1", "instance_id"); got != "i-0c1d2e3f4a5b6c7d8" {
			t.Errorf("v1.instance_id = %v", got)
		}
	})
	for _, tc := range []struct {
		name, cmdline string
		args          []string
		want          string
	}{
		{"hang: cmdline deadline", "console=ttyS0 cloudroot.ds-deadline=0.5", nil, "(500ms)"},
		{"hang: --timeout", "cloudroot.ds-deadline=600", []string{"--timeout", "500ms"}, "(500ms)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPut {
					srv.ServeHTTP(w, r) // the service answers, then hangs
					return
				}
				select {
				case <-r.Context().Done():
				case <-time.After(time.Minute):
				}
			}))
			defer hs.Close()
			env, out, errb := probeEnvForTest(t)
			if err := os.MkdirAll(filepath.Join(env.Root, "proc"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(env.Root, "proc", "cmdline"), []byte(tc.cmdline+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			done := make(chan int, 1)
			go func() {
				done <- Run(context.Background(), env, append([]string{"probe", "--datasource", "Ec2", "--metadata-url", hs.URL}, tc.args...))
			}()
			select {
			case code := <-done:
				if code != 1 || out.Len() != 0 {
					t.Fatalf("exit %d, stdout %q", code, out)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("probe did not end with the deadline")
			}
			if s := errb.String(); !strings.Contains(s, "datasource search deadline passed "+tc.want) {
				t.Errorf("stderr %q does not name the deadline %s", s, tc.want)
			}
		})
	}
}
