package vmware

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"golang.org/x/sys/unix"
)

// backdoorInOut loads r, executes `in eax, dx` and stores the registers
// back into r (backdoor_linux_amd64.s).
//
//go:noescape
func backdoorInOut(r *Regs)

// privilegedFault executes HLT, which traps in user mode. Tests use it to
// check that a fault in assembly becomes an error (faultGuard) without
// touching any I/O port.
func privilegedFault()

// nativeBackdoor says openNative is the real port.
const nativeBackdoor = true

// openNative locks the goroutine to its thread (I/O permissions are
// per thread) and asks for permission on the backdoor port. VMware lets
// the backdoor through without it (unless the VM is configured to
// restrict it), so a refusal (no CAP_SYS_RAWIO) is not an error.
func openNative() (Port, func(), error) {
	runtime.LockOSThread()
	granted := unix.Ioperm(BackdoorPort, 1, 1) == nil
	release := func() {
		if granted {
			_ = unix.Ioperm(BackdoorPort, 1, 0)
		}
		runtime.UnlockOSThread()
	}
	return nativePort{}, release, nil
}

// nativePort is the real backdoor.
type nativePort struct{}

// Call implements Port.
func (nativePort) Call(in Regs) (Regs, error) {
	out := in
	err := faultGuard(func() { backdoorInOut(&out) })
	if err != nil {
		return Regs{}, err
	}
	return out, nil
}

// faultGuard runs f, turning a hardware fault in it (a general protection
// fault on the port: not VMware, or a restricted backdoor) into an error.
func faultGuard(f func()) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("backdoor port I/O faulted (%v): not VMware, or the backdoor is restricted: %w", r, ErrRPC)
		}
	}()
	f()
	return nil
}
