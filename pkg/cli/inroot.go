//go:build !cloudroot_front

package cli

// The agent's in-root mode: when no hand-off state exists for this boot
// (a chroot of an image, a container, a root booted by the distribution's
// own initrd), `cloud-init init --local`, `cloud-init init` and
// `cloud-init single` run the local and network stages themselves, as
// cloud-init does, through the same steps the initramfs runs
// (stages.Boot): ds-identify, the datasource search, user-data, network
// rendering, the init modules, the hand-off state. config and final then
// read that state as after an initramfs boot.
//
//   - init --local: network sources are not asked (cloud-init's local
//     stage); a local source (NoCloud seed, config drive, None) provisions
//     and writes the state. No datasource: nothing is written, so the
//     network stage searches again.
//   - init: the system's network is up; every source in the list is
//     asked, over it.
//   - single: the search and user-data only (FetchOnly), then the one
//     module; status.json is left alone.
//
// Block devices are read from /sys and /dev unless the root is a
// container's (ds-identify ignores them there, as systemd-detect-virt
// says). A network source asked in the local stage (an IMDS, a NoCloud
// seedfrom URL) gets an ephemeral DHCP lease, as cloud-init's
// EphemeralDHCPv4 in init-local: pkg/netup's DHCP through
// stages.EphemeralNet, the code the initramfs brings its network up with,
// released when the stage is done, before the system's network starts.
// When the system's network is already up (a NIC with a global address:
// a chroot on a build host, a container with its network configured),
// the source is asked over it instead, as cloud-init skips the ephemeral
// lease when the metadata service is reachable.

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/cilog"
	"github.com/cloudroot/cloudroot/pkg/identify"
	"github.com/cloudroot/cloudroot/pkg/netup"
	"github.com/cloudroot/cloudroot/pkg/secret"
	"github.com/cloudroot/cloudroot/pkg/stages"
	"github.com/cloudroot/cloudroot/pkg/state"
	"github.com/cloudroot/cloudroot/pkg/target"
)

// inRootStage says which of cloud-init's stages runs in the root.
type inRootStage int

const (
	inRootLocal   inRootStage = iota // init --local
	inRootNetwork                    // init
	inRootFetch                      // single, modules without state
)

// inRootOptions are the in-root run's inputs beyond the Env.
type inRootOptions struct {
	Stage  inRootStage
	Root   *target.Root
	Log    *slog.Logger
	Out    io.Writer
	Secret func([]string)
	// Devices overrides the block-device scan (tests).
	Devices []bootenv.Device
	// NoDevices skips the scan (tests, containers).
	NoDevices bool
	// Bring brings the local stage's ephemeral network up (nil: DHCP on
	// every NIC, netup.Up); SystemNetUp says whether the system's own
	// network is up already (nil: a NIC with a global address).
	Bring       func(ctx context.Context) (*netup.Lease, error)
	SystemNetUp func() bool
}

