package pkgmgr

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cloudroot/cloudroot/pkg/distro"
	"github.com/cloudroot/cloudroot/pkg/internal/golden"
	"github.com/cloudroot/cloudroot/pkg/modules"
	"github.com/cloudroot/cloudroot/pkg/modules/internal/modtest"
	"github.com/cloudroot/cloudroot/pkg/target"
)

// aptFake records commands (with their stdin and added environment) and
// answers the ones apt_configure reads: dpkg's architecture, gpg's
// dearmoured and exported keys, dpkg-query's package list.
type aptFake struct {
	log bytes.Buffer
}

func (f *aptFake) Run(ctx context.Context, root string, cmd target.Cmd) error {
	fmt.Fprintf(&f.log, "$ %s", strings.Join(cmd.Argv, " "))
	for _, e := range cmd.Env {
		if strings.HasPrefix(e, "GNUPGHOME=") || strings.HasPrefix(e, "DEBIAN_FRONTEND=") {
			fmt.Fprintf(&f.log, " [%s]", e)
		}
	}
	var in []byte
	if cmd.Stdin != nil {
		in, _ = io.ReadAll(cmd.Stdin)
		fmt.Fprintf(&f.log, " <<< %q", in)
	}
	f.log.WriteString("\n")
	out := cmd.Stdout
	if out == nil {
		out = io.Discard
	}
	switch strings.Join(cmd.Argv, " ") {
	case "dpkg --print-architecture":
		fmt.Fprintln(out, "amd64")
	case "gpg --dearmor":
		fmt.Fprintf(out, "DEARMORED(%s)", bytes.TrimSpace(in))
	case "dpkg-query --list":
		fmt.Fprint(out, "Desired=Unknown/Install/Remove/Purge/Hold\n||/ Name Version Architecture Description\n+++-====\nii  cloud-init 26.1 all init\nii  the-package 1 all x\nrc  gone 1 all removed\n")
	}
	if len(cmd.Argv) == 4 && cmd.Argv[1] == "--export" {
		// The throwaway keyring holds a key once it was received.
		if strings.Contains(f.log.String(), "--recv-keys "+cmd.Argv[3]) {
			fmt.Fprintf(out, "ARMOURED(%s)", cmd.Argv[3])
		}
	}
	return nil
}

var aptFamilies = []struct {
	name, osRelease string
}{
	{"debian12", "ID=debian\nVERSION_ID=\"12\"\nVERSION_CODENAME=bookworm\n"},
	{"debian13", "ID=debian\nVERSION_ID=\"13\"\nVERSION_CODENAME=trixie\n"},
	{"ubuntu2204", "ID=ubuntu\nID_LIKE=debian\nVERSION_ID=\"22.04\"\nVERSION_CODENAME=jammy\nUBUNTU_CODENAME=jammy\n"},
	{"ubuntu2404", "ID=ubuntu\nID_LIKE=debian\nVERSION_ID=\"24.04\"\nVERSION_CODENAME=noble\nUBUNTU_CODENAME=noble\n"},
}

// aptTarget is a Debian-family root with apt-get and gpg, an old
// sources.list, cached lists of Ubuntu's archive and a dpkg snippet.
func aptTarget(t *testing.T, osRelease string, cfg modules.Config) (*modules.Context, *aptFake, *[]string) {
	t.Helper()
	dir := t.TempDir()
	for p, s := range map[string]string{
		"etc/os-release":                    osRelease,
		"usr/bin/apt-get":                   "",
		"usr/bin/gpg":                       "",
		"usr/bin/gpgconf":                   "",
		"etc/apt/sources.list":              "deb http://old.example/debian old main\n",
		"etc/cloud/cloud.cfg.d/90_dpkg.cfg": "datasource_list: [NoCloud]\n",
		"var/lib/apt/lists/archive.ubuntu.com_ubuntu_dists_x_Release": "cached\n",
	} {
		hp := filepath.Join(dir, p)
		os.MkdirAll(filepath.Dir(hp), 0o755)
		os.WriteFile(hp, []byte(s), 0o644)
	}
	f := &aptFake{}
	root, err := target.New(dir, target.WithRunner(f))
	if err != nil {
		t.Fatal(err)
	}
	c := &modules.Context{Root: root, Config: cfg, InstanceID: "iid-apt", Distro: distro.Detect(root.ReadFile),
		Meta: map[string]any{"local-hostname": "host.example.test"},
		Log:  slog.New(slog.DiscardHandler), Out: io.Discard, Now: func() time.Time { return time.Unix(0, 0) }}
	warns := &[]string{}
	c.Warn = func(m string) { *warns = append(*warns, m) }
	return c, f, warns
}

