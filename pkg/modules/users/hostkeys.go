package users

// SSH host keys: where the key material comes from and what happens when
// the kernel's random number generator is not ready.
//
// Generation needs the kernel CRNG initialised. In the initramfs the boot
// starts one blocking getrandom early (EntropyWaiter: blocking, unlike a
// poll, lets the kernel run its jitter entropy collection, about a second
// under TCG without virtio-rng) and bounds the wait. A HostKeyPool starts
// generating keys as soon as that is ready, concurrently with the rest of
// the boot; the ssh module takes the keys from it when it runs, so the files
// it writes are the ones it always wrote.
//
// When entropy is not there in time, keys are never silently skipped: the
// ssh module hands the key types to Context.DeferHostKeys (the initramfs
// writes HostKeysDeferredMarker; cloudroot-hostkeys.service runs
// `cloudroot hostkeys` in the booted root before sshd), or fails with
// ErrNoEntropy when nothing can take them over.

import (
	"context"
	"crypto"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/cloudroot/cloudroot/pkg/modules"
	"github.com/cloudroot/cloudroot/pkg/state"
	"github.com/cloudroot/cloudroot/pkg/target"
)

// HostKeysDeferredMarker is written under /run/cloud-init when host-key
// generation is left to the booted root; it holds a
// modules.HostKeyDeferral as JSON.
const HostKeysDeferredMarker = state.RunDir + "/cloudroot/hostkeys-deferred"

// ErrNoEntropy means the kernel random number generator was not ready
// before the wait's bound.
var ErrNoEntropy = errors.New("the kernel random number generator is not initialised")

// ErrHostKeysDeferred means the boot asked for host keys to be made in the
// booted root (cloudroot.hostkeys=defer).
var ErrHostKeysDeferred = errors.New("host-key generation deferred to the booted system")

// deferrable reports whether err leaves host keys to the booted root.
func deferrable(err error) bool {
	return errors.Is(err, ErrNoEntropy) || errors.Is(err, ErrHostKeysDeferred)
}

// DeferAll is an Entropy that defers every host key (ErrHostKeysDeferred
// with reason).
type DeferAll struct{ Reason string }

// Wait implements Entropy.
func (d DeferAll) Wait(context.Context) error {
	return fmt.Errorf("%s: %w", d.Reason, ErrHostKeysDeferred)
}

// ParseHostKeyDeferral reads a HostKeysDeferredMarker.
func ParseHostKeyDeferral(b []byte) (modules.HostKeyDeferral, error) {
	var d modules.HostKeyDeferral
	if err := json.Unmarshal(b, &d); err != nil {
		return d, fmt.Errorf("parsing %s: %w", HostKeysDeferredMarker, err)
	}
	return d, nil
}

// Entropy says when the kernel RNG is ready.
type Entropy interface {
	// Wait returns nil once the kernel RNG is initialised and ErrNoEntropy
	// when it was not by the source's bound (or ctx's error).
	Wait(ctx context.Context) error
}

// announceAfter is how long Wait waits silently before saying on the
// console what it waits for.
const announceAfter = 200 * time.Millisecond

// EntropyWaiter runs one blocking read of the kernel RNG (getrandom with
// no flags) in a goroutine and bounds how long anyone waits for it.
type EntropyWaiter struct {
	done     chan struct{} // closed when the read returned
	expired  chan struct{} // closed when the bound passed
	start    time.Time
	elapsed  time.Duration
	err      error
	log      *slog.Logger
	timeout  time.Duration
	announce sync.Once
}

// NewEntropyWaiter starts read (a blocking getrandom) now; Wait gives up
// timeout after this call. log (may be nil) says what is waited for.
func NewEntropyWaiter(read func() error, timeout time.Duration, log *slog.Logger) *EntropyWaiter {
	w := &EntropyWaiter{done: make(chan struct{}), expired: make(chan struct{}), start: time.Now(), log: log, timeout: timeout}
	go func() {
		err := read()
		w.elapsed = time.Since(w.start)
		w.err = err
		close(w.done)
	}()
	go func() {
		t := time.NewTimer(timeout)
		defer t.Stop()
		select {
		case <-t.C:
			close(w.expired)
		case <-w.done:
		}
	}()
	return w
}

// Ready reports whether the read has returned without error.
func (w *EntropyWaiter) Ready() bool {
	select {
	case <-w.done:
		return w.err == nil
	default:
		return false
	}
}

