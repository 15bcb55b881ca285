package cli

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/cloudroot/cloudroot/pkg/cilog"
	"github.com/cloudroot/cloudroot/pkg/netup"
	"github.com/cloudroot/cloudroot/pkg/stages"
	"github.com/cloudroot/cloudroot/pkg/state"
	"github.com/cloudroot/cloudroot/pkg/target"
)

// inRootFixture is a root with no hand-off state: /etc/cloud/cloud.cfg
// with datasource_list, accounts, and the given files.
func inRootFixture(t *testing.T, dsList string, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	all := map[string]string{
		// No config or final modules: they would run the host's apt-get.
		"etc/cloud/cloud.cfg": "datasource_list: [" + dsList + "]\ncloud_config_modules: []\ncloud_final_modules: []\n",
		"etc/passwd":          "root:x:0:0:root:/root:/bin/sh\n",
		"etc/group":           "root:x:0:\n",
		"etc/shadow":          "root:*:19000:0:99999:7:::\n",
		"etc/os-release":      "ID=debian\nVERSION_ID=\"12\"\n",
	}
	for k, v := range files {
		all[k] = v
	}
	for p, c := range all {
		hp := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(hp), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(hp, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestSingleWithoutState: `single` in a chroot where no initramfs ran
// finds the configured datasource (None) itself and runs the module; it
// failed with "Failed to fetch your datasource" before the in-root mode.
func TestSingleWithoutState(t *testing.T) {
	root := inRootFixture(t, "None", nil)
	f := filepath.Join(t.TempDir(), "f.yaml")
	os.WriteFile(f, []byte("write_files: [{path: /etc/from-single, content: hello}]\n"), 0o644)
	env, _, errb := newTestEnv(root)
	rc := Run(context.Background(), env, []string{"single", "--name", "write_files", "--frequency", "always", "--file", f})
	if rc != 0 {
		t.Fatalf("single: exit %d: %s", rc, errb.String())
	}
	if b, err := os.ReadFile(filepath.Join(root, "etc/from-single")); err != nil || string(b) != "hello" {
		t.Errorf("/etc/from-single = %q, %v", b, err)
	}
	s, err := state.Unmarshal(mustRead(t, filepath.Join(root, state.StateFile)))
	if err != nil {
		t.Fatal(err)
	}
	if s.Mode != stages.ModeInRoot || !strings.Contains(s.Datasource.Description, "None") {
		t.Errorf("state: mode %q datasource %q", s.Mode, s.Datasource.Description)
	}
	// single leaves status.json alone, as 26.x's does.
	if _, err := os.Stat(filepath.Join(root, state.StatusFile)); err == nil {
		t.Error("single wrote status.json")
	}
}

// TestInitLocalWithoutState: `init --local` then `modules --mode config`
// in a root with a NoCloud seed directory and no hand-off state (a
// container, a chroot) provisions from the seed through the same steps
// as the initramfs, and status --long says the stages ran in the root.
func TestInitLocalWithoutState(t *testing.T) {
	root := inRootFixture(t, "NoCloud, None", map[string]string{
		"var/lib/cloud/seed/nocloud/meta-data": "instance-id: iid-inroot\nlocal-hostname: inroot\n",
		"var/lib/cloud/seed/nocloud/user-data": "#cloud-config\nwrite_files: [{path: /etc/seeded, content: seeded}]\nruncmd: [[true]]\n",
	})
	env, out, errb := newTestEnv(root)
	if rc := Run(context.Background(), env, []string{"init", "--local"}); rc != 0 {
		t.Fatalf("init --local: exit %d\nstdout: %s\nstderr: %s\nlog: %s", rc, out, errb, mustRead(t, filepath.Join(root, state.LogFile)))
	}
	if !strings.Contains(out.String(), "iid-inroot") {
		t.Errorf("init --local said: %s", out)
	}
	if b, err := os.ReadFile(filepath.Join(root, "etc/seeded")); err != nil || string(b) != "seeded" {
		t.Errorf("/etc/seeded = %q, %v", b, err)
	}
	if _, err := os.Lstat(filepath.Join(root, "var/lib/cloud/instance")); err != nil {
		t.Errorf("instance link: %v", err)
	}
	// The network stage finds this boot's state now and does not search
	// again: the init modules' semaphores hold.
	env, out, errb = newTestEnv(root)
	if rc := Run(context.Background(), env, []string{"init"}); rc != 0 {
		t.Errorf("init after init --local: exit %d: %s %s", rc, out, errb)
	}
	// ... nor runs the init modules a second time this boot (bootcmd and
	// the other always-frequency modules ran twice: TestDebianInRoot).
	if !strings.Contains(out.String(), "ran the init stage for this boot already") {
		t.Errorf("init after an in-root init --local ran the init stage again: %s", out)
	}
	env, out, errb = newTestEnv(root)
	if rc := Run(context.Background(), env, []string{"modules", "--mode", "config"}); rc != 0 {
		t.Errorf("modules --mode config: exit %d: %s %s", rc, out, errb)
	}
	env, out, _ = newTestEnv(root)
	Run(context.Background(), env, []string{"status", "--long"})
	if !strings.Contains(out.String(), "in-root") {
		t.Errorf("status --long does not say the mode:\n%s", out)
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestInitLocalEphemeralDHCP: `init --local` without a hand-off state,
// whose datasource needs the network (NoCloud's seedfrom URL, as an IMDS
// would) before the system's network is up, brings an ephemeral lease up
// once through stages.EphemeralNet (the initramfs's), asks the source
// over it and releases it when the stage is done; with the system's
// network up it asks over that and brings nothing up. Before, the local
// stage left network sources to the network stage.
func TestInitLocalEphemeralDHCP(t *testing.T) {
	srv := httptest.NewServer(http.FileServerFS(fstest.MapFS{
		"meta-data": {Data: []byte("instance-id: iid-imds\nlocal-hostname: fromimds\n")},
		"user-data": {Data: []byte("#cloud-config\nwrite_files: [{path: /etc/from-imds, content: imds}]\n")},
	}))
	defer srv.Close()
	for _, tc := range []struct {
		name      string
		systemNet bool
		brings    int
	}{
		{name: "system network down: ephemeral lease", brings: 1},
		{name: "system network up: asked over it", systemNet: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := inRootFixture(t, "NoCloud, None", map[string]string{
				"proc/cmdline": "root=/dev/vda1 ds=nocloud;s=" + srv.URL + "/\n",
			})
			env, out, errb := newTestEnv(root)
			r, _ := target.New(root)
			var logBuf strings.Builder
			log := slog.New(cilog.NewHandler(&logBuf, cilog.Options{Level: slog.LevelDebug}))
			brings := 0
			b, found := runInRoot(context.Background(), env, inRootOptions{
				Stage: inRootLocal, Root: r, Log: log, Out: io.Discard, NoDevices: true,
				SystemNetUp: func() bool { return tc.systemNet },
				Bring: func(context.Context) (*netup.Lease, error) {
					brings++
					return &netup.Lease{Iface: "eth0", Proto: netup.ProtoDHCP, Addr: netip.MustParsePrefix("10.0.2.15/24")}, nil
				},
			})
			if !found || b.State.InstanceID != "iid-imds" {
				t.Fatalf("found %v, instance %q\nstdout %s stderr %s\nlog:\n%s", found, b.State.InstanceID, out, errb, logBuf.String())
			}
			if brings != tc.brings {
				t.Errorf("ephemeral network brought up %d times, want %d", brings, tc.brings)
			}
			if got := b.State.Datasource.Description; !strings.Contains(got, srv.URL) {
				t.Errorf("datasource %q, want the seed URL", got)
			}
			if released := strings.Contains(logBuf.String(), "ephemeral network released"); released != (tc.brings > 0) {
				t.Errorf("released %v, want %v:\n%s", released, tc.brings > 0, logBuf.String())
			}
			if b, err := os.ReadFile(filepath.Join(root, "etc/from-imds")); err != nil || string(b) != "imds" {
				t.Errorf("/etc/from-imds = %q, %v", b, err)
			}
		})
	}
}
