package serial

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cloudroot/cloudroot/pkg/datasource/internal/serial/serialtest"
)

// TestOpenRaw: bytes pass unchanged both ways (no CR/NL translation, no
// line buffering, no echo) and reads honour deadlines.
func TestOpenRaw(t *testing.T) {
	fromPort := make(chan []byte, 1)
	dev := serialtest.ServePTY(t, func(m io.ReadWriter) {
		b := make([]byte, 3)
		if _, err := io.ReadFull(m, b); err != nil {
			return
		}
		fromPort <- b
		if _, err := m.Write([]byte("a\rb")); err != nil {
			return
		}
		io.Copy(io.Discard, m)
	})
	f, err := OpenLocked(context.Background(), dev)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := f.Write([]byte("x\ny")); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 3)
	if _, err := io.ReadFull(f, got); err != nil || string(got) != "a\rb" {
		t.Fatalf("read %q, %v; want %q", got, err, "a\rb")
	}
	if b := <-fromPort; string(b) != "x\ny" {
		t.Errorf("the port got %q, want %q", b, "x\ny")
	}
	f.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if _, err := f.Read(got); !os.IsTimeout(err) {
		t.Errorf("read past the deadline: %v, want a timeout", err)
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	notTTY := dir + "/ttyS1"
	if err := os.WriteFile(notTTY, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(notTTY); err == nil || !strings.Contains(err.Error(), notTTY+": setting raw mode") {
		t.Errorf("a file that is no terminal: %v", err)
	}
	if _, err := Open(dir + "/absent"); !os.IsNotExist(err) {
		t.Errorf("an absent port: %v, want not-exist", err)
	}
}

// TestOpenLockedWaits: a lock held elsewhere is waited for until the
// context ends, and then reported.
func TestOpenLockedWaits(t *testing.T) {
	dev := serialtest.ServePTY(t, func(m io.ReadWriter) { io.Copy(io.Discard, m) })
	h, err := Open(dev)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	// An open file description lock conflicts with OpenLocked's record
	// lock even within one process.
	if err := unix.FcntlFlock(h.Fd(), unix.F_OFD_SETLK, &unix.Flock_t{Type: unix.F_WRLCK}); err != nil {
		t.Skipf("no OFD locks: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*lockRetry)
	defer cancel()
	if f, err := OpenLocked(ctx, dev); err == nil {
		f.Close()
		t.Fatal("locked twice")
	} else if !strings.Contains(err.Error(), dev+": waiting for the lock") {
		t.Fatalf("err = %v, want a lock wait error", err)
	}
}
