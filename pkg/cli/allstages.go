//go:build !cloudroot_front

package cli

// `cloud-init --all-stages`, cloud-init 26.x's single-process mode
// (cloudinit/cmd/main.py all_stages, cloudinit/socket.py SocketSync): the
// process started by cloud-init-main.service (Type=notify) binds one Unix
// stream socket per stage, /run/cloud-init/share/{local,network,config,
// final}.sock, tells systemd READY=1, then for each stage in order waits
// until that stage's unit connects and sends "start" (cloud-init-local's
// `echo start | nc -U .../local.sock | sh`), runs the stage and answers
// "echo '<message>'; exit <code>;" — the unit's shell runs the answer, so
// the unit finishes with the stage's exit code. When stdin is a terminal
// the protocol is skipped and the stages simply run in order. At the end
// it notifies STATUS=Completed (or "Completed with failure, ...") and
// STOPPING=1 and exits 1 if any stage failed.
//
// In cloudroot the local and network stages ran in the initramfs: their
// sockets are answered at once with the exit code status.json records for
// them (1 when the stage has errors). config and final run here, as
// `modules --mode config|final` do. So 26.x's unit files work unchanged
// with cloudroot as /usr/bin/cloud-init.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"

	"github.com/cloudroot/cloudroot/pkg/stages"
	"github.com/cloudroot/cloudroot/pkg/state"
	"github.com/cloudroot/cloudroot/pkg/target"
)

// ShareDir holds the stage sockets.
const ShareDir = state.RunDir + "/share"

var syncStages = []string{"local", "network", "config", "final"}

// stageSync is SocketSync: bound sockets, the connection of the stage
// being run.
type stageSync struct {
	env       *Env
	log       *slog.Logger
	listeners map[string]net.Listener
	skip      bool // stdin is a terminal
	anyError  bool
}

func newStageSync(env *Env, log *slog.Logger) (*stageSync, error) {
	s := &stageSync{env: env, log: log, listeners: map[string]net.Listener{}, skip: env.StdinTTY}
	dir := env.Path(ShareDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating %s: %w", ShareDir, err)
	}
	for _, n := range syncStages {
		p := filepath.Join(dir, n+".sock")
		_ = os.Remove(p)
		l, err := net.Listen("unix", p)
		if err != nil {
			s.close()
			return nil, fmt.Errorf("binding %s: %w", p, err)
		}
		s.listeners[n] = l
	}
	return s, nil
}

func (s *stageSync) close() {
	for _, l := range s.listeners {
		l.Close()
	}
}

// run waits for stage's "start", runs fn and answers with its exit code.
func (s *stageSync) run(ctx context.Context, stage string, fn func() int) error {
	if s.skip {
		s.log.Info("Stdin is a tty, so skipping stage synchronization protocol")
		if fn() != 0 {
			s.anyError = true
		}
		return nil
	}
	sdNotify(s.env, fmt.Sprintf("STATUS=Waiting on external services to complete before starting the %s stage.", stage))
	l := s.listeners[stage]
	stop := context.AfterFunc(ctx, func() { l.Close() })
	conn, err := l.Accept()
	stop()
	if err != nil {
		return fmt.Errorf("waiting to start stage %s: %w", stage, err)
	}
	defer conn.Close()
	buf := make([]byte, 5)
	n, _ := io.ReadFull(conn, buf)
	if string(buf[:n]) != "start" {
		fmt.Fprintf(conn, "echo 'Completed socket interaction for boot stage %s'; exit 0;", stage)
		return fmt.Errorf("Received invalid message: [b'%s']", buf[:n])
	}
	sdNotify(s.env, fmt.Sprintf("STATUS=Running (%s stage)", stage))
	code := fn()
	if code != 0 {
		s.anyError = true
	}
	_, err = fmt.Fprintf(conn, "echo 'Completed socket interaction for boot stage %s'; exit %d;", stage, code)
	return err
}

// sdNotify sends a message to systemd's notify socket, if there is one.
func sdNotify(env *Env, msg string) {
	p := env.NotifySocket
	if p == "" {
		return
	}
	if p[0] == '@' {
		p = "\x00" + p[1:]
	}
	c, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: p, Net: "unixgram"})
	if err != nil {
		return
	}
	defer c.Close()
	c.Write([]byte(msg))
}

// initramfsStageCode is the exit code of a stage cloudroot-init ran, from
// status.json: 1 when it recorded errors.
func initramfsStageCode(env *Env, name string) int {
	root, err := target.New(env.Root)
	if err != nil {
		return 1
	}
	if len(stages.ReadStatus(root).Get(name).Errors) > 0 {
		return 1
	}
	return 0
}

func runAllStages(ctx context.Context, env *Env) int {
	log := env.Log
	log.Info("Running cloud-init in single process mode.")
	sync, err := newStageSync(env, log)
	if err != nil {
		fmt.Fprintf(env.Stderr, "cloudroot: --all-stages: %v\n", err)
		return 1
	}
	defer sync.close()
	sdNotify(env, "READY=1")
	steps := []struct {
		name string
		fn   func() int
	}{
		{"local", func() int { return initramfsStageCode(env, state.StageInitLocal) }},
		{"network", func() int { return initramfsStageCode(env, state.StageInit) }},
		{"config", func() int { return runStage(ctx, env, "config", nil, false) }},
		{"final", func() int { return runStage(ctx, env, "final", nil, false) }},
	}
	var first error
	for _, st := range steps {
		if err := sync.run(ctx, st.name, st.fn); err != nil {
			sync.anyError = true
			if first == nil {
				first = err
			}
			log.Error(err.Error())
			if errors.Is(err, context.Canceled) {
				break
			}
		}
	}
	if sync.anyError {
		msg := "a stage of cloud-init exited non-zero"
		if first != nil {
			msg = "first exception received: " + first.Error()
		}
		sdNotify(env, "STATUS=Completed with failure, "+msg+". Run 'cloud-init status --long' for more details.")
		sdNotify(env, "STOPPING=1")
		return 1
	}
	sdNotify(env, "STATUS=Completed")
	sdNotify(env, "STOPPING=1")
	return 0
}