// dumpTree renders the files under the apt, cloud and tmp directories.
func dumpTree(t *testing.T, c *modules.Context) string {
	t.Helper()
	var b strings.Builder
	for _, top := range []string{"etc/apt", "etc/cloud", "var/lib/apt", "tmp"} {
		base := filepath.Join(c.Root.Dir(), top)
		filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			fi, _ := d.Info()
			body, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(c.Root.Dir(), p)
			fmt.Fprintf(&b, "--- /%s (%04o)\n%s", rel, fi.Mode().Perm(), body)
			if len(body) > 0 && body[len(body)-1] != '\n' {
				b.WriteString("\n[no newline at end]\n")
			}
			return nil
		})
	}
	return b.String()
}

// TestAptConfigureGolden runs testdata/apt/<case>/user-data.yaml on each
// Debian-family release and compares commands, warnings and files with
// want.<release>.txt.
func TestAptConfigureGolden(t *testing.T) {
	cases, _ := filepath.Glob("testdata/apt/*/user-data.yaml")
	if len(cases) == 0 {
		t.Fatal("no cases")
	}
	for _, ud := range cases {
		b, err := os.ReadFile(ud)
		if err != nil {
			t.Fatal(err)
		}
		for _, fam := range aptFamilies {
			t.Run(filepath.Base(filepath.Dir(ud))+"/"+fam.name, func(t *testing.T) {
				c, f, warns := aptTarget(t, fam.osRelease, yamlCfg(t, string(b)))
				if err := aptTestModule.Run(context.Background(), c); err != nil {
					fmt.Fprintf(&f.log, "error: %v\n", err)
				}
				for _, w := range *warns {
					fmt.Fprintf(&f.log, "warning: %s\n", w)
				}
				got := f.log.String() + dumpTree(t, c)
				golden.CheckString(t, filepath.Join(filepath.Dir(ud), "want."+fam.name+".txt"), got)
				// The same case run by upstream cloud-init
				// (scripts/goldens/apt-configure.py): equal but for
				// upstream's `lsb_release --all` (cloudroot reads
				// os-release) and cloudroot's warning lines.
				up, err := os.ReadFile(filepath.Join(filepath.Dir(ud), "upstream."+fam.name+".txt"))
				if err != nil {
					t.Fatalf("%v (run scripts/goldens/apt-configure.py)", err)
				}
				if d := cmp.Diff(dropLines(string(up), "$ lsb_release"), dropLines(got, "warning: ")); d != "" {
					t.Errorf("differs from upstream cloud-init (-upstream +cloudroot):\n%s", d)
				}
			})
		}
	}
}

func TestAptDecodeDeprecated(t *testing.T) {
	a, err := decodeApt(modtest.Typed[aptKeys](yamlCfg(t, "apt_mirror: http://m/\napt_proxy: http://p/\napt_ftp_proxy: ftp://f/\n")))
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Primary) != 1 || a.Primary[0].URI != "http://m/" || !cmp.Equal(a.Primary[0].Arches, []string{"default"}) {
		t.Errorf("primary %+v", a.Primary)
	}
	// cloud-init maps apt_ftp_proxy to https_proxy (and the reverse).
	if a.Proxies != [4]string{"http://p/", "", "", "ftp://f/"} {
		t.Errorf("proxies %q", a.Proxies)
	}
	want := "The following config key(s): ['apt_mirror', 'apt_proxy', 'apt_ftp_proxy'] is deprecated in 22.1 and scheduled to be removed in 27.1."
	if !cmp.Equal(a.Deprecated, []string{want}) {
		t.Errorf("notes %q", a.Deprecated)
	}
	if _, err := decodeApt(modtest.Typed[aptKeys](yamlCfg(t, "apt_proxy: http://p/\napt: {proxy: http://other/}\n"))); err == nil {
		t.Error("old and new with unequal values: no error")
	}
	if _, err := decodeApt(modtest.Typed[aptKeys](yamlCfg(t, "apt: [x]\n"))); err == nil {
		t.Error("apt as a list: no error")
	}
}

