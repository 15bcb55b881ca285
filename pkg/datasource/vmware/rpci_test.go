package vmware

import (
	"context"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
)

// TestRPCIFraming: every length of command and reply survives the
// four-byte chunking, and every channel is closed.
func TestRPCIFraming(t *testing.T) {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	for n := 0; n <= 13; n++ {
		key := "guestinfo." + alphabet[:n+1]
		val := alphabet[:n]
		f := &fakeVMX{Guestinfo: map[string]string{key: val}}
		r, err := RPCI(context.Background(), f, []byte("info-get "+key))
		if err != nil {
			t.Fatalf("%d: %v", n, err)
		}
		if !r.OK || string(r.Text) != val {
			t.Errorf("%d: reply %+v, want %q", n, r, val)
		}
		if f.Commands[0] != "info-get "+key {
			t.Errorf("%d: host saw %q", n, f.Commands[0])
		}
		if f.Open != 0 {
			t.Errorf("%d: %d channels open", n, f.Open)
		}
	}
}

func TestRPCIEmptyCommand(t *testing.T) {
	f := &fakeVMX{}
	r, err := RPCI(context.Background(), f, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.OK || string(r.Text) != "Unknown command" {
		t.Errorf("reply %+v", r)
	}
}

func TestRPCILegacyHost(t *testing.T) {
	f := &fakeVMX{Legacy: true, Guestinfo: map[string]string{"guestinfo.x": "old host"}}
	r, err := RPCI(context.Background(), f, []byte("info-get guestinfo.x"))
	if err != nil {
		t.Fatal(err)
	}
	if string(r.Text) != "old host" {
		t.Errorf("reply %+v", r)
	}
}

func TestRPCICheckpoints(t *testing.T) {
	f := &fakeVMX{SendCheckpoints: 2, RecvCheckpoints: 3, Guestinfo: map[string]string{"guestinfo.k": "resumed after checkpoints"}}
	r, err := RPCI(context.Background(), f, []byte("info-get guestinfo.k"))
	if err != nil {
		t.Fatal(err)
	}
	if string(r.Text) != "resumed after checkpoints" {
		t.Errorf("reply %+v", r)
	}
	f = &fakeVMX{SendCheckpoints: 100}
	if _, err := RPCI(context.Background(), f, []byte("info-get guestinfo.k")); !errors.Is(err, ErrRPC) || !strings.Contains(err.Error(), "checkpoints") {
		t.Errorf("err = %v, want giving up after checkpoints", err)
	}
	if f.Open != 0 {
		t.Errorf("%d channels open after a failure", f.Open)
	}
}

// TestRPCIHostErrors: a host that misbehaves at each step is an ErrRPC
// naming the step, and the channel is still closed when it was opened.
func TestRPCIHostErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mangle func(in Regs, out *Regs)
		want   string
	}{
		{"open refused", func(in Regs, out *Regs) {
			if hi(in.CX) == msgOpen {
				*out = Regs{}
			}
		}, "opening the RPCI channel"},
		{"size refused", func(in Regs, out *Regs) {
			if hi(in.CX) == msgSendSize {
				*out = Regs{}
			}
		}, "sending the size"},
		{"payload refused", func(in Regs, out *Regs) {
			if hi(in.CX) == msgSendPayload {
				*out = Regs{}
			}
		}, "sending bytes 0-4"},
		{"reply size refused", func(in Regs, out *Regs) {
			if hi(in.CX) == msgRecvSize {
				*out = Regs{}
			}
		}, "receiving the reply size"},
		{"reply size of the wrong type", func(in Regs, out *Regs) {
			if hi(in.CX) == msgRecvSize {
				out.DX = msgSendPayload << 16
			}
		}, "expected a reply size, got message type 2"},
		{"reply too long", func(in Regs, out *Regs) {
			if hi(in.CX) == msgRecvSize {
				out.BX = MaxReply + 1
			}
		}, "larger than"},
		{"reply bytes refused", func(in Regs, out *Regs) {
			if hi(in.CX) == msgRecvPayload {
				*out = Regs{}
			}
		}, "receiving byte 0 of"},
		{"reply bytes of the wrong type", func(in Regs, out *Regs) {
			if hi(in.CX) == msgRecvPayload {
				out.DX = msgSendSize << 16
			}
		}, "expected reply bytes, got message type 1"},
		{"ack refused", func(in Regs, out *Regs) {
			if hi(in.CX) == msgRecvStatus {
				*out = Regs{}
			}
		}, "acknowledging the reply"},
		{"close refused", func(in Regs, out *Regs) {
			if hi(in.CX) == msgClose {
				*out = Regs{}
			}
		}, "closing channel 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeVMX{Mangle: tc.mangle, Guestinfo: map[string]string{"guestinfo.k": "v"}}
			_, err := RPCI(context.Background(), f, []byte("info-get guestinfo.k"))
			if !errors.Is(err, ErrRPC) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want ErrRPC containing %q", err, tc.want)
			}
			// The fake counts a channel before the mangled answer
			// refuses it, and keeps one whose close was refused.
			if tc.name != "close refused" && tc.name != "open refused" && f.Open != 0 {
				t.Errorf("%d channels left open", f.Open)
			}
		})
	}
}

