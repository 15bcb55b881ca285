package harness

import (
	"os/exec"
	"syscall"
)

// setParentDeathSignal kills QEMU if the process that started it dies
// (a test binary killed by its timeout leaves no VM behind).
func setParentDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