func TestDisableSuitesOneLine(t *testing.T) {
	src := "# c\ndeb http://m/ jammy main\ndeb [ arch=amd64 signed-by=/k ] http://m/ jammy-updates main\ndeb-src http://m/ jammy-security main\n"
	got := disableSuites([]string{"updates", "$RELEASE-security", "other"}, src, "jammy", func(string) bool { return false })
	want := "# c\ndeb http://m/ jammy main\n# suite disabled by cloud-init: deb [ arch=amd64 signed-by=/k ] http://m/ jammy-updates main\n# suite disabled by cloud-init: deb-src http://m/ jammy-security main\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestAptConfigureNoApt: without apt and without config, nothing happens.
func TestAptConfigureNoApt(t *testing.T) {
	c, rr, _ := testContext(t, modules.Config{}, map[string]string{"etc/os-release": "ID=debian\nVERSION_ID=12\n"})
	if err := aptTestModule.Run(context.Background(), c); err != nil || len(rr.Calls) != 0 || c.Root.Exists(AptSourcesList) {
		t.Errorf("err %v calls %q", err, rr.Calls)
	}
}

// dropLines removes the lines starting with prefix.
func dropLines(s, prefix string) string {
	var out []string
	for _, l := range strings.SplitAfter(s, "\n") {
		if !strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "")
}

// aptTestModule resolves names from a table only: no test queries DNS.
var aptTestModule = NewAptConfigure(AptOptions{LookupHost: fakeLookup})

// fakeLookup knows the names scripts/goldens/apt-configure.py's resolver
// knows; everything else does not exist.
func fakeLookup(ctx context.Context, host string) ([]string, error) {
	ips := map[string]string{
		"mirror.resolvable.test":              "192.0.2.10",
		"ubuntu-security-mirror.example.test": "192.0.2.11",
		"debian-security-mirror.example.test": "192.0.2.12",
	}
	if ip, ok := ips[host]; ok {
		return []string{ip}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// failInstall is aptFake whose `apt-get ... install` fails, as on an image
// whose mirrors are out of reach.
type failInstall struct{ aptFake }

func (f *failInstall) Run(ctx context.Context, root string, cmd target.Cmd) error {
	err := f.aptFake.Run(ctx, root, cmd)
	if cmd.Argv[0] == "apt-get" && slices.Contains(cmd.Argv, "install") {
		return errors.New("exit status 100")
	}
	return err
}

// TestAptConfigureKeyWithoutGnupg: the target has no gpg and gnupg cannot
// be installed. Inline keys are dearmored natively and the sources are
// written (cloud-init would stop the module); a keyid, which needs gpg to
// fetch, still fails the module as cloud-init's does.
func TestAptConfigureKeyWithoutGnupg(t *testing.T) {
	key := []byte("\x99\x01\x0dfake OpenPGP key packet bytes")
	armored := armorFor(key, "")
	for _, tc := range []struct {
		name    string
		source  map[string]any
		wantErr bool
	}{
		{"inline key", map[string]any{"source": "deb http://repo.example/ stable main", "key": armored}, false},
		{"keyid", map[string]any{"source": "deb http://repo.example/ stable main", "keyid": "0x1234ABCD"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := modules.Config{"apt": map[string]any{"sources": map[string]any{"local.list": tc.source}}}
			c, _, warns := aptTarget(t, aptFamilies[0].osRelease, cfg)
			if err := os.Remove(filepath.Join(c.Root.Dir(), "usr/bin/gpg")); err != nil {
				t.Fatal(err)
			}
			f := &failInstall{}
			root, err := target.New(c.Root.Dir(), target.WithRunner(f))
			if err != nil {
				t.Fatal(err)
			}
			c.Root = root
			err = aptTestModule.Run(context.Background(), c)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v; commands:\n%s", err, tc.wantErr, f.log.String())
			}
			if !strings.Contains(f.log.String(), " install gnupg") {
				t.Errorf("gnupg was not tried first:\n%s", f.log.String())
			}
			if tc.wantErr {
				return
			}
			if strings.Contains(f.log.String(), "gpg --dearmor") {
				t.Errorf("gpg ran although the target has none:\n%s", f.log.String())
			}
			got, err := c.Root.ReadFile(AptTrustedGPGDir + "local.gpg")
			if err != nil || !bytes.Equal(got, key) {
				t.Errorf("trusted.gpg.d/local.gpg = %q, %v; want the dearmored key", got, err)
			}
			if b, _ := c.Root.ReadFile(AptSourceParts + "local.list"); !strings.Contains(string(b), "deb http://repo.example/ stable main") {
				t.Errorf("local.list = %q", b)
			}
			if !slices.ContainsFunc(*warns, func(w string) bool { return strings.Contains(w, "Installing gnupg failed") }) {
				t.Errorf("warnings %q lack the gnupg one", *warns)
			}
		})
	}
}
