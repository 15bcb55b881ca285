// Command cloudroot-lab boots cloudroot in QEMU for people: `demo` boots an
// example seed once and prints what it provisioned, read back from the disk
// image; `bench` boots it several times and prints stage timings; `pxe`
// boots it over the network (iPXE, a live root or an image written to disk).
//
//	go run ./cmds/cloudroot-lab demo -example examples/demo
//	go run ./cmds/cloudroot-lab bench -example examples/demo -runs 5
//	go run ./cmds/cloudroot-lab pxe -example examples/demo -mode live
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "cloudroot-lab:", err)
		os.Exit(1)
	}
}
