package smartos

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/datasource"
)

func kvmEnv(budget time.Duration) datasource.Env {
	return datasource.Env{DMI: bootenv.DMI{ProductName: "SmartDC HVM"}, Budget: budget}
}

// TestSerialSilent: a serial port nobody answers on costs the budget and
// is an error (the platform says SmartOS), not ErrNotFound.
func TestSerialSilent(t *testing.T) {
	f := newFake(map[string]string{"sdc:uuid": "u"})
	f.onLine = func(string) ([]string, bool) { return nil, true }
	dev := servePTY(t, f)
	src := &Source{SerialDevice: dev, SocketPath: dev + ".absent"}
	_, err := src.Get(context.Background(), kvmEnv(400*time.Millisecond))
	if err == nil || errors.Is(err, datasource.ErrNotFound) || !strings.Contains(err.Error(), dev+": flushing") || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want a flushing error at the budget's end", err)
	}
}

// TestSerialLocked: while another holder has the port locked (mdata-get),
// Get waits, within its budget.
func TestSerialLocked(t *testing.T) {
	f := newFake(map[string]string{"sdc:uuid": "u"})
	dev := servePTY(t, f)
	h, err := os.OpenFile(dev, os.O_RDWR|unix.O_NOCTTY|unix.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	// An open file description lock conflicts with the record lock Get
	// takes, even within one process.
	lk := unix.Flock_t{Type: unix.F_WRLCK}
	if err := unix.FcntlFlock(h.Fd(), unix.F_OFD_SETLK, &lk); err != nil {
		t.Skipf("no OFD locks: %v", err)
	}
	src := &Source{SerialDevice: dev, SocketPath: dev + ".absent"}
	_, err = src.Get(context.Background(), kvmEnv(300*time.Millisecond))
	if err == nil || !strings.Contains(err.Error(), "waiting for the lock") {
		t.Fatalf("err = %v, want a lock wait error", err)
	}
	if got := f.requests(); len(got) != 0 {
		t.Errorf("requests made while locked: %q", got)
	}
	lk.Type = unix.F_UNLCK
	if err := unix.FcntlFlock(h.Fd(), unix.F_OFD_SETLK, &lk); err != nil {
		t.Fatal(err)
	}
	d, err := src.Get(context.Background(), kvmEnv(10*time.Second))
	if err != nil || d.InstanceID() != "u" {
		t.Fatalf("after unlocking: %v", err)
	}
}

// TestSerialNotATTY: a serial_device that is not a terminal is an error
// naming it.
func TestSerialNotATTY(t *testing.T) {
	dev := t.TempDir() + "/ttyS1"
	if err := os.WriteFile(dev, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := (&Source{SerialDevice: dev, SocketPath: dev + ".absent"}).Get(context.Background(), kvmEnv(time.Second))
	if err == nil || errors.Is(err, datasource.ErrNotFound) || !strings.Contains(err.Error(), dev+": setting raw mode") {
		t.Fatalf("err = %v", err)
	}
}
