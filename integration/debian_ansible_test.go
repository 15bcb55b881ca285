package integration

// TestDebianAnsiblePull boots the Debian 12 image (`just debian-image`) with
// the ansible module (issue 17's QEMU acceptance):
//
//   - install_method: distro — ansible-core comes from a local signed apt
//     repository (harness.BuildAptRepo, with git for ansible-pull) that
//     apt_configure makes the image's only source;
//   - pull — ansible-pull clones (full: true, since the dumb protocol
//     cannot make the default shallow clone) a git repository served over
//     git's dumb HTTP protocol (a bare repository after `git update-server-info`,
//     served as static files on the host's 127.0.0.1 behind a guestfwd)
//     and runs its playbook, which writes a marker file.
//
// The marker and the module's result are read from the powered-off disk.

import (
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cloudroot/cloudroot/integration/harness"
)

const (
	// ansibleGitGuestIP is where the git repository is in the guest.
	ansibleGitGuestIP = "169.254.0.83"
	ansibleSuite      = "cloudroot-cm"
	ansibleIID        = "iid-debian-ansible"
	ansibleMarker     = "/var/lib/cloudroot-test/ansible-marker"
)

// ansiblePackages are what the guest installs: the module installs
// ansible-core (the distro method), ansible-pull needs git.
var ansiblePackages = []string{"ansible-core", "git"}

const ansiblePlaybook = `- hosts: localhost
  connection: local
  gather_facts: false
  tasks:
    - name: the marker's directory (runcmd runs after ansible in the final stage)
      ansible.builtin.file:
        path: /var/lib/cloudroot-test
        state: directory
        mode: "0755"
    - name: the marker cloudroot's test looks for
      ansible.builtin.copy:
        dest: ` + ansibleMarker + `
        content: "pulled by ansible {{ ansible_version.full }} from {{ playbook_dir | basename }}\n"
        mode: "0644"
`

func ansibleUserData(repo *harness.AptRepo) string {
	mirror := repo.GuestURL()
	return `#cloud-config
hostname: debansible
apt:
  primary:
    - arches: [default]
      uri: ` + mirror + `
  security:
    - arches: [default]
      uri: ` + mirror + `
  sources:
    cloudroot-cm.list:
      source: "deb ` + mirror + ` ` + ansibleSuite + ` main"
      key: |
` + indent(repo.KeyArmored, "        ") + `
packages: [git]
ansible:
  install_method: distro
  package_name: ansible-core
  pull:
    url: http://` + ansibleGitGuestIP + `/playbooks.git
    playbook_name: site.yml
    checkout: main
    full: true
power_state:
  mode: poweroff
  delay: now
  message: cloudroot TestDebianAnsiblePull powering off
  timeout: 120
`
}

// gitDumbRepo makes a bare repository holding site.yml on branch main,
// prepared for git's dumb HTTP protocol.
func gitDumbRepo(t *testing.T, dir string) string {
	t.Helper()
	work, bare := filepath.Join(dir, "work"), filepath.Join(dir, "serve", "playbooks.git")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "site.yml"), []byte(ansiblePlaybook), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "GIT_AUTHOR_NAME=cloudroot", "GIT_AUTHOR_EMAIL=test@cloudroot.invalid",
		"GIT_COMMITTER_NAME=cloudroot", "GIT_COMMITTER_EMAIL=test@cloudroot.invalid", "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	for _, argv := range [][]string{
		{"git", "-C", work, "init", "-q", "-b", "main"},
		{"git", "-C", work, "add", "site.yml"},
		{"git", "-C", work, "commit", "-q", "-m", "playbook"},
		{"git", "clone", "-q", "--bare", work, bare},
		{"git", "-C", bare, "update-server-info"},
	} {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
		}
	}
	return filepath.Join(dir, "serve")
}

// staticServer serves dir on 127.0.0.1 and records "METHOD PATH" lines.
type staticServer struct {
	ln  net.Listener
	mu  sync.Mutex
	req []string
}

func serveStatic(t *testing.T, dir string) *staticServer {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &staticServer{ln: ln}
	fs := http.FileServer(http.Dir(dir))
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.req = append(s.req, r.Method+" "+r.URL.Path)
		s.mu.Unlock()
		fs.ServeHTTP(w, r)
	}), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return s
}

func (s *staticServer) port() int { return s.ln.Addr().(*net.TCPAddr).Port }

func (s *staticServer) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.req)
}

func TestDebianAnsiblePull(t *testing.T) {
	t.Parallel()
	a := artifacts(t)
	if fi, err := os.Stat(a.Debian); err != nil || !fi.Mode().IsRegular() {
		msg := "no " + a.Debian + " (build it with `just debian-image`)"
		if os.Getenv(EnvIntegration) == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	needTools(t, "git", "apt-get", "dpkg-scanpackages", "gpg")
	dir := t.TempDir()
	repo, repoSrv := serveAptRepo(t, 15*time.Minute, harness.AptRepoOptions{
		Packages: ansiblePackages, Image: a.Debian, Dir: filepath.Join(dir, "repo"),
		Suite:       ansibleSuite,
		EmptySuites: []string{"bookworm", "bookworm-updates", "bookworm-security", "bookworm-backports"},
	})
	git := serveStatic(t, gitDumbRepo(t, filepath.Join(dir, "git")))

	v := &vm{t: t, a: a, dir: dir, disk: filepath.Join(dir, "debian.img")}
	if err := harness.CopyDisk(a.Debian, v.disk); err != nil {
		t.Fatal(err)
	}
	seed := v.seed(map[string][]byte{
		"meta-data":      []byte("instance-id: " + ansibleIID + "\nlocal-hostname: debian-meta\n"),
		"user-data":      []byte(ansibleUserData(repo)),
		"network-config": []byte(debianNetworkConfig),
	}, harness.SeedISO)
	start := time.Now()
	r := v.boot(harness.BootOptions{DiskBoot: true, Seed: seed, SeedKind: harness.SeedCDROM, Timeout: 40 * time.Minute,
		GuestFwd: []harness.GuestFwd{repoSrv.GuestFwd(), {GuestIP: ansibleGitGuestIP, GuestPort: 80, HostPort: git.port()}}})
	t.Logf("Debian ansible boot: QEMU start to exit %.1fs", time.Since(start).Seconds())
	t.Logf("git requests:\n%s", strings.Join(git.requests(), "\n"))
	wantPoweredOff(t, r)
	d := v.image()

	got, ok := d.readOpt(ansibleMarker)
	if !ok {
		t.Errorf("no %s: the playbook did not run", ansibleMarker)
	} else if !strings.HasPrefix(got, "pulled by ansible 2.") {
		t.Errorf("%s = %q", ansibleMarker, got)
	}
	if !slices.ContainsFunc(git.requests(), func(l string) bool { return strings.HasSuffix(l, "/playbooks.git/info/refs") }) {
		t.Error("the guest never asked the git server for info/refs (dumb HTTP clone)")
	}
	if !slices.ContainsFunc(repoSrv.Requests(), func(l string) bool {
		return strings.HasPrefix(l, "GET /pool/main/ansible-core_") && strings.HasSuffix(l, " 200")
	}) {
		t.Error("ansible-core was not downloaded from the local repository")
	}
	d.wantExists("/var/lib/cloud/instances/" + ansibleIID + "/sem/config_ansible")
	for _, e := range d.status().AllErrors() {
		t.Logf("status.json: %s", e)
		if strings.Contains(e, "ansible") || strings.Contains(e, "apt_configure") || strings.Contains(e, "package_update") {
			t.Errorf("status.json: %s", e)
		}
	}
}
