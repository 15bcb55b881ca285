package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"time"

	"github.com/cloudroot/cloudroot/pkg/modules"
	"github.com/cloudroot/cloudroot/pkg/target"
)

// hostkeys is cloudroot's own subcommand (cloud-init has none): it
// generates the SSH host keys the initramfs deferred because the kernel
// random number generator was not ready (modules.HostKeysDeferredMarker),
// as the ssh module would have: same types, files, modes and console
// output. cloudroot-hostkeys.service runs it before sshd.
func hostkeysCommand() Command {
	return Command{
		Name:  "hostkeys",
		Short: "Generate the SSH host keys the initramfs deferred (cloudroot-hostkeys.service).",
		Run:   runHostkeys,
	}
}

func runHostkeys(ctx context.Context, env *Env, args []string) int {
	for _, a := range args {
		switch a {
		case "-h", "--help":
			fmt.Fprintln(env.Stdout, "usage: cloudroot hostkeys\n\nGenerates the SSH host keys listed in "+modules.HostKeysDeferredMarker+", then removes it.")
			return 0
		default:
			fmt.Fprintf(env.Stderr, "error: unrecognized arguments: %s\n", a)
			return 2
		}
	}
	root, err := target.New(env.Root)
	if err != nil {
		fmt.Fprintln(env.Stderr, err)
		return 1
	}
	b, err := root.ReadFile(modules.HostKeysDeferredMarker)
	if errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintln(env.Stdout, "no deferred SSH host keys")
		return 0
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "cloudroot: %v\n", err)
		return 1
	}
	d, err := modules.ParseHostKeyDeferral(b)
	if err != nil {
		fmt.Fprintf(env.Stderr, "cloudroot: %v\n", err)
		return 1
	}
	logw, outw, closeLogs := openLogs(env)
	defer closeLogs()
	log := slog.New(slog.NewMultiHandler(
		slog.NewTextHandler(logw, &slog.HandlerOptions{Level: slog.LevelDebug}),
		env.Log.Handler(),
	)).With("stage", "hostkeys")
	start := time.Now()
	log.Info("generating deferred SSH host keys", "types", fmt.Sprint(d.Types), "reason", d.Reason)
	c := modules.NewContext(root, modules.Options{
		Log:     log,
		Out:     outw,
		Now:     env.Now,
		Uptime:  env.Uptime,
		Version: Version,
	})
	if err := modules.GenerateDeferredHostKeys(ctx, c, d); err != nil {
		log.Error("deferred SSH host keys", "err", err)
		fmt.Fprintf(env.Stderr, "cloudroot: %v\n", err)
		return 1
	}
	if err := root.Remove(modules.HostKeysDeferredMarker); err != nil {
		fmt.Fprintf(env.Stderr, "cloudroot: %v\n", err)
		return 1
	}
	log.Info("deferred SSH host keys generated", "duration", time.Since(start).Seconds())
	return 0
}
