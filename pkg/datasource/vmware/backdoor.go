package vmware

// The native guestinfo transport: RPCI over the VMware backdoor I/O port,
// without vmware-rpctool or vmtoolsd (which live in the target root and
// cannot run from the initramfs).
//
// What is and is not tested: the message layer (rpci.go) and this
// transport run in tests against a fake host (fakeVMX) behind the Port
// interface. The privileged part — ioperm on port 0x5658 and the `in`
// instruction in backdoor_linux_amd64.s — cannot be exercised outside a
// VMware VM and has not been run against a real VMware host. Executing
// `in` on the port where nothing answers it traps (#GP → SIGSEGV), so:
// NewBackdoor refuses unless DMI says VMware, the Source only builds it
// after the same check, and each call runs with debug.SetPanicOnFault so a
// fault becomes an error instead of killing the process.

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
)

// ErrBackdoorUnsupported is returned where there is no native backdoor
// (anything but linux/amd64).
var ErrBackdoorUnsupported = errors.New("the native VMware backdoor is only implemented on linux/amd64")

// ErrNotVMware is returned when DMI does not say VMware: the backdoor port
// is never touched then.
var ErrNotVMware = errors.New("DMI does not say VMware")

// IsVMware is cloud-init's is_vmware_platform, widened to the vendor: the
// DMI product name or system vendor contains "vmware" (any case).
func IsVMware(dmi bootenv.DMI) bool {
	return strings.Contains(strings.ToLower(dmi.ProductName), "vmware") ||
		strings.Contains(strings.ToLower(dmi.SysVendor), "vmware")
}

// Backdoor is the guestinfo transport over the backdoor's RPCI channel.
type Backdoor struct {
	// open prepares the port for one exchange on the calling goroutine
	// (locking it to its thread and raising its I/O permission) and
	// returns the port and what undoes that.
	open func() (Port, func(), error)
}

// NewBackdoor returns the native backdoor transport for a machine whose
// DMI strings are dmi: ErrNotVMware unless IsVMware(dmi),
// ErrBackdoorUnsupported off linux/amd64.
func NewBackdoor(dmi bootenv.DMI) (*Backdoor, error) {
	if !IsVMware(dmi) {
		return nil, fmt.Errorf("backdoor: %w (product %q, vendor %q)", ErrNotVMware, dmi.ProductName, dmi.SysVendor)
	}
	if !nativeBackdoor {
		return nil, ErrBackdoorUnsupported
	}
	return &Backdoor{open: openNative}, nil
}

// Name implements Transport.
func (*Backdoor) Name() string { return "backdoor" }

// rpc runs one RPCI exchange on its own goroutine (the port I/O cannot be
// interrupted), so the caller returns when ctx ends even if the host never
// answers; that goroutine (and its locked thread) is then left behind
// until the host does.
func (b *Backdoor) rpc(ctx context.Context, cmd string) (RPCReply, error) {
	type result struct {
		r   RPCReply
		err error
	}
	ch := make(chan result, 1)
	go func() {
		p, release, err := b.open()
		if err != nil {
			ch <- result{err: err}
			return
		}
		defer release()
		r, err := RPCI(ctx, p, []byte(cmd))
		ch <- result{r, err}
	}()
	select {
	case <-ctx.Done():
		return RPCReply{}, fmt.Errorf("backdoor: %w", ctx.Err())
	case res := <-ch:
		if res.err != nil {
			return RPCReply{}, fmt.Errorf("backdoor: %w", res.err)
		}
		return res.r, nil
	}
}

// Get implements Transport with "info-get KEY".
func (b *Backdoor) Get(ctx context.Context, key string) (string, error) {
	r, err := b.rpc(ctx, "info-get "+key)
	if err != nil {
		return "", fmt.Errorf("info-get %s: %w", key, err)
	}
	if !r.OK {
		if string(r.Text) == noValueText {
			return "", fmt.Errorf("info-get %s: %w", key, ErrNoValue)
		}
		return "", fmt.Errorf("info-get %s: backdoor: host answered %q: %w", key, firstLine(string(r.Text)), ErrRPC)
	}
	return string(r.Text), nil
}

// Set implements Transport with "info-set KEY VALUE".
func (b *Backdoor) Set(ctx context.Context, key, value string) error {
	r, err := b.rpc(ctx, "info-set "+key+" "+value)
	if err != nil {
		return fmt.Errorf("info-set %s: %w", key, err)
	}
	if !r.OK {
		return fmt.Errorf("info-set %s: backdoor: host answered %q: %w", key, firstLine(string(r.Text)), ErrRPC)
	}
	return nil
}