// runInRoot runs the local (and init) stage in env.Root and writes the
// hand-off state. It reports whether a datasource was found.
func runInRoot(ctx context.Context, env *Env, o inRootOptions) (*stages.Boot, bool) {
	host := os.DirFS(env.Root)
	virt := identify.ContainerVirt(host)
	st := &state.State{Created: env.Now().UTC(), Mode: stages.ModeInRoot}
	if id, err := os.ReadFile(env.Path("/proc/sys/kernel/random/boot_id")); err == nil {
		st.BootID = strings.TrimSpace(string(id))
	}
	var cmdline bootenv.Cmdline
	if raw, err := os.ReadFile(env.Path("/proc/cmdline")); err == nil {
		cmdline = bootenv.ParseCmdline(strings.TrimSpace(string(raw)))
		st.Cmdline = cmdline.String()
	}
	b := &stages.Boot{
		Mode: stages.ModeInRoot, Target: o.Root, Run: o.Root, Log: o.Log, Out: o.Out,
		Now: env.Now, Uptime: env.Uptime, Version: Version,
		Cmdline: cmdline, Host: host, Virt: virt,
		DMI:       bootenv.ReadDMI(env.Path("/sys")),
		State:     st,
		Status:    state.NewStatus(),
		Secrets:   o.Secret,
		FetchOnly: o.Stage == inRootFetch,
		// ds-identify is the generator's (cloudroot identify writes
		// /run/cloud-init/cloud.cfg); by hand, the configured list.
		NoIdentify: true,
		Devices:    o.Devices,
	}
	if virt != "" {
		o.Log.Info("running in a container: block devices and kernel modules are not looked at", "virt", virt)
	} else if !o.NoDevices && o.Devices == nil {
		benv := bootenv.Env{SysRoot: env.Path("/sys"), DevRoot: env.Path("/dev")}
		sctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		if devs, err := benv.Settle(sctx, 200*time.Millisecond, 3*time.Second); err == nil || len(devs) > 0 {
			b.Devices = devs
		}
		cancel()
	}
	netUp := o.SystemNetUp
	if netUp == nil {
		netUp = systemNetworkUp
	}
	switch {
	case o.Stage != inRootLocal || netUp():
		// The system's network is up (cloud-init-network runs after
		// systemd-networkd-wait-online); a direct client, no proxy.
		b.NetworkUp = true
		b.HTTP = &http.Client{Transport: &http.Transport{Proxy: nil}}
	default:
		bring := o.Bring
		if bring == nil {
			bring = func(ctx context.Context) (*netup.Lease, error) {
				o.Log.Info("bringing up an ephemeral DHCP lease for a network datasource (the system's network is not up)")
				return netup.Up(ctx, stages.DHCPOptions(o.Log))
			}
		}
		eph := &stages.EphemeralNet{Bring: bring, Log: o.Log}
		b.Net = eph
		// Released when the stage is done, before the system's network
		// starts (the handoff is written then).
		defer eph.Down(context.WithoutCancel(ctx))
	}
	data := b.Local(ctx)
	if data == nil && o.Stage != inRootNetwork {
		// No state is written: the network stage searches again, and
		// single says it found no datasource.
		o.Log.Info("no datasource found in the root", "reason", st.DisabledReason)
		return b, false
	}
	if data != nil {
		b.Init(ctx, data)
	}
	// The logs went straight to cloud-init.log and cloud-init-output.log.
	if err := b.Handoff(nil, nil); err != nil {
		o.Log.Warn("writing the hand-off state", "err", err)
	}
	return b, data != nil
}

// systemNetworkUp reports whether a NIC other than loopback is up with a
// global unicast address: the system's network, which a network source is
// then asked over.
func systemNetworkUp() bool {
	ifs, err := net.Interfaces()
	if err != nil {
		return false
	}
	for _, ifc := range ifs {
		if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, _ := ifc.Addrs()
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok && ipn.IP.IsGlobalUnicast() {
				return true
			}
		}
	}
	return false
}

// runInRootCommand is `cloud-init init [--local]` without a hand-off
// state: the stages run here, logging to cloud-init.log and
// cloud-init-output.log (secrets scrubbed) and the console. Exit 1 when
// the stage recorded errors, as cloud-init's init does.
func runInRootCommand(ctx context.Context, env *Env, root *target.Root, stage inRootStage) int {
	rawLog, rawOut, closeLogs := openLogs(env)
	defer closeLogs()
	known := &secret.Known{}
	logw, outw := &secret.Writer{W: rawLog, Known: known}, &secret.Writer{W: rawOut, Known: known}
	defer outw.Close()
	defer logw.Close()
	name := state.StageInit
	if stage == inRootLocal {
		name = state.StageInitLocal
	}
	log := slog.New(slog.NewMultiHandler(
		cilog.NewHandler(logw, cilog.Options{Level: slog.LevelDebug, Logger: "stages.py"}),
		secret.NewHandler(env.Log.Handler(), known),
	)).With("stage", name)
	fmt.Fprintf(env.Stdout, "cloudroot: no hand-off state for this boot (no cloudroot initramfs ran): running the %s stage in the root\n", name)
	b, found := runInRoot(ctx, env, inRootOptions{Stage: stage, Root: root, Log: log, Out: outw, Secret: known.Set})
	if err := root.Sync(); err != nil {
		log.Warn("sync the root after the stage", "err", err)
	}
	switch {
	case found:
		fmt.Fprintf(env.Stdout, "cloudroot: datasource %s, instance-id %s (mode %s)\n", b.Status.Datasource, b.State.InstanceID, stages.ModeInRoot)
	case stage == inRootLocal:
		fmt.Fprintln(env.Stdout, "cloudroot: no local datasource; `cloud-init init` searches again once the network is up")
	case b.State.Disabled:
		fmt.Fprintf(env.Stdout, "cloudroot: cloud-init is disabled for this boot (%s)\n", b.State.DisabledReason)
	}
	failed, errs, _ := b.FailedStages(b.Failed)
	if errs > 0 || len(failed) > 0 {
		return 1
	}
	return 0
}
