package harness

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// Guest architectures (BootOptions.Arch, Artifacts.Arch). The empty value
// is amd64, the architecture every other boot of the suite uses.
const (
	ArchAMD64 = "amd64"
	ArchARM64 = "arm64"
)

// QEMUArm64 is the emulator for arm64 guests (Debian package qemu-system-arm).
const QEMUArm64 = "qemu-system-aarch64"

// AAVMFDir holds Debian's UEFI firmware for arm64 guests (package
// qemu-efi-aarch64): AAVMF_CODE.fd (read-only) and AAVMF_VARS.fd, the
// template each boot copies for its variable store.
var AAVMFDir = "/usr/share/AAVMF"

// arm64Console is the serial console of QEMU's virt machine (a PL011).
const arm64Console = "ttyAMA0"

// normArch maps "" to amd64.
func normArch(a string) string {
	if a == "" {
		return ArchAMD64
	}
	return a
}

// qemuFor is the emulator binary of a guest architecture.
func qemuFor(arch string) (string, error) {
	switch normArch(arch) {
	case ArchAMD64:
		return QEMU, nil
	case ArchARM64:
		return QEMUArm64, nil
	}
	return "", fmt.Errorf("boot options: unknown architecture %q (amd64, arm64)", arch)
}

// foreignArch reports whether a guest of arch cannot use the host's KVM.
func foreignArch(arch string) bool { return normArch(arch) != runtime.GOARCH }

// archFromKernelVersion reads the architecture from a Debian kernel release
// ("6.1.0-56-arm64" → arm64); amd64 otherwise.
func archFromKernelVersion(v string) string {
	v = strings.TrimSpace(v)
	if strings.HasSuffix(v, "-arm64") || strings.HasSuffix(v, "-cloud-arm64") {
		return ArchARM64
	}
	return ArchAMD64
}

// arm64MachineArgs are the virt machine's arguments: UEFI (AAVMF) from
// pflash, so the guest gets SMBIOS tables as on arm64 clouds (unless
// noFirmware: QEMU then loads the kernel itself and hands it a device
// tree), and a CPU model TCG runs fast (max with QEMU's cheap pointer
// authentication).
func arm64MachineArgs(vars string, noFirmware bool) []string {
	args := []string{QEMUArm64, "-machine", "virt", "-cpu", "max,pauth-impdef=on"}
	if noFirmware {
		return args
	}
	return append(args,
		"-drive", "if=pflash,format=raw,readonly=on,file="+driveFile(filepath.Join(AAVMFDir, "AAVMF_CODE.fd")),
		"-drive", "if=pflash,format=raw,file="+driveFile(vars),
	)
}

// NewEFIVars copies the AAVMF variable store template into dir for one boot.
func NewEFIVars(dir string) (string, error) {
	src, err := os.Open(filepath.Join(AAVMFDir, "AAVMF_VARS.fd"))
	if err != nil {
		return "", fmt.Errorf("arm64 UEFI firmware: %w (install qemu-efi-aarch64)", err)
	}
	defer src.Close()
	dst, err := os.CreateTemp(dir, "efivars-*.fd")
	if err != nil {
		return "", fmt.Errorf("arm64 UEFI variables: %w", err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		os.Remove(dst.Name())
		return "", fmt.Errorf("arm64 UEFI variables: %w", err)
	}
	if err := dst.Close(); err != nil {
		os.Remove(dst.Name())
		return "", fmt.Errorf("arm64 UEFI variables: %w", err)
	}
	return dst.Name(), nil
}

// ChooseAccel is the accelerator for a boot of kernel on arch: TCG for a
// guest the host's KVM cannot run, else DefaultProber's choice.
func ChooseAccel(ctx context.Context, arch, kernel string) Accel {
	if foreignArch(arch) {
		return Accel{Name: AccelTCG, Why: normArch(arch) + " guest on an " + runtime.GOARCH + " host"}
	}
	return DefaultProber.Choose(ctx, kernel)
}

// QEMUFor is the emulator binary for arch (QEMU for amd64 and anything unknown).
func QEMUFor(arch string) string {
	if q, err := qemuFor(arch); err == nil {
		return q
	}
	return QEMU
}
