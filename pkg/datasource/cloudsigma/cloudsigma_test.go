package cloudsigma

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/dstest"
)

func csEnv(budget time.Duration) datasource.Env {
	return datasource.Env{DMI: bootenv.DMI{ProductName: "CloudSigma"}, Budget: budget}
}

// replyWith answers the whole-context request with b.
func replyWith(b []byte) func(string) []byte {
	return func(req string) []byte {
		if req == Request("") {
			return b
		}
		return []byte("{}\n")
	}
}

// TestGolden serves each testdata/<case>/reply on a pty.
// upstreamDiffers are the fields of each case's upstream golden where
// cloudroot deliberately differs (docs/datasources.md).
var upstreamDiffers = map[string]dstest.Differs{
	"minimal":  {"found": "cloud-init decodes the reply as ASCII and requires meta.ssh_public_key, so a non-ASCII server name or no key fails it; cloudroot reads UTF-8 and takes no key as none"},
	"odd-name": {"found": "cloud-init reads only the first line from the port, here an empty one before the EOT-prefixed context, and fails; cloudroot skips to the context"},
}

func TestGolden(t *testing.T) {
	for _, name := range dstest.Cases(t, "testdata") {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("testdata", name)
			b, err := os.ReadFile(filepath.Join(dir, "reply"))
			if err != nil {
				t.Fatal(err)
			}
			dev, reqs := servePTY(t, replyWith(b))
			d, err := (&Source{Device: dev}).Get(context.Background(), csEnv(10*time.Second))
			if err != nil {
				dstest.Upstream(t, dir, d, err, "", upstreamDiffers[name])
				t.Fatal(err)
			}
			d.Subplatform = strings.ReplaceAll(d.Subplatform, dev, DefaultDevice)
			dstest.Upstream(t, dir, d, err, "", upstreamDiffers[name])
			dstest.Golden(t, filepath.Join(dir, "want.json"), d, "")
			if got := reqs(); len(got) != 1 || got[0] != "<\n\n>" {
				t.Errorf("requests %q, want one for the whole context", got)
			}
		})
	}
}

// TestConfiguredDevice: serial_device is used when the Source names none.
func TestConfiguredDevice(t *testing.T) {
	dev, _ := servePTY(t, replyWith([]byte(`{"meta": {}, "uuid": "u-1", "name": "n"}`+"\n")))
	env := csEnv(10 * time.Second)
	env.DMI.ProductName = "cloudsigma hypervisor"
	env.Config = map[string]any{"cloudsigma": map[string]any{"serial_device": dev}}
	d, err := (&Source{}).Get(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	if d.InstanceID() != "u-1" || d.Subplatform != "cepko ("+dev+")" || d.LocalHostname() != "n" {
		t.Errorf("got %q %q %q", d.InstanceID(), d.Subplatform, d.LocalHostname())
	}
}

func TestNotFound(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "ttyS1")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, product, dev string
	}{
		{"other product", "Standard PC (Q35 + ICH9, 2009)", file},
		{"no product", "", file},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := csEnv(time.Second)
			env.DMI.ProductName = tc.product
			_, err := (&Source{Device: tc.dev}).Get(context.Background(), env)
			if !errors.Is(err, datasource.ErrNotFound) {
				t.Fatalf("err = %v, want ErrNotFound", err)
			}
		})
	}
}

// TestBroken: a port that answers badly, or not at all, is an error naming
// it (not ErrNotFound) within the budget; dsmode disabled is ErrNotFound.
func TestBroken(t *testing.T) {
	for _, tc := range []struct {
		name     string
		reply    string
		want     string
		notFound bool
	}{
		{name: "malformed JSON", reply: `{"meta": {`, want: "server context is not JSON"},
		{name: "not an object", reply: `"hello"`, want: "expected a JSON object, got a string"},
		{name: "no meta", reply: `{"uuid": "u"}`, want: "meta: expected an object, got nothing"},
		{name: "no uuid", reply: `{"meta": {}}`, want: "no uuid"},
		{name: "bad base64", reply: `{"uuid": "u", "meta": {"base64_fields": "cloudinit-user-data", "cloudinit-user-data": "abc"}}`, want: "not base64"},
		{name: "silent", want: "reading the reply (0 bytes so far): context deadline exceeded"},
		{name: "half a reply", reply: `{"uuid": "u", "me`, want: "reading the reply (17 bytes so far): context deadline exceeded"},
		{name: "disabled", reply: `{"uuid": "u", "meta": {"cloudinit-dsmode": "disabled"}}`, want: "dsmode is disabled", notFound: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := []byte(tc.reply)
			if tc.reply != "" && !strings.HasPrefix(tc.name, "half") {
				r = append(r, 0x04, '\n')
			}
			dev, _ := servePTY(t, replyWith(r))
			_, err := (&Source{Device: dev}).Get(context.Background(), csEnv(300*time.Millisecond))
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), dev) {
				t.Fatalf("err = %v, want containing %q and the device", err, tc.want)
			}
			if errors.Is(err, datasource.ErrNotFound) != tc.notFound {
				t.Errorf("err = %v: ErrNotFound is %v, want %v", err, !tc.notFound, tc.notFound)
			}
		})
	}
	t.Run("not a terminal", func(t *testing.T) {
		dev := filepath.Join(t.TempDir(), "ttyS1")
		if err := os.WriteFile(dev, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := (&Source{Device: dev}).Get(context.Background(), csEnv(time.Second))
		if err == nil || errors.Is(err, datasource.ErrNotFound) || !strings.Contains(err.Error(), dev+": setting raw mode") {
			t.Fatalf("err = %v", err)
		}
	})
}

