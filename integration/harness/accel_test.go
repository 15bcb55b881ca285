package harness

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestProberChoose(t *testing.T) {
	dir := t.TempDir()
	dev := filepath.Join(dir, "kvm")
	if err := os.WriteFile(dev, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	kernel := filepath.Join(dir, "vmlinux")
	if err := os.WriteFile(kernel, []byte("k"), 0o644); err != nil {
		t.Fatal(err)
	}
	noEnv := func(string) string { return "" }
	tests := []struct {
		name     string
		env      string
		device   string
		probeOK  bool
		probeWhy string
		want     string
		wantWhy  string
		probes   int
	}{
		{name: "forced tcg", env: "tcg", device: dev, want: AccelTCG, wantWhy: "CLOUDROOT_ACCEL=tcg"},
		{name: "forced kvm", env: "kvm", device: dev, want: AccelKVM, wantWhy: "CLOUDROOT_ACCEL=kvm"},
		{name: "no device", device: filepath.Join(dir, "absent"), want: AccelTCG, wantWhy: "no usable"},
		{name: "probe hangs", device: dev, probeWhy: "hung at kernel entry after 8s", want: AccelTCG, wantWhy: "kvm probe: hung at kernel entry after 8s", probes: 1},
		{name: "probe works", device: dev, probeOK: true, probeWhy: "kernel banner after 0.3s", want: AccelKVM, wantWhy: "kvm probe: kernel banner", probes: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			probes := 0
			p := &Prober{
				CacheDir:  t.TempDir(),
				KVMDevice: tt.device,
				Getenv:    func(k string) string { return map[string]string{AccelEnv: tt.env}[k] },
				Probe: func(ctx context.Context, k string, timeout time.Duration) (bool, string) {
					probes++
					return tt.probeOK, tt.probeWhy
				},
			}
			for range 2 {
				a := p.Choose(context.Background(), kernel)
				if a.Name != tt.want || !strings.Contains(a.Why, tt.wantWhy) {
					t.Errorf("Choose = %s, want %s (%s)", a, tt.want, tt.wantWhy)
				}
				if got := strings.Join(a.Args(), " "); got != "-accel "+tt.want {
					t.Errorf("Args = %q", got)
				}
			}
			if probes != tt.probes {
				t.Errorf("%d probe boots, want %d (the answer is kept for the process)", probes, tt.probes)
			}
			if tt.probes == 0 {
				return
			}
			// Another process of the same run reads the cache file.
			q := &Prober{CacheDir: p.CacheDir, KVMDevice: tt.device, Getenv: noEnv,
				Probe: func(context.Context, string, time.Duration) (bool, string) {
					t.Error("probed again despite the cache file")
					return false, ""
				}}
			if a := q.Choose(context.Background(), kernel); a.Name != tt.want || !strings.HasSuffix(a.Why, ", cached") {
				t.Errorf("cached Choose = %s", a)
			}
			// A different kernel is probed afresh.
			if err := os.WriteFile(kernel, []byte("other kernel"), 0o644); err != nil {
				t.Fatal(err)
			}
			probes = 0
			p.cache = nil
			p.Choose(context.Background(), kernel)
			if probes != 1 {
				t.Errorf("changed kernel: %d probes, want 1", probes)
			}
		})
	}
}

func TestAccelArgs(t *testing.T) {
	o := BootOptions{Kernel: "/k", Initramfs: "/i", Disk: "/d", Accel: AccelKVM, CPU: "default", NoRNG: true, Machine: "pc"}
	args, err := o.Args()
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Join(args, " ")
	if !strings.HasPrefix(s, QEMU+" -accel kvm -machine pc ") || strings.Contains(s, "-cpu") || strings.Contains(s, "virtio-rng") {
		t.Errorf("args = %s", s)
	}
	o.Accel = "hvf"
	if _, err := o.Args(); err == nil {
		t.Error("unknown accelerator accepted")
	}
}
