// Package integration boots cloudroot's artifacts (kernel, initramfs, root
// disk) in QEMU and checks what they did, on the serial console and in the
// disk image afterwards. The tests skip unless the artifacts exist; with
// CLOUDROOT_INTEGRATION=1 (CI) a missing artifact or tool fails them.
//
//	just agent kernel initramfs rootfs
//	CLOUDROOT_INTEGRATION=1 go test -count=1 -v -timeout 25m ./integration/
//
// Console logs land in build/integration/<Test>.log.
package integration