// TestConform: the cases every serial/backdoor transport shares. The
// answers end with the EOT the server sends, so that they reach the
// parser.
func TestConform(t *testing.T) {
	dstest.ConformTransport(t, dstest.Transport{
		Absent: func(t *testing.T) (datasource.Source, datasource.Env) {
			return &Source{Device: filepath.Join(t.TempDir(), "ttyS1")}, csEnv(time.Second)
		},
		Answering: func(t *testing.T, reply []byte) (datasource.Source, datasource.Env, string) {
			dev, _ := servePTY(t, replyWith(append(append([]byte{}, reply...), 0x04, '\n')))
			return &Source{Device: dev}, csEnv(2 * time.Second), dev
		},
	})
}

// pipe runs serve on one end of a net.Pipe (inside a synctest bubble its
// deadlines run on the fake clock) and returns the other.
func pipe(t *testing.T, answer func(string) []byte) (net.Conn, func()) {
	a, b := net.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		serve(b, answer, make(chan string, 1))
	}()
	return a, func() {
		a.Close()
		b.Close()
		<-done
	}
}

func TestQuery(t *testing.T) {
	for _, tc := range []struct {
		name    string
		answer  func(string) []byte
		budget  time.Duration
		limit   int
		want    string
		wantErr string
		wantIs  error
	}{
		{name: "eot", answer: replyWith([]byte("{\"a\": 1}\x04\n")), want: `{"a": 1}`},
		{name: "newline", answer: replyWith([]byte("{\"a\": 1}\n")), want: `{"a": 1}`},
		{name: "leading newlines", answer: replyWith([]byte("\n\x04\n{}\x04")), want: `{}`},
		{name: "meta key", answer: func(req string) []byte {
			if req == "<\n/meta/\n>" {
				return []byte("{\"m\": 1}\n")
			}
			return nil
		}, want: `{"m": 1}`},
		{name: "silent", answer: replyWith(nil), budget: 5 * time.Minute, wantErr: "reading the reply (0 bytes so far): no answer in time"},
		{name: "silent until the budget", answer: replyWith(nil), budget: 30 * time.Second, wantErr: "(0 bytes so far)", wantIs: context.DeadlineExceeded},
		{name: "half", answer: replyWith([]byte(`{"a"`)), budget: 5 * time.Minute, wantErr: "reading the reply (4 bytes so far): no answer in time"},
		{name: "too long", answer: replyWith(bytes.Repeat([]byte("x"), 100)), limit: 50, wantErr: "reply longer than 50 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				conn, stop := pipe(t, tc.answer)
				defer stop()
				budget := tc.budget
				if budget == 0 {
					budget = time.Minute
				}
				ctx, cancel := context.WithTimeout(context.Background(), budget)
				defer cancel()
				key := ""
				if tc.name == "meta key" {
					key = "/meta/"
				}
				limit := tc.limit
				if limit == 0 {
					limit = MaxReply
				}
				got, err := query(ctx, conn, key, limit)
				if tc.wantErr == "" {
					if err != nil || string(got) != tc.want {
						t.Fatalf("got %q %v, want %q", got, err, tc.want)
					}
					return
				}
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want containing %q", err, tc.wantErr)
				}
				if tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
					t.Errorf("err = %v, want wrapping %v", err, tc.wantIs)
				}
			})
		})
	}
	// A port that never takes the request: the write is bounded too.
	synctest.Test(t, func(t *testing.T) {
		a, b := net.Pipe()
		defer a.Close()
		defer b.Close()
		_, err := Query(context.Background(), a, "")
		if err == nil || !strings.Contains(err.Error(), "sending the request: no answer in time") {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestDoc(t *testing.T) {
	d := (&Source{}).Doc()
	if d.Network || d.Reads == "" || d.NetworkConfig == "" || d.Tests == "" {
		t.Errorf("incomplete doc: %+v", d)
	}
}
