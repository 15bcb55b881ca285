// Package integration boots cloudroot's artifacts (kernel, initramfs, root
// disk) in QEMU and checks what they did, on the serial console and in the
// disk image afterwards. The tests skip unless the artifacts exist; with
// CLOUDROOT_INTEGRATION=1 (CI) a missing artifact or tool fails them.
//
//	just agent kernel initramfs rootfs
//	CLOUDROOT_INTEGRATION=1 go test -count=1 -v -timeout 25m ./integration/
//
// Console logs land in build/integration/<Test>.log.
//
// QEMU uses KVM only when a short probe boot under KVM prints the kernel's
// banner (harness.Prober: once per run, cached in a temp file per host
// boot and kernel); otherwise TCG. Every console log starts with the
// choice, e.g. "harness: accel: tcg (kvm probe: hung at kernel entry after
// 8s)"; CLOUDROOT_ACCEL=kvm|tcg forces one. The tests pass under both.
package integration
