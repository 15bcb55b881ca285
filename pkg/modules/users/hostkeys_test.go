package users

import (
	"bytes"
	"context"
	"crypto"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/cloudroot/cloudroot/pkg/modules"
	"github.com/cloudroot/cloudroot/pkg/modules/internal/famtest"
	"github.com/cloudroot/cloudroot/pkg/modules/internal/modtest"
)

// fakeEntropy is an entropy source whose answer the test decides.
type fakeEntropy struct{ err error }

func (f fakeEntropy) Wait(context.Context) error { return f.err }

func TestEntropyWaiter(t *testing.T) {
	tests := []struct {
		name    string
		readFor time.Duration // how long the blocking read takes
		readErr error
		timeout time.Duration
		wantErr error
	}{
		{"ready before the bound", time.Second, nil, 20 * time.Second, nil},
		{"ready at once", 0, nil, time.Second, nil},
		{"not ready in time", time.Minute, nil, 20 * time.Second, ErrNoEntropy},
		{"read fails", time.Second, errors.New("ENOSYS"), 20 * time.Second, ErrNoEntropy},
		{"zero bound defers unless already ready", time.Second, nil, 0, ErrNoEntropy},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := NewEntropyWaiter(func() error {
					time.Sleep(tt.readFor)
					return tt.readErr
				}, tt.timeout, nil)
				err := w.Wait(context.Background())
				if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
					t.Fatalf("Wait = %v, want %v", err, tt.wantErr)
				}
				if err == nil && (!w.Ready() || w.Elapsed() != tt.readFor) {
					t.Errorf("Ready=%v Elapsed=%v, want true %v", w.Ready(), w.Elapsed(), tt.readFor)
				}
				// Let the read finish so the bubble ends.
				time.Sleep(tt.readFor)
			})
		})
	}
}

func TestHostKeyPoolStartsOnceEntropyReady(t *testing.T) {
	var made atomic.Int32
	gen := func(kind string) (crypto.Signer, error) {
		made.Add(1)
		return generateHostKey("ed25519")
	}
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		w := NewEntropyWaiter(func() error { <-release; return nil }, time.Minute, nil)
		p := NewHostKeyPool(w, gen)
		p.Start("rsa", "ed25519", "rsa")
		synctest.Wait()
		if n := made.Load(); n != 0 {
			t.Fatalf("%d keys made before entropy was ready", n)
		}
		close(release)
		synctest.Wait()
		if n := made.Load(); n != 2 {
			t.Fatalf("%d keys made after entropy, want 2 (one per kind)", n)
		}
		if _, err := p.HostKey(context.Background(), "rsa"); err != nil {
			t.Fatal(err)
		}
		// Handed out once: a second ask makes a new one.
		if _, err := p.HostKey(context.Background(), "rsa"); err != nil || made.Load() != 3 {
			t.Fatalf("second key: %v, made %d", err, made.Load())
		}
	})
}

