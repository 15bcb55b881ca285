package cli

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func imdsEnv() (*Env, *bytes.Buffer, *bytes.Buffer) {
	var out, errb bytes.Buffer
	return &Env{Root: "/", Stdout: &out, Stderr: &errb, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}, &out, &errb
}

func TestIMDSServeRefuses(t *testing.T) {
	tree := t.TempDir()
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{}, "usage:"},
		{[]string{"bogus"}, "invalid choice"},
		{[]string{"serve", "--dir", tree}, "--cloud and --dir are required"},
		{[]string{"serve", "--cloud", "ec2"}, "--cloud and --dir are required"},
		{[]string{"serve", "--cloud", "ec2", "--dir", tree, "--listen", "0.0.0.0:8169"}, "refusing to listen"},
		{[]string{"serve", "--cloud", "ec2", "--dir", tree, "--listen", ":8169"}, "refusing to listen"},
		{[]string{"serve", "--cloud", "ec2", "--dir", tree, "--listen=localhost:8169"}, "refusing to listen"},
		// The link-local metadata address is refused before anything is
		// bound: the simulator only ever listens on loopback.
		{[]string{"serve", "--cloud", "ec2", "--dir", tree, "--listen", "169.254.169.254:80"}, "refusing to listen"},
		{[]string{"serve", "--cloud", "ec2", "--dir", tree, "--listen", "[::]:80"}, "refusing to listen"},
		{[]string{"serve", "--cloud", "gce", "--dir", tree, "--require-token"}, "--require-token is for --cloud ec2"},
		{[]string{"serve", "--cloud", "ec2", "--dir", tree, "--listen"}, "--listen needs a value"},
		{[]string{"serve", "--cloud", "ec2", "--dir", tree, "--bogus"}, "unrecognized argument --bogus"},
		{[]string{"serve", "--cloud", "ec2", "--dir", tree, "--faults", "errors=1.5"}, "not a fraction"},
		{[]string{"serve", "--cloud", "ec2", "--dir", tree, "--faults", "storms=1"}, "unknown key"},
		{[]string{"serve", "--cloud", "ec2", "--dir", tree, "--per-client=yes"}, "--per-client takes no value"},
	} {
		env, _, errb := imdsEnv()
		if code := Run(context.Background(), env, append([]string{"imds"}, tc.args...)); code != 2 {
			t.Errorf("imds %q: exit %d, want 2; stderr:\n%s", tc.args, code, errb)
		}
		if !strings.Contains(errb.String(), tc.msg) {
			t.Errorf("imds %q: stderr lacks %q:\n%s", tc.args, tc.msg, errb)
		}
	}
	env, _, errb := imdsEnv()
	if code := Run(context.Background(), env, []string{"imds", "serve", "--cloud", "vultr", "--dir", tree, "--listen", "127.0.0.1:0"}); code != 1 || !strings.Contains(errb.String(), "unknown cloud") {
		t.Errorf("unknown cloud: exit %d, stderr:\n%s", code, errb)
	}
	env, out, _ := imdsEnv()
	if code := Run(context.Background(), env, []string{"imds", "--help"}); code != 0 || !strings.Contains(out.String(), "--require-token") {
		t.Errorf("--help: exit %d:\n%s", code, out)
	}
}

func TestIMDSServe(t *testing.T) {
	tree := t.TempDir()
	if err := os.MkdirAll(filepath.Join(tree, "2021-03-23/meta-data"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tree, "2021-03-23/meta-data/instance-id"), []byte("i-cli"), 0o644); err != nil {
		t.Fatal(err)
	}
	addrc := make(chan string, 1)
	imdsServeReady = func(a string) { addrc <- a }
	t.Cleanup(func() { imdsServeReady = nil })

	env, _, errb := imdsEnv()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, env, []string{"imds", "serve", "--cloud=ec2", "--dir", tree, "--listen", "127.0.0.1:0", "--require-token"})
	}()
	var addr string
	select {
	case addr = <-addrc:
	case code := <-done:
		t.Fatalf("imds serve exited %d:\n%s", code, errb)
	case <-time.After(10 * time.Second):
		t.Fatal("imds serve did not start")
	}
	if !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Fatalf("listening on %s", addr)
	}
	get := func(hdr http.Header) (int, string) {
		req, _ := http.NewRequest("GET", "http://"+addr+"/latest/meta-data/instance-id", nil)
		req.Header = hdr
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := get(http.Header{}); code != 401 {
		t.Errorf("GET without token = %d, want 401", code)
	}
	req, _ := http.NewRequest("PUT", "http://"+addr+"/latest/api/token", nil)
	req.Header.Set("X-aws-ec2-metadata-token-ttl-seconds", "21600")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if code, body := get(http.Header{"X-Aws-Ec2-Metadata-Token": {string(tok)}}); code != 200 || body != "i-cli" {
		t.Errorf("GET with token = %d %q", code, body)
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d after cancel", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("imds serve did not stop")
	}
	log := errb.String()
	for _, s := range []string{"serving " + tree + " (ec2) on http://127.0.0.1:", "GET /latest/meta-data/instance-id 401", "PUT /latest/api/token 200", "GET /latest/meta-data/instance-id 200"} {
		if !strings.Contains(log, s) {
			t.Errorf("stderr lacks %q:\n%s", s, log)
		}
	}
}

func TestIMDSServeAzure(t *testing.T) {
	tree := t.TempDir()
	if err := os.MkdirAll(filepath.Join(tree, "metadata"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tree, "metadata/instance"), []byte(`{"compute": {"vmId": "v-cli", "name": "n"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	addrc := make(chan string, 1)
	imdsServeReady = func(a string) { addrc <- a }
	t.Cleanup(func() { imdsServeReady = nil })
	env, _, errb := imdsEnv()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, env, []string{"imds", "serve", "--cloud", "azure", "--dir", tree, "--listen", "127.0.0.1:0"})
	}()
	var addr string
	select {
	case addr = <-addrc:
	case code := <-done:
		t.Fatalf("imds serve exited %d:\n%s", code, errb)
	case <-time.After(10 * time.Second):
		t.Fatal("imds serve did not start")
	}
	send := func(method, path string, hdr http.Header, body string) (int, string) {
		req, _ := http.NewRequest(method, "http://"+addr+path, strings.NewReader(body))
		req.Header = hdr
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := send("GET", "/metadata/instance/compute/vmId?api-version=2021-08-01&format=text", http.Header{"Metadata": {"true"}}, ""); code != 200 || body != "v-cli" {
		t.Errorf("IMDS: %d %q", code, body)
	}
	ws := http.Header{"X-Ms-Version": {"2012-11-30"}}
	if code, body := send("GET", "/machine/?comp=goalstate", ws, ""); code != 200 || !strings.Contains(body, "<InstanceId>v-cli._n</InstanceId>") {
		t.Errorf("goal state: %d %q", code, body)
	}
	report := `<Health><Container><RoleInstanceList><Role><Health><State>Ready</State></Health></Role></RoleInstanceList></Container></Health>`
	if code, _ := send("POST", "/machine?comp=health", ws, report); code != 200 {
		t.Errorf("health: %d", code)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("imds serve did not stop")
	}
	for _, s := range []string{"(azure) on http://127.0.0.1:", "GET /metadata/instance/compute/vmId?api-version=2021-08-01&format=text 200", "wireserver health report: Ready", "POST /machine?comp=health 200"} {
		if !strings.Contains(errb.String(), s) {
			t.Errorf("stderr lacks %q:\n%s", s, errb)
		}
	}
}
