package smartos

import (
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// pipe connects a client to f over net.Pipe (inside a synctest bubble its
// deadlines run on the fake clock). The returned stop closes both ends and
// waits for the fake.
func pipe(t *testing.T, f *fake) (*Client, func()) {
	t.Helper()
	a, b := net.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.serve(b)
	}()
	c := NewClient(a, "pipe")
	c.NewID = func() uint32 { return 0xabcdef12 }
	return c, func() {
		a.Close()
		b.Close()
		<-done
	}
}

func TestRequests(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake(map[string]string{"a": "1", "b": "two words\n", "sdc:x": "y"})
		c, stop := pipe(t, f)
		defer stop()
		ctx := context.Background()
		if err := c.Negotiate(ctx); err != nil {
			t.Fatal(err)
		}
		v, ok, err := c.Get(ctx, "b")
		if err != nil || !ok || string(v) != "two words\n" {
			t.Fatalf("GET b = %q %v %v", v, ok, err)
		}
		v, ok, err = c.Get(ctx, "missing")
		if err != nil || ok || v != nil {
			t.Fatalf("GET missing = %q %v %v, want NOTFOUND", v, ok, err)
		}
		keys, err := c.Keys(ctx)
		if err != nil || strings.Join(keys, ",") != "a,b" {
			t.Fatalf("KEYS = %q %v", keys, err)
		}
		if err := c.Put(ctx, "c", []byte("new value")); err != nil {
			t.Fatal(err)
		}
		if err := c.Delete(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		if err := c.Delete(ctx, "a"); err == nil || !strings.Contains(err.Error(), "DELETE a: server answered NOTFOUND") {
			t.Fatalf("second DELETE: %v", err)
		}
		if f.values["c"] != "new value" || f.values["a"] != "" {
			t.Errorf("values after PUT/DELETE: %q", f.values)
		}
		want := []string{"NEGOTIATE", "GET b", "GET missing", "KEYS", "PUT Yw== bmV3IHZhbHVl", "DELETE a", "DELETE a"}
		if diff := cmp.Diff(want, f.requests()); diff != "" {
			t.Errorf("requests (-want +got):\n%s", diff)
		}
	})
}

// scripted connects a client to a server that answers each line it reads
// with respond(request id) written as is (newlines included by respond).
func scripted(t *testing.T, respond func(id string) string) (*Client, func()) {
	t.Helper()
	a, b := net.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 0, 512)
		one := make([]byte, 1)
		for {
			if _, err := b.Read(one); err != nil {
				return
			}
			if one[0] != '\n' {
				buf = append(buf, one[0])
				continue
			}
			id := ""
			if f := strings.Fields(string(buf)); len(f) > 3 {
				id = f[3]
			}
			buf = buf[:0]
			if _, err := io.WriteString(b, respond(id)); err != nil {
				return
			}
		}
	}()
	c := NewClient(a, "pipe")
	c.NewID = func() uint32 { return 0xabcdef12 }
	return c, func() {
		a.Close()
		b.Close()
		<-done
	}
}

// TestReplies: how the client takes what the server answers a GET with.
func TestReplies(t *testing.T) {
	ok := func(id string) string { return reply(id, "SUCCESS", []byte("value")) + "\n" }
	for _, tc := range []struct {
		name      string
		respond   func(id string) string
		timeout   time.Duration
		wantValue string
		wantErr   string
		wantIs    error
	}{
		{name: "success", respond: ok, wantValue: "value"},
		{name: "crlf", respond: func(id string) string { return reply(id, "SUCCESS", []byte("value")) + "\r\n" }, wantValue: "value"},
		{name: "garbage lines skipped", respond: func(id string) string {
			return "\nsome console noise\ninvalid command\n" + ok(id)
		}, wantValue: "value"},
		{name: "endless garbage", respond: func(string) string { return strings.Repeat("noise\n", 40) },
			wantErr: `not a V2 frame: "noise"`, wantIs: ErrNotFrame},
		{name: "bad checksum", respond: func(id string) string { return "V2 25 b5a9ff01 " + id + " SUCCESS dmFsdWU=\n" },
			wantErr: `checksum "b5a9ff01", body's is b5a9ff00`, wantIs: ErrProtocol},
		{name: "uppercase checksum", respond: func(id string) string { return "V2 25 B5A9FF00 " + id + " SUCCESS dmFsdWU=\n" },
			wantErr: "checksum", wantIs: ErrProtocol},
		{name: "bad length", respond: func(id string) string { return "V2 24 b5a9ff00 " + id + " SUCCESS dmFsdWU=\n" },
			wantErr: "frame length 24, body has 25 bytes", wantIs: ErrProtocol},
		{name: "wrong request id", respond: func(string) string { return reply("deadbeef", "SUCCESS", []byte("value")) + "\n" },
			wantErr: "answer to request deadbeef, expected abcdef12", wantIs: ErrProtocol},
		{name: "bad payload", respond: func(id string) string {
			body := id + " SUCCESS !!!!"
			return "V2 " + strconv.Itoa(len(body)) + " " + Checksum(body) + " " + body + "\n"
		}, wantErr: "payload is not base64", wantIs: ErrProtocol},
		{name: "failure", respond: func(id string) string { return reply(id, "FAILURE", nil) + "\n" }, wantErr: "server answered FAILURE"},
		{name: "silence until the budget ends", respond: func(string) string { return "" },
			wantErr: "waiting for an answer (0 bytes so far)", wantIs: context.DeadlineExceeded},
		{name: "silence past the read timeout", timeout: 2 * time.Second, respond: func(string) string { return "" },
			wantErr: "no answer in time (0 bytes so far)"},
		{name: "half a line", timeout: 2 * time.Second, respond: func(id string) string { return ok(id)[:10] },
			wantErr: "no answer in time (10 bytes so far)"},
		{name: "line too long", respond: func(string) string { return "V2 " + strings.Repeat("9", 5000) },
			wantErr: "answer longer than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c, stop := scripted(t, tc.respond)
				defer stop()
				c.Timeout = tc.timeout
				c.maxLine = 4096
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				v, found, err := c.Get(ctx, "key")
				if tc.wantErr == "" {
					if err != nil || !found || string(v) != tc.wantValue {
						t.Fatalf("got %q %v %v, want %q", v, found, err, tc.wantValue)
					}
					return
				}
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want containing %q", err, tc.wantErr)
				}
				if tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
					t.Errorf("err = %v, want wrapping %v", err, tc.wantIs)
				}
				if !strings.Contains(err.Error(), "pipe: GET key") {
					t.Errorf("err = %v, want naming the connection and key", err)
				}
			})
		})
	}
}