// TestRPCINoReply: a host with nothing to say gives an empty reply.
func TestRPCINoReply(t *testing.T) {
	f := &fakeVMX{Mangle: func(in Regs, out *Regs) {
		if hi(in.CX) == msgRecvSize {
			*out = Regs{CX: ok(0)}
		}
	}}
	r, err := RPCI(context.Background(), f, []byte("info-get guestinfo.k"))
	if err != nil {
		t.Fatal(err)
	}
	if r.OK || len(r.Text) != 0 {
		t.Errorf("reply %+v", r)
	}
}

type errPort struct{ n int }

func (p *errPort) Call(Regs) (Regs, error) {
	p.n++
	return Regs{}, errors.New("port gone")
}

func TestRPCIPortError(t *testing.T) {
	p := &errPort{}
	if _, err := RPCI(context.Background(), p, []byte("x")); err == nil || err.Error() != "port gone" {
		t.Errorf("err = %v", err)
	}
}

func TestRPCICanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f := &fakeVMX{Guestinfo: map[string]string{"guestinfo.k": "v"}}
	if _, err := RPCI(ctx, f, []byte("info-get guestinfo.k")); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want canceled", err)
	}
	if f.Open != 0 {
		t.Errorf("%d channels open", f.Open)
	}
}

func TestParseRPCReply(t *testing.T) {
	for in, want := range map[string]RPCReply{
		"":                  {},
		"1 ":                {OK: true, Text: []byte{}},
		"1":                 {OK: true, Text: []byte{}},
		"1 value with 1 ":   {OK: true, Text: []byte("value with 1 ")},
		"0 No value found":  {Text: []byte(noValueText)},
		"garbage":           {Text: []byte("garbage")},
		"1x":                {OK: true, Text: []byte("x")},
		"0\nmultiline\nerr": {Text: []byte("\nmultiline\nerr")},
	} {
		if diff := cmp.Diff(want, ParseRPCReply([]byte(in))); diff != "" {
			t.Errorf("ParseRPCReply(%q) (-want +got):\n%s", in, diff)
		}
	}
}

func TestPackWord(t *testing.T) {
	for in, want := range map[string]uint32{"": 0, "a": 0x61, "ab": 0x6261, "abc": 0x636261, "abcd": 0x64636261, "abcde": 0x64636261} {
		if got := packWord([]byte(in)); got != want {
			t.Errorf("packWord(%q) = %#x, want %#x", in, got, want)
		}
	}
}

// TestBackdoorTransport: Get and Set over the fake host, ErrNoValue for an
// unset key, and the host's error text otherwise.
func TestBackdoorTransport(t *testing.T) {
	f := &fakeVMX{Guestinfo: map[string]string{"guestinfo.metadata": "instance-id: i\n"}}
	opens := 0
	b := &Backdoor{open: f.opener(&opens)}
	ctx := context.Background()
	v, err := b.Get(ctx, "guestinfo.metadata")
	if err != nil || v != "instance-id: i\n" {
		t.Fatalf("Get = %q, %v", v, err)
	}
	if _, err := b.Get(ctx, "guestinfo.nothing"); !errors.Is(err, ErrNoValue) {
		t.Errorf("unset key: err = %v", err)
	}
	if err := b.Set(ctx, "guestinfo.metadata", "---"); err != nil {
		t.Fatal(err)
	}
	if f.Guestinfo["guestinfo.metadata"] != "---" {
		t.Errorf("after Set: %q", f.Guestinfo)
	}
	refusing := &fakeVMX{Refuse: "Permission denied"}
	rb := &Backdoor{open: refusing.opener(nil)}
	if _, err := rb.Get(ctx, "guestinfo.metadata"); !errors.Is(err, ErrRPC) || errors.Is(err, ErrNoValue) || !strings.Contains(err.Error(), `host answered "Permission denied"`) {
		t.Errorf("refused Get: err = %v", err)
	}
	if err := rb.Set(ctx, "guestinfo.metadata", "x"); !errors.Is(err, ErrRPC) {
		t.Errorf("refused Set: err = %v", err)
	}
	if opens != 3 {
		t.Errorf("opened %d times, want one per call", opens)
	}
	if b.Name() != "backdoor" {
		t.Errorf("Name() = %q", b.Name())
	}
}