// TestHostKeysDeferral: the deferral decision with a fake entropy source.
func TestHostKeysDeferral(t *testing.T) {
	useCachedHostKeys(t)
	tests := []struct {
		name       string
		entropy    error
		canDefer   bool
		cfg        modules.Config
		wantKeys   bool
		wantDefer  []string
		wantErrSub string
		reason     string
	}{
		{name: "entropy ready: keys written", canDefer: true, wantKeys: true},
		{name: "no entropy: deferred", entropy: ErrNoEntropy, canDefer: true, wantDefer: DefaultGenKeyTypes},
		{name: "no entropy, configured types", entropy: ErrNoEntropy, canDefer: true,
			cfg: modules.Config{"ssh_genkeytypes": []any{"ed25519"}, "ssh_quiet_keygen": true}, wantDefer: []string{"ed25519"}},
		{name: "deferred by the boot", entropy: DeferAll{Reason: "cloudroot.hostkeys=defer"}.Wait(context.Background()), canDefer: true, wantDefer: DefaultGenKeyTypes, reason: "cloudroot.hostkeys=defer"},
		{name: "no entropy and nobody to defer to: an error", entropy: ErrNoEntropy, wantErrSub: "not initialised"},
		{name: "given keys need no entropy", entropy: ErrNoEntropy, canDefer: true,
			cfg: modules.Config{"ssh_keys": map[string]any{"ed25519_private": testK1Priv}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.reason == "" {
				tt.reason = "not initialised"
			}
			cfg := modules.Config{"users": []any{}, "disable_root": false}
			for k, v := range tt.cfg {
				cfg[k] = v
			}
			r := modtest.AccountsRoot(t, "")
			c, _ := famtest.Accounts(t, r, cfg, nil)
			var out bytes.Buffer
			c.Out = &out
			c.HostKeys = NewHostKeyPool(fakeEntropy{tt.entropy}, nil)
			var got *modules.HostKeyDeferral
			if tt.canDefer {
				c.DeferHostKeys = func(d modules.HostKeyDeferral) error { got = &d; return nil }
			}
			err := SSH.Run(context.Background(), c)
			if tt.wantErrSub != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErrSub) {
					t.Fatalf("err = %v, want %q", err, tt.wantErrSub)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			keys, _ := r.Glob("/etc/ssh/ssh_host_*_key")
			if tt.wantKeys != (len(keys) == len(DefaultGenKeyTypes)) {
				t.Errorf("keys = %v, want generated: %v", keys, tt.wantKeys)
			}
			switch {
			case tt.wantDefer == nil && got != nil:
				t.Errorf("deferred %+v, want nothing deferred", *got)
			case tt.wantDefer != nil && got == nil:
				t.Errorf("nothing deferred, want %v", tt.wantDefer)
			case tt.wantDefer != nil:
				if strings.Join(got.Types, ",") != strings.Join(tt.wantDefer, ",") || got.Quiet != modtest.Typed[sshConfig](cfg).QuietKeygen || !strings.Contains(got.Reason, tt.reason) {
					t.Errorf("deferred %+v, want types %v", *got, tt.wantDefer)
				}
				if len(keys) != 0 {
					t.Errorf("keys written although deferred: %v", keys)
				}
			}
		})
	}
}

// TestDeferredHostKeysFiles: the agent's generation writes the files, modes
// and console output the ssh module writes in the initramfs.
func TestDeferredHostKeysFiles(t *testing.T) {
	useCachedHostKeys(t)
	r := modtest.AccountsRoot(t, "")
	c, _ := famtest.Accounts(t, r, modules.Config{}, nil)
	var out bytes.Buffer
	c.Out = &out
	if err := GenerateDeferredHostKeys(context.Background(), c, modules.HostKeyDeferral{Types: []string{"rsa", "ecdsa", "ed25519"}}); err != nil {
		t.Fatal(err)
	}
	for _, kind := range DefaultGenKeyTypes {
		p := "/etc/ssh/ssh_host_" + kind + "_key"
		if m := famtest.Mode(t, c, p).Perm(); m != 0o600 {
			t.Errorf("%s mode %v, want 0600", p, m)
		}
		if m := famtest.Mode(t, c, p+".pub").Perm(); m != 0o644 {
			t.Errorf("%s.pub mode %v, want 0644", p, m)
		}
		signer, err := ssh.ParsePrivateKey([]byte(famtest.ReadFile(t, c, p)))
		if err != nil {
			t.Fatal(err)
		}
		pub, comment, _, _, err := ssh.ParseAuthorizedKey([]byte(famtest.ReadFile(t, c, p+".pub")))
		if err != nil || comment != "root@debian" || !bytes.Equal(pub.Marshal(), signer.PublicKey().Marshal()) {
			t.Errorf("%s.pub: comment %q err %v", p, comment, err)
		}
		want := "Your identification has been saved in " + p + "\n"
		if !strings.Contains(out.String(), want) || !strings.Contains(out.String(), ssh.FingerprintSHA256(pub)+" root@debian\n") {
			t.Errorf("output lacks %s's report:\n%s", kind, out.String())
		}
	}
	// Existing keys are left alone.
	before := famtest.ReadFile(t, c, "/etc/ssh/ssh_host_rsa_key")
	out.Reset()
	if err := GenerateDeferredHostKeys(context.Background(), c, modules.HostKeyDeferral{Types: []string{"rsa"}}); err != nil {
		t.Fatal(err)
	}
	if famtest.ReadFile(t, c, "/etc/ssh/ssh_host_rsa_key") != before || out.Len() != 0 {
		t.Error("an existing key was regenerated")
	}
	// Quiet: no report.
	if err := r.Remove("/etc/ssh/ssh_host_rsa_key"); err != nil {
		t.Fatal(err)
	}
	if err := GenerateDeferredHostKeys(context.Background(), c, modules.HostKeyDeferral{Types: []string{"rsa"}, Quiet: true}); err != nil || out.Len() != 0 {
		t.Errorf("quiet: err %v output %q", err, out.String())
	}
}

