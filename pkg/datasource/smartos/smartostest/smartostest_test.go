package smartostest_test

import (
	"bufio"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cloudroot/cloudroot/pkg/datasource/smartos"
	"github.com/cloudroot/cloudroot/pkg/datasource/smartos/smartostest"
)

// sockPath is a socket path short enough for sockaddr_un.
func sockPath(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "mdata")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return filepath.Join(dir, "md.sock")
}

// TestListenClient: package smartos's client reads the server's values
// through Listen, on two connections one after the other (as a guest
// opening the port in the initramfs and again later).
func TestListenClient(t *testing.T) {
	s := smartostest.New(map[string]string{"sdc:uuid": "u-1", "hostname": "h", "user-script": "echo hi\n"})
	l, err := s.Listen(sockPath(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for i := range 2 {
		conn, err := net.Dial("unix", l.Path())
		if err != nil {
			t.Fatal(err)
		}
		c := smartos.NewClient(conn, l.Path())
		if err := c.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if err := c.Negotiate(ctx); err != nil {
			t.Fatal(err)
		}
		for k, want := range map[string]string{"sdc:uuid": "u-1", "user-script": "echo hi\n"} {
			v, ok, err := c.Get(ctx, k)
			if err != nil || !ok || string(v) != want {
				t.Errorf("GET %s = %q %v %v, want %q", k, v, ok, err, want)
			}
		}
		if _, ok, err := c.Get(ctx, "absent"); err != nil || ok {
			t.Errorf("GET absent = %v %v, want NOTFOUND", ok, err)
		}
		keys, err := c.Keys(ctx)
		if err != nil || strings.Join(keys, ",") != "hostname,user-script" {
			t.Errorf("KEYS = %q %v, want the keys without sdc:", keys, err)
		}
		if i == 1 {
			if err := c.Put(ctx, "k", []byte("v v")); err != nil {
				t.Error(err)
			}
			s.Set("sdc:uuid", "u-2")
			if err := c.Delete(ctx, "hostname"); err != nil {
				t.Error(err)
			}
			if err := c.Delete(ctx, "hostname"); err == nil {
				t.Error("second DELETE hostname succeeded")
			}
		}
		conn.Close()
	}
	if err := l.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if _, err := os.Stat(l.Path()); !os.IsNotExist(err) {
		t.Errorf("the socket is still there after Close: %v", err)
	}
	read := []string{"FLUSH", "NEGOTIATE", "GET sdc:uuid", "GET user-script", "GET absent", "KEYS"}
	want := append(append(read, read...), "PUT aw== diB2", "DELETE hostname", "DELETE hostname")
	got := s.Requests()
	// Map iteration order: the two GETs in either order.
	for i := 0; i+1 < len(got); i++ {
		if got[i] == "GET user-script" && got[i+1] == "GET sdc:uuid" {
			got[i], got[i+1] = got[i+1], got[i]
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"sdc:uuid": "u-2", "user-script": "echo hi\n", "k": "v v"}, s.Values()); diff != "" {
		t.Errorf("values after PUT and DELETE (-want +got):\n%s", diff)
	}
}

// TestBadFrames: frames whose length, checksum or argument is wrong, and
// lines that are not frames, are answered "invalid command".
func TestBadFrames(t *testing.T) {
	s := smartostest.New(map[string]string{"k": "v"})
	good := smartostest.Frame("0000002a GET aw==")
	for _, tc := range []struct{ name, line, want string }{
		{"good", good, smartostest.Reply("0000002a", "SUCCESS", []byte("v"))},
		{"length", strings.Replace(good, "V2 17", "V2 16", 1), "invalid command"},
		{"checksum", good[:len("V2 17 ")] + "00000000" + good[len("V2 17 ")+8:], "invalid command"},
		{"argument not base64", smartostest.Frame("0000002a GET !!"), "invalid command"},
		{"no operation", smartostest.Frame("0000002a"), "invalid command"},
		{"short", "V2 3", "invalid command"},
		{"unknown op", smartostest.Frame("0000002a FROB"), smartostest.Reply("0000002a", "FAILURE", nil)},
		{"not a frame", "hello", "invalid command"},
		{"flush", "", "invalid command"},
		{"negotiate", "NEGOTIATE V2", "V2_OK"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := s.Answer(tc.line)
			if len(got) != 1 || got[0] != tc.want {
				t.Errorf("Answer(%q) = %q, want %q", tc.line, got, tc.want)
			}
		})
	}
}

// TestHooks: Hook and OnLine replace answers; lines without a handler
// get the normal ones.
func TestHooks(t *testing.T) {
	s := smartostest.New(nil)
	s.Hook = func(op, arg, id string) ([]string, bool) {
		return []string{"garbage", smartostest.Reply(id, "SUCCESS", []byte(op+" "+arg))}, op == "GET"
	}
	s.OnLine = func(line string) ([]string, bool) { return nil, line == "" }
	a, b := net.Pipe()
	defer a.Close()
	go s.Serve(b)
	r := bufio.NewReader(a)
	a.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := a.Write([]byte("\nNEGOTIATE V2\n")); err != nil {
		t.Fatal(err)
	}
	// The flush is silent: the first answer is NEGOTIATE's.
	if l, err := r.ReadString('\n'); err != nil || l != "V2_OK\n" {
		t.Fatalf("answer %q %v, want V2_OK", l, err)
	}
	if _, err := a.Write([]byte(smartostest.Frame("00000001 GET eA==") + "\n")); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"garbage\n", smartostest.Reply("00000001", "SUCCESS", []byte("GET x")) + "\n"} {
		if l, err := r.ReadString('\n'); err != nil || l != want {
			t.Fatalf("answer %q %v, want %q", l, err, want)
		}
	}
	if _, err := a.Write([]byte(smartostest.Frame("00000002 KEYS") + "\n")); err != nil {
		t.Fatal(err)
	}
	if l, err := r.ReadString('\n'); err != nil || l != smartostest.Reply("00000002", "SUCCESS", nil)+"\n" {
		t.Fatalf("KEYS answer %q %v", l, err)
	}
	if diff := cmp.Diff([]string{"NEGOTIATE", "GET x", "KEYS"}, s.Requests()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}
