//go:build !cloudroot_front

package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"time"

	"github.com/cloudroot/cloudroot/pkg/modules"
	"github.com/cloudroot/cloudroot/pkg/modules/users"
	"github.com/cloudroot/cloudroot/pkg/target"
)

// hostkeys is cloudroot's own subcommand (cloud-init has none): it
// generates the SSH host keys the initramfs left to the booted root, as the
// ssh module would have: same types, files, modes and console output.
// Plain, the ones deferred because the kernel random number generator was
// not ready (users.HostKeysDeferredMarker; cloudroot-hostkeys.service
// runs it before sshd). With --background, the slow ones (RSA) the
// initramfs left so that sshd need not wait for them
// (users.HostKeysBackgroundMarker; cloudroot-hostkeys-background.service
// runs it after sshd started, before the final stage), made in Go (faster
// than ssh-keygen), then sshd is reloaded to serve them.
func hostkeysCommand() Command {
	return Command{
		Name:  "hostkeys",
		Short: "Generate the SSH host keys the initramfs deferred (cloudroot-hostkeys.service).",
		Run:   runHostkeys,
	}
}

func runHostkeys(ctx context.Context, env *Env, args []string) int {
	marker, background := users.HostKeysDeferredMarker, false
	for _, a := range args {
		switch a {
		case "-h", "--help":
			fmt.Fprintln(env.Stdout, "usage: cloudroot hostkeys [--background]\n\nGenerates the SSH host keys listed in "+users.HostKeysDeferredMarker+
				" (with --background: "+users.HostKeysBackgroundMarker+", then reloads sshd), then removes it.")
			return 0
		case "--background":
			marker, background = users.HostKeysBackgroundMarker, true
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
	return generateLeftHostKeys(ctx, env, root, marker, background)
}

// generateLeftHostKeys generates the keys marker lists (background: the
// slow ones, then reloads sshd) and removes it.
func generateLeftHostKeys(ctx context.Context, env *Env, root *target.Root, marker string, background bool) int {
	b, err := root.ReadFile(marker)
	if errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintln(env.Stdout, "no deferred SSH host keys")
		return 0
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "cloudroot: %v\n", err)
		return 1
	}
	d, err := users.ParseHostKeyDeferral(b)
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
		Booted:  env.Root == "/",
	})
	generate := users.GenerateDeferredHostKeys
	if background {
		generate = users.GenerateBackgroundHostKeys
	}
	if err := generate(ctx, c, d); err != nil {
		log.Error("deferred SSH host keys", "err", err)
		fmt.Fprintf(env.Stderr, "cloudroot: %v\n", err)
		return 1
	}
	if err := root.Remove(marker); err != nil {
		fmt.Fprintf(env.Stderr, "cloudroot: %v\n", err)
		return 1
	}
	log.Info("deferred SSH host keys generated", "duration", time.Since(start).Seconds())
	if background {
		// The keys are there whatever sshd does: a failed reload is a
		// warning, and sshd serves them from its next start.
		if err := users.ReloadSSHD(ctx, c); err != nil {
			log.Warn("sshd not reloaded for the new host keys", "err", err)
		}
	}
	return 0
}

// finishBackgroundHostKeys makes, before the final stage's modules
// (keys_to_console lists every host key, as cloud-init's does), the slow
// keys cloudroot-hostkeys-background.service should have made before it
// and did not (it failed, or was not run): nothing when the marker is gone.
func finishBackgroundHostKeys(ctx context.Context, env *Env, root *target.Root, log *slog.Logger, out io.Writer) {
	b, err := root.ReadFile(users.HostKeysBackgroundMarker)
	if err != nil {
		return
	}
	d, err := users.ParseHostKeyDeferral(b)
	if err != nil {
		log.Warn("background SSH host keys", "err", err)
		return
	}
	log.Warn("SSH host keys left to "+users.BackgroundHostKeysUnit+" are missing, generating them now", "types", fmt.Sprint(d.Types))
	c := modules.NewContext(root, modules.Options{Log: log, Out: out, Now: env.Now, Uptime: env.Uptime, Version: Version, Booted: env.Root == "/"})
	if err := users.GenerateBackgroundHostKeys(ctx, c, d); err != nil {
		log.Warn("background SSH host keys", "err", err)
		return
	}
	if err := root.Remove(users.HostKeysBackgroundMarker); err != nil {
		log.Warn("background SSH host keys", "err", err)
	}
	if err := users.ReloadSSHD(ctx, c); err != nil {
		log.Warn("sshd not reloaded for the new host keys", "err", err)
	}
}
