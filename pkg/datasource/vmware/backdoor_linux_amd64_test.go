package vmware

import (
	"errors"
	"testing"
)

// TestFaultGuard: a hardware fault in assembly (HLT in user mode, a
// general protection fault like `in` on an unanswered port, without
// touching any port) comes back as an error, not a crash.
func TestFaultGuard(t *testing.T) {
	err := faultGuard(privilegedFault)
	if !errors.Is(err, ErrRPC) {
		t.Fatalf("err = %v, want ErrRPC", err)
	}
	if err := faultGuard(func() {}); err != nil {
		t.Fatalf("no fault: err = %v", err)
	}
}