// TestFlush: pending input is dropped, "FAILURE" and silence retried,
// "invalid command" ends the flush; a server that never says it is an
// error when the context ends.
func TestFlush(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake(map[string]string{"k": "v"})
		flushes := 0
		f.onLine = func(l string) ([]string, bool) {
			if l != "" {
				return nil, false
			}
			flushes++
			switch flushes {
			case 1:
				return []string{"FAILURE"}, true
			case 2:
				return nil, true // silence: retried after FlushTimeout
			case 3:
				return []string{"something else"}, true
			}
			return []string{"invalid command", "invalid command"}, true
		}
		c, stop := pipe(t, f)
		defer stop()
		c.Timeout = time.Minute
		ctx := context.Background()
		start := time.Now()
		if err := c.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if got := time.Since(start); got < FlushTimeout {
			t.Errorf("flush took %s on the fake clock, want at least one FlushTimeout for the silent try", got)
		}
		// The second "invalid command" is stale: negotiation skips it.
		if err := c.Negotiate(ctx); err != nil {
			t.Fatal(err)
		}
		if v, ok, err := c.Get(ctx, "k"); err != nil || !ok || string(v) != "v" {
			t.Fatalf("GET after flush: %q %v %v", v, ok, err)
		}
		if flushes != 4 {
			t.Errorf("%d newlines sent, want 4", flushes)
		}
	})
	t.Run("pending input", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			a, b := net.Pipe()
			defer a.Close()
			defer b.Close()
			c := NewClient(a, "pipe")
			go func() {
				io.WriteString(b, "V2 stale frame\npartial")
				buf := make([]byte, 1)
				for {
					if _, err := b.Read(buf); err != nil {
						return
					}
					if buf[0] == '\n' {
						io.WriteString(b, "invalid command\n")
					}
				}
			}()
			if err := c.Flush(context.Background()); err != nil {
				t.Fatal(err)
			}
		})
	})
	t.Run("never answered", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			c, stop := scripted(t, func(string) string { return "" })
			defer stop()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			err := c.Flush(ctx)
			if err == nil || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "pipe: flushing") {
				t.Fatalf("err = %v, want the budget's end", err)
			}
		})
	})
}

func TestNegotiate(t *testing.T) {
	for _, tc := range []struct {
		name, answer, wantErr string
	}{
		{"ok", "V2_OK\n", ""},
		{"stale answers skipped", "invalid command\nFAILURE\nV2_OK\n", ""},
		{"garbage", "garbage\nV2_OK\n", `answered "garbage"`},
		{"closed", "V2_O", "connection closed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a, b := net.Pipe()
				defer a.Close()
				go func() {
					defer b.Close()
					line := make([]byte, len("NEGOTIATE V2\n"))
					if _, err := io.ReadFull(b, line); err != nil || string(line) != "NEGOTIATE V2\n" {
						return
					}
					io.WriteString(b, tc.answer)
				}()
				err := NewClient(a, "pipe").Negotiate(context.Background())
				if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
			})
		})
	}
}

// TestWriteBounded: a server that never reads cannot hold a request past
// the context.
func TestWriteBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := net.Pipe()
		defer a.Close()
		defer b.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, _, err := NewClient(a, "pipe").Get(ctx, "key")
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want the context's end", err)
		}
	})
}
