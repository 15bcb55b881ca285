//go:build !cloudroot_front

package cli

// `cloudroot imds serve`: the metadata-service simulator of pkg/imdsserve
// on a loopback address, for trying a build against a fake cloud.

import (
	"context"
	"fmt"
	"io"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"github.com/cloudroot/cloudroot/pkg/imdsserve"
)

func imdsCommand() Command {
	return Command{
		Name:  "imds",
		Short: "Serve a metadata-service simulator on 127.0.0.1 (imds serve --cloud ec2|openstack|gce|azure --dir D --listen 127.0.0.1:PORT).",
		Run:   runIMDS,
	}
}

func imdsUsage(w io.Writer) {
	fmt.Fprintf(w, `usage: cloudroot imds serve --cloud {%s} --dir DIR --listen 127.0.0.1:PORT [--require-token] [--per-client] [--faults SPEC]

Serve DIR (a tree laid out like pkg/datasource/<cloud>/testdata/<case>/tree/)
as the cloud's metadata service. The listen address must be a loopback IP
(127.0.0.0/8 or [::1]). Each request is logged on stderr. Stops on SIGINT or
SIGTERM.

options:
  --cloud CLOUD      ec2 (IMDS, IMDSv2 tokens), openstack (Nova), gce, or azure
                     (IMDS with Metadata: true, and the wireserver: goal state,
                     health reports logged; point the datasource's metadata_url
                     and wireserver_address here)
  --dir DIR          the tree to serve
  --listen ADDR      loopback address:port (default 127.0.0.1:8169; port 0 picks one)
  --require-token    ec2: refuse GETs without an IMDSv2 token
  --per-client       serve each client address its own tree, DIR/<client IP>/
                     (a fleet: clients bound to 127.0.x.y each get an identity)
  --faults SPEC      inject faults: errors=FRACTION (answered 500/502/503),
                     spikes=FRACTION, spike=MAX-DELAY, seed=N, comma-separated,
                     e.g. errors=0.1,spikes=0.05,spike=300ms,seed=1
`, strings.Join(imdsserve.Clouds(), ","))
}

// imdsServeReady, when set (tests), is told the address once listening.
var imdsServeReady func(addr string)

func runIMDS(ctx context.Context, env *Env, args []string) int {
	if len(args) == 0 {
		imdsUsage(env.Stderr)
		return 2
	}
	switch args[0] {
	case "-h", "--help":
		imdsUsage(env.Stdout)
		return 0
	case "serve":
	default:
		fmt.Fprintf(env.Stderr, "error: invalid choice: %q (choose from 'serve')\n", args[0])
		imdsUsage(env.Stderr)
		return 2
	}
	stderr := &imdsLog{w: env.Stderr}
	o := imdsserve.Options{Log: stderr}
	listen := "127.0.0.1:8169"
	args = args[1:]
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, inline, hasInline := strings.Cut(a, "=")
		val := func() (string, bool) {
			if hasInline {
				return inline, true
			}
			if i+1 < len(args) {
				i++
				return args[i], true
			}
			return "", false
		}
		var dst *string
		switch name {
		case "-h", "--help":
			imdsUsage(env.Stdout)
			return 0
		case "--require-token", "--per-client":
			if hasInline {
				fmt.Fprintf(env.Stderr, "error: %s takes no value\n", name)
				return 2
			}
			if name == "--per-client" {
				o.PerClient = true
			} else {
				o.RequireToken = true
			}
			continue
		case "--faults":
			v, ok := val()
			if !ok {
				fmt.Fprintf(env.Stderr, "error: %s needs a value\n", name)
				return 2
			}
			f, err := imdsserve.ParseFaults(v)
			if err != nil {
				fmt.Fprintf(env.Stderr, "error: --faults: %v\n", err)
				return 2
			}
			o.Faults = f
			continue
		case "--cloud":
			dst = &o.Cloud
		case "--dir":
			dst = &o.Dir
		case "--listen":
			dst = &listen
		default:
			fmt.Fprintf(env.Stderr, "error: unrecognized argument %s\n", a)
			imdsUsage(env.Stderr)
			return 2
		}
		v, ok := val()
		if !ok {
			fmt.Fprintf(env.Stderr, "error: %s needs a value\n", name)
			return 2
		}
		*dst = v
	}
	if o.Cloud == "" || o.Dir == "" {
		fmt.Fprintln(env.Stderr, "error: --cloud and --dir are required")
		imdsUsage(env.Stderr)
		return 2
	}
	if o.RequireToken && o.Cloud != imdsserve.CloudEC2 {
		fmt.Fprintln(env.Stderr, "error: --require-token is for --cloud ec2")
		return 2
	}
	if err := imdsserve.CheckLoopback(listen); err != nil {
		fmt.Fprintf(env.Stderr, "error: refusing to listen: %v\n", err)
		return 2
	}
	srv, err := imdsserve.New(o)
	if err != nil {
		fmt.Fprintf(env.Stderr, "error: %v\n", err)
		return 1
	}
	defer srv.Close()
	run, err := srv.Start(listen)
	if err != nil {
		fmt.Fprintf(env.Stderr, "error: %v\n", err)
		return 1
	}
	fmt.Fprintf(stderr, "imds: serving %s (%s) on http://%s\n", o.Dir, o.Cloud, run.Addr())
	if o.Faults.Enabled() {
		fmt.Fprintf(stderr, "imds: injecting faults %s\n", o.Faults)
	}
	if imdsServeReady != nil {
		imdsServeReady(run.Addr())
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run.Wait(ctx); err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 1
	}
	return 0
}

// imdsLog serialises the request log (written from the server's
// goroutines) with the command's own messages.
type imdsLog struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *imdsLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