// blockingPort never answers until released.
type blockingPort struct{ release chan struct{} }

func (p blockingPort) Call(in Regs) (Regs, error) {
	<-p.release
	return Regs{}, errors.New("released")
}

// TestBackdoorBounded: a host that never answers costs the context's
// deadline, not forever.
func TestBackdoorBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := blockingPort{release: make(chan struct{})}
		b := &Backdoor{open: func() (Port, func(), error) { return p, func() {}, nil }}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		start := time.Now()
		_, err := b.Get(ctx, "guestinfo.metadata")
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v", err)
		}
		if d := time.Since(start); d != 3*time.Second {
			t.Errorf("returned after %s (fake time), want the deadline", d)
		}
		close(p.release)
		synctest.Wait()
	})
}

func TestBackdoorOpenError(t *testing.T) {
	b := &Backdoor{open: func() (Port, func(), error) { return nil, nil, ErrBackdoorUnsupported }}
	if _, err := b.Get(context.Background(), "guestinfo.metadata"); !errors.Is(err, ErrBackdoorUnsupported) {
		t.Errorf("err = %v", err)
	}
}

// TestNewBackdoorGuard: the native backdoor is refused unless DMI says
// VMware; building it does not touch the port.
func TestNewBackdoorGuard(t *testing.T) {
	for _, dmi := range []bootenv.DMI{{}, {ProductName: "KVM"}, {SysVendor: "QEMU", ProductName: "Standard PC"}} {
		if _, err := NewBackdoor(dmi); !errors.Is(err, ErrNotVMware) {
			t.Errorf("%+v: err = %v, want ErrNotVMware", dmi, err)
		}
	}
	b, err := NewBackdoor(bootenv.DMI{SysVendor: "VMware, Inc."})
	if nativeBackdoor {
		if err != nil || b == nil {
			t.Errorf("NewBackdoor on VMware = %v, %v", b, err)
		}
	} else if !errors.Is(err, ErrBackdoorUnsupported) {
		t.Errorf("err = %v, want ErrBackdoorUnsupported", err)
	}
}

func TestIsVMware(t *testing.T) {
	for dmi, want := range map[bootenv.DMI]bool{
		{ProductName: "VMware Virtual Platform"}: true,
		{ProductName: "VMware7,1"}:               true,
		{SysVendor: "VMware, Inc."}:              true,
		{ProductName: "vmware20,1"}:              true,
		{ProductName: "VirtualBox"}:              false,
		{}:                                       false,
	} {
		if got := IsVMware(dmi); got != want {
			t.Errorf("IsVMware(%+v) = %v", dmi, got)
		}
	}
}

// fuzzPort answers each call with the next 24 bytes of data as
// registers, and fails when they run out.
type fuzzPort struct {
	data  []byte
	calls int
}

func (p *fuzzPort) Call(in Regs) (Regs, error) {
	p.calls++
	if len(p.data) < 24 {
		return Regs{}, errors.New("out of data")
	}
	w := func(i int) uint32 { return binary.LittleEndian.Uint32(p.data[4*i:]) }
	out := Regs{w(0), w(1), w(2), w(3), w(4), w(5)}
	p.data = p.data[24:]
	return out, nil
}

// FuzzRPCI: whatever a host answers, the message layer ends (by the
// bounded retries and the input running out) without panicking, and a
// successful reply is never longer than the size announced.
func FuzzRPCI(f *testing.F) {
	// A well-behaved exchange recorded from the fake host.
	rec := &recorder{port: &fakeVMX{Guestinfo: map[string]string{"guestinfo.k": "value"}}}
	if _, err := RPCI(context.Background(), rec, []byte("info-get guestinfo.k")); err != nil {
		f.Fatal(err)
	}
	f.Add("info-get guestinfo.k", rec.out)
	f.Add("", []byte{})
	f.Fuzz(func(t *testing.T, cmd string, data []byte) {
		p := &fuzzPort{data: data}
		r, err := RPCI(context.Background(), p, []byte(cmd))
		if err == nil && len(r.Text) > len(data) {
			t.Fatalf("reply of %d bytes from %d bytes of answers", len(r.Text), len(data))
		}
		// Every answer, the call that found none, and the close.
		if p.calls > len(data)/24+2 {
			t.Fatalf("%d calls for %d answers", p.calls, len(data)/24)
		}
	})
}

// recorder records a port's answers as fuzzPort input.
type recorder struct {
	port Port
	out  []byte
}

func (r *recorder) Call(in Regs) (Regs, error) {
	out, err := r.port.Call(in)
	for _, v := range []uint32{out.AX, out.BX, out.CX, out.DX, out.SI, out.DI} {
		r.out = binary.LittleEndian.AppendUint32(r.out, v)
	}
	return out, err
}