// TestKeygenReportMatchesSSHKeygen compares the report with ssh-keygen's
// own output for the same key.
func TestKeygenReportMatchesSSHKeygen(t *testing.T) {
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Skip("ssh-keygen not installed")
	}
	for _, kind := range []string{"rsa", "ecdsa", "ed25519"} {
		t.Run(kind, func(t *testing.T) {
			f := filepath.Join(t.TempDir(), "ssh_host_"+kind+"_key")
			cmd := exec.Command("ssh-keygen", "-q", "-t", kind, "-N", "", "-C", "root@test", "-f", f)
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("ssh-keygen: %v: %s", err, b)
			}
			b, err := exec.Command("ssh-keygen", "-lv", "-f", f+".pub").Output()
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := os.ReadFile(f + ".pub")
			pub, _, _, _, err := ssh.ParseAuthorizedKey(raw)
			if err != nil {
				t.Fatal(err)
			}
			// ssh-keygen -lv: "<bits> SHA256:... comment (TYPE)\n<randomart>".
			_, art, _ := strings.Cut(string(b), "\n")
			if got := randomArt(pub); got != art {
				t.Errorf("randomart:\n%s\nssh-keygen:\n%s", got, art)
			}
			var rep bytes.Buffer
			keygenReport(&rep, kind, f, "root@test", pub)
			if !strings.Contains(rep.String(), "Generating public/private "+kind+" key pair.\n") ||
				!strings.Contains(rep.String(), "The key fingerprint is:\n"+ssh.FingerprintSHA256(pub)+" root@test\nThe key's randomart image is:\n"+art) {
				t.Errorf("report:\n%s", rep.String())
			}
		})
	}
}

// TestHostKeyPoolGenerationCPU: the pool adds up the CPU time of the
// generations that finished and counts the keys made (failures count
// their CPU, not a key).
func TestHostKeyPoolGenerationCPU(t *testing.T) {
	gen := func(kind string) (crypto.Signer, error) {
		if kind == "dsa" {
			return nil, errors.New("unsupported")
		}
		// Burn some CPU on this thread, as a real generation does.
		x := 0
		for i := range 20_000_000 {
			x ^= i * 31
		}
		_ = x
		return generateHostKey("ed25519")
	}
	p := NewHostKeyPool(nil, gen)
	if cpu, n := p.GenerationCPU(); cpu != 0 || n != 0 {
		t.Fatalf("before any key: %v, %d", cpu, n)
	}
	p.Start("rsa", "ecdsa", "dsa")
	for _, k := range []string{"rsa", "ecdsa"} {
		if _, err := p.HostKey(context.Background(), k); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.HostKey(context.Background(), "dsa"); err == nil {
		t.Fatal("dsa: want the generator's error")
	}
	cpu, n := p.GenerationCPU()
	if n != 2 {
		t.Errorf("keys made = %d, want 2", n)
	}
	if runtime.GOOS == "linux" && cpu <= 0 {
		t.Errorf("generation CPU = %v, want > 0 on Linux", cpu)
	}
}