// Elapsed is how long the read took (0 while it has not returned).
func (w *EntropyWaiter) Elapsed() time.Duration {
	select {
	case <-w.done:
		return w.elapsed
	default:
		return 0
	}
}

// Wait implements Entropy.
func (w *EntropyWaiter) Wait(ctx context.Context) error {
	select {
	case <-w.done:
		return w.result()
	default:
	}
	// A read about to return is not worth a console line.
	quiet := time.NewTimer(announceAfter)
	defer quiet.Stop()
	select {
	case <-w.done:
		return w.result()
	case <-ctx.Done():
		return ctx.Err()
	case <-w.expired:
	case <-quiet.C:
	}
	w.announce.Do(func() {
		if w.log != nil {
			w.log.Info("waiting for the kernel random number generator (crng init) to generate SSH host keys; virtio-rng or a CPU with RDRAND avoids this wait",
				"timeout", w.timeout.String())
		}
	})
	select {
	case <-w.done:
		return w.result()
	case <-w.expired:
		// A read that returned at the same moment still counts.
		select {
		case <-w.done:
			return w.result()
		default:
		}
		return fmt.Errorf("waited %s: %w", w.timeout, ErrNoEntropy)
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (w *EntropyWaiter) result() error {
	if w.err != nil {
		return fmt.Errorf("reading the kernel random number generator: %w: %w", w.err, ErrNoEntropy)
	}
	return nil
}

// HostKeyPool generates host keys in the background once entropy is
// ready, so the ssh module finds them made. A kind asked for but never
// started is started then. The zero value is not usable; use NewHostKeyPool.
type HostKeyPool struct {
	entropy Entropy
	gen     func(kind string) (crypto.Signer, error)
	mu      sync.Mutex
	keys    map[string]*pendingKey
	cpu     time.Duration // CPU time the finished generations used
	made    int           // keys generated
}

type pendingKey struct {
	done chan struct{}
	key  crypto.Signer
	err  error
}

// NewHostKeyPool returns a pool whose keys wait for entropy (nil: the RNG
// is taken as ready) and are made by gen (nil: cloud-init's key types and
// sizes).
func NewHostKeyPool(entropy Entropy, gen func(kind string) (crypto.Signer, error)) *HostKeyPool {
	if gen == nil {
		gen = func(kind string) (crypto.Signer, error) { return generateHostKey(kind) }
	}
	return &HostKeyPool{entropy: entropy, gen: gen, keys: map[string]*pendingKey{}}
}

// Start begins generating one key of each kind not started yet.
func (p *HostKeyPool) Start(kinds ...string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, kind := range kinds {
		if _, ok := p.keys[kind]; ok {
			continue
		}
		pk := &pendingKey{done: make(chan struct{})}
		p.keys[kind] = pk
		go func() {
			defer close(pk.done)
			if p.entropy != nil {
				if err := p.entropy.Wait(context.Background()); err != nil {
					pk.err = err
					return
				}
			}
			// The generation's own thread CPU time: on a one-CPU guest,
			// what the background keys took from everything else.
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			c0 := threadCPU()
			pk.key, pk.err = p.gen(kind)
			used := threadCPU() - c0
			p.mu.Lock()
			p.cpu += used
			if pk.err == nil {
				p.made++
			}
			p.mu.Unlock()
		}()
	}
}

// GenerationCPU is the CPU time the pool's finished key generations used
// (0 where the platform does not measure it) and how many keys they made.
func (p *HostKeyPool) GenerationCPU() (time.Duration, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cpu, p.made
}

// HostKey implements modules.HostKeySource. Each key is handed out once;
// asking again for a kind starts a new one.
func (p *HostKeyPool) HostKey(ctx context.Context, kind string) (crypto.Signer, error) {
	p.Start(kind)
	p.mu.Lock()
	pk := p.keys[kind]
	p.mu.Unlock()
	if p.entropy != nil {
		// Says on the console what is waited for, with the bound.
		if err := p.entropy.Wait(ctx); err != nil {
			return nil, err
		}
	}
	select {
	case <-pk.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	p.mu.Lock()
	if p.keys[kind] == pk {
		delete(p.keys, kind)
	}
	p.mu.Unlock()
	return pk.key, pk.err
}

// directKeys generates each key when asked, blocking on the RNG.
type directKeys struct{}

func (directKeys) HostKey(_ context.Context, kind string) (crypto.Signer, error) {
	return generateHostKey(kind)
}

// GenerateDeferredHostKeys generates the keys a deferral left to the booted
// root, writing the files and console output the ssh module would have.
func GenerateDeferredHostKeys(ctx context.Context, c *modules.Context, d modules.HostKeyDeferral) error {
	cc := *c
	cc.DeferHostKeys = nil
	return generateHostKeys(ctx, &cc, d.Types, d.Quiet)
}

// keygenReport is what `ssh-keygen -t TYPE -N "" -f FILE` prints on
// stdout, which cloud-init's ssh module copies to its output unless
// ssh_quiet_keygen: the files, the SHA256 fingerprint with the comment and
// the randomart image.
func keygenReport(w io.Writer, kind, keyfile, comment string, pub ssh.PublicKey) {
	fmt.Fprintf(w, "Generating public/private %s key pair.\n", kind)
	fmt.Fprintf(w, "Your identification has been saved in %s\n", keyfile)
	fmt.Fprintf(w, "Your public key has been saved in %s.pub\n", keyfile)
	fmt.Fprintf(w, "The key fingerprint is:\n%s %s\n", ssh.FingerprintSHA256(pub), comment)
	fmt.Fprintf(w, "The key's randomart image is:\n%s", randomArt(pub))
}

// randomArt is OpenSSH's "drunken bishop" picture of the key's SHA256
// digest (sshkey_fingerprint_randomart), framed with the key type and size.
func randomArt(pub ssh.PublicKey) string {
	const (
		cols  = 17
		rows  = 9
		chars = " .o+=*BOX@%&#/^SE"
	)
	sum := sha256.Sum256(pub.Marshal())
	var field [cols][rows]int
	x, y := cols/2, rows/2
	for _, b := range sum {
		for i := 0; i < 4; i++ {
			if b&1 != 0 {
				x++
			} else {
				x--
			}
			if b&2 != 0 {
				y++
			} else {
				y--
			}
			x = max(0, min(x, cols-1))
			y = max(0, min(y, rows-1))
			if field[x][y] < len(chars)-3 {
				field[x][y]++
			}
			b >>= 2
		}
	}
	field[cols/2][rows/2] = len(chars) - 2 // S
	field[x][y] = len(chars) - 1           // E
	var sb strings.Builder
	sb.WriteString(frame(fmt.Sprintf("[%s %d]", keyTypeName(pub), keyBits(pub)), cols) + "\n")
	for r := 0; r < rows; r++ {
		sb.WriteByte('|')
		for c := 0; c < cols; c++ {
			sb.WriteByte(chars[field[c][r]])
		}
		sb.WriteString("|\n")
	}
	sb.WriteString(frame("[SHA256]", cols) + "\n")
	return sb.String()
}

// frame centres title in a +---...---+ line of width cols+2.
func frame(title string, cols int) string {
	if len(title) > cols {
		title = title[:cols]
	}
	left := (cols - len(title)) / 2
	return "+" + strings.Repeat("-", left) + title + strings.Repeat("-", cols-len(title)-left) + "+"
}

// keyTypeName is sshkey_type: RSA, ECDSA, ED25519.
func keyTypeName(pub ssh.PublicKey) string {
	switch pub.Type() {
	case ssh.KeyAlgoRSA:
		return "RSA"
	case ssh.KeyAlgoED25519:
		return "ED25519"
	case ssh.KeyAlgoECDSA256, ssh.KeyAlgoECDSA384, ssh.KeyAlgoECDSA521:
		return "ECDSA"
	}
	return strings.ToUpper(pub.Type())
}

// keyBits is sshkey_size.
func keyBits(pub ssh.PublicKey) int {
	switch pub.Type() {
	case ssh.KeyAlgoED25519:
		return 256
	case ssh.KeyAlgoECDSA256:
		return 256
	case ssh.KeyAlgoECDSA384:
		return 384
	case ssh.KeyAlgoECDSA521:
		return 521
	}
	if ck, ok := pub.(ssh.CryptoPublicKey); ok {
		if rk, ok := ck.CryptoPublicKey().(interface{ Size() int }); ok {
			return rk.Size() * 8
		}
	}
	return 0
}

// Slow host keys in the background.
//
// RSA 3072 costs seconds of CPU (more under emulation), ed25519 and ECDSA
// milliseconds. When the configuration asks for a fast type, the
// initramfs's ssh module makes the fast ones and leaves the slow ones to
// BackgroundHostKeysUnit in the booted root (HostKeysBackgroundMarker): it
// is ordered after sshd (never before it) and before the final stage, makes
// the keys with the target's ssh-keygen (Go's generator when it has none)
// and reloads sshd, so sshd starts with ed25519/ECDSA and serves RSA
// seconds later, and final's keys_to_console lists every key as
// cloud-init's does. Only a target whose systemd enables the unit
// (BackgroundHostKeysEnabled) gets this; elsewhere every key is made in
// the initramfs as before.

// HostKeysBackgroundMarker lists (a modules.HostKeyDeferral as JSON) the
// slow key types the booted root is to generate after sshd started.
const HostKeysBackgroundMarker = state.RunDir + "/cloudroot/hostkeys-background"

// BackgroundHostKeysUnit is the systemd unit that runs `cloudroot hostkeys
// --background`.
const BackgroundHostKeysUnit = "cloudroot-hostkeys-background.service"

// slowHostKey reports whether kind takes seconds to generate.
func slowHostKey(kind string) bool { return kind == "rsa" }

// SplitHostKeyTypes splits ssh_genkeytypes into those to generate now and
// the slow ones to leave to the booted root: nothing is left when no fast
// type is asked for (sshd would have no key to start with).
func SplitHostKeyTypes(types []string) (now, later []string) {
	if !slices.ContainsFunc(types, func(k string) bool { return !slowHostKey(k) }) {
		return types, nil
	}
	for _, k := range types {
		if slowHostKey(k) {
			later = append(later, k)
		} else {
			now = append(now, k)
		}
	}
	return now, later
}

// BackgroundHostKeysEnabled reports whether root's systemd runs
// BackgroundHostKeysUnit at boot (`cloudroot install` enables it).
func BackgroundHostKeysEnabled(root *target.Root) bool {
	for _, dir := range []string{"multi-user.target.wants", "ssh.service.wants", "sshd.service.wants"} {
		if _, err := root.Lstat(path.Join("/etc/systemd/system", dir, BackgroundHostKeysUnit)); err == nil {
			return true
		}
	}
	return false
}

// GenerateBackgroundHostKeys makes the keys d lists that are still
// missing with Go's generator, writing the files and output the ssh module
// would have. Not the target's ssh-keygen (what cloud-init runs): Go 1.26's
// RSA 3072 is about 3.5 times faster than OpenSSL's ssh-keygen both natively
// and under TCG (0.22 against 0.77 s a key on the host, 1.2 against 4.4 s
// in qemu-x86_64 -cpu qemu64), and on a one-vCPU guest those seconds sit
// between sshd and the final stage.
func GenerateBackgroundHostKeys(ctx context.Context, c *modules.Context, d modules.HostKeyDeferral) error {
	cc := *c
	cc.DeferHostKeys, cc.BackgroundHostKeys = nil, nil
	return writeHostKeys(ctx, &cc, directKeys{}, d.Types, d.Quiet)
}

// sshdUnits are the names sshd's systemd unit goes by (Debian's ssh,
// everyone else's sshd).
var sshdUnits = []string{"ssh.service", "sshd.service"}

// ReloadSSHD has a running sshd re-read its host keys (systemd's
// try-reload-or-restart: nothing when sshd is not started yet, which then
// reads them when it starts). Only on the booted system under systemd.
func ReloadSSHD(ctx context.Context, c *modules.Context) error {
	if !c.Booted || !c.Root.Exists("/run/systemd/system") {
		return nil
	}
	for _, u := range sshdUnits {
		for _, dir := range []string{"/etc/systemd/system", "/usr/lib/systemd/system", "/lib/systemd/system"} {
			if _, err := c.Root.Lstat(path.Join(dir, u)); err != nil {
				continue
			}
			ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
			defer cancel()
			if r, err := c.RunCapture(ctx, "systemctl", "try-reload-or-restart", u); err != nil {
				return fmt.Errorf("reloading %s: %w: %s", u, err, strings.TrimSpace(r.Stderr))
			}
			return nil
		}
	}
	return nil
}
