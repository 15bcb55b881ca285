package harness

// A local, signed apt repository for guests that must install packages
// without any route to the Internet (restrict=on).
//
//   - Which packages: the dependency closure of the requested names minus
//     what the guest image already has, resolved by the host's apt against
//     the image's own /var/lib/dpkg/status (apt-get -s install with
//     Dir::State::status pointing at a copy of it).
//   - Fetching: `apt-get download` from the host's apt sources (a Debian
//     mirror, allowed at build time), once, into
//     ${CLOUDROOT_CACHE:-${XDG_CACHE_HOME:-~/.cache}/cloudroot}/aptrepo-<key>
//     where <key> hashes the sorted package names and the image's dpkg
//     status (the image key). A later run with the same names and image
//     uses the cache and needs no network at all.
//   - The repository: pool/ with the .debs, dists/<suite>/main/binary-amd64/
//     Packages(.gz) made by dpkg-scanpackages, a Release listing their
//     hashes, InRelease and Release.gpg signed with a throwaway key made for
//     this repository in a temporary GNUPGHOME. The armored public key is
//     what user-data hands to apt_configure (`key:`), so the guest's apt
//     really verifies a signature.
//   - Serving: ServeAptRepo serves the directory on 127.0.0.1 and counts
//     requests; the guest reaches it through a GuestFwd (AptRepoGuestFwd).

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// Defaults for AptRepoOptions and the guest side of the repository.
const (
	// DefaultAptSuite is the suite (and codename) the packages go in:
	// Debian 12's, so that "$RELEASE" in a user-data source line names it.
	DefaultAptSuite = "bookworm"
	// AptRepoComponent is the only component.
	AptRepoComponent = "main"
	// AptRepoGuestIP and AptRepoGuestPort are where AptRepoGuestFwd puts
	// the repository in the guest (inside the 169.254.0.0/16 user network
	// that any GuestFwd switches to, away from 169.254.169.254).
	AptRepoGuestIP   = "169.254.0.80"
	AptRepoGuestPort = 80
	// EnvCache names the cache directory shared with scripts/debian-image.sh.
	EnvCache = "CLOUDROOT_CACHE"
)

// AptRepoOptions say what goes into a repository.
type AptRepoOptions struct {
	// Packages are the package names the guest will install; their
	// dependencies that the image lacks come along.
	Packages []string
	// Image is the guest's disk image (a GPT disk or bare ext4, as
	// OpenImage reads it); its /var/lib/dpkg/status says what is installed.
	Image string
	// Dir is where the repository is built (a test's temp dir).
	Dir string
	// CacheDir holds downloaded .debs between runs; "" is DefaultCacheDir().
	CacheDir string
	// Suite is the suite/codename of the packages ("" DefaultAptSuite).
	// EmptySuites are extra suites served with no packages, so that a
	// sources.list naming e.g. bookworm-updates and bookworm-security on
	// the same mirror updates cleanly.
	Suite       string
	EmptySuites []string
	// Reinstall resolves with apt-get --reinstall: the named packages the
	// image already has come along at their version, so the guest can
	// reinstall them (dpkg unpacks them again and activates their file
	// triggers, as an upgrade does).
	Reinstall bool
	// Log, when set, receives progress lines.
	Log func(string)
	// Now stamps the Release file (zero: time.Now()).
	Now time.Time
}

// AptRepo is a built repository.
type AptRepo struct {
	// Dir is the repository root: dists/ and pool/.
	Dir string
	// Suite holds the packages; Suites is every suite served.
	Suite  string
	Suites []string
	// Debs are the package file names in pool/, sorted.
	Debs []string
	// Installs are the package names apt resolved (the closure minus the
	// image), sorted.
	Installs []string
	// KeyArmored is the signing key's public part, ASCII-armored, for
	// apt_configure's `key:`; KeyFingerprint is its fingerprint.
	KeyArmored     string
	KeyFingerprint string
	// ImageKey hashes the image's dpkg status; CacheDir is where the .debs
	// were kept.
	ImageKey string
	CacheDir string
}

// DefaultCacheDir is $CLOUDROOT_CACHE, else $XDG_CACHE_HOME/cloudroot, else
// ~/.cache/cloudroot (scripts/debian-image.sh's choice).
func DefaultCacheDir() (string, error) {
	if d := os.Getenv(EnvCache); d != "" {
		return d, nil
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "cloudroot"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("cache directory: %w", err)
	}
	return filepath.Join(home, ".cache", "cloudroot"), nil
}

// BuildAptRepo resolves, fetches (or takes from the cache), indexes and
// signs a repository holding opts.Packages and what they need beyond the
// image. It needs apt-get, dpkg-scanpackages (dpkg-dev), gpg and debugfs.
func BuildAptRepo(ctx context.Context, opts AptRepoOptions) (*AptRepo, error) {
	if len(opts.Packages) == 0 || opts.Image == "" || opts.Dir == "" {
		return nil, errors.New("apt repository: Packages, Image and Dir are required")
	}
	if miss := HaveTools("apt-get", "dpkg-scanpackages", "gpg", "debugfs"); len(miss) > 0 {
		return nil, fmt.Errorf("apt repository: missing tools %s (scripts/deps.sh)", strings.Join(miss, ", "))
	}
	logf := func(format string, a ...any) {
		if opts.Log != nil {
			opts.Log(fmt.Sprintf("aptrepo: "+format, a...))
		}
	}
	cache := opts.CacheDir
	if cache == "" {
		var err error
		if cache, err = DefaultCacheDir(); err != nil {
			return nil, err
		}
	}
	im, err := OpenImage(opts.Image)
	if err != nil {
		return nil, fmt.Errorf("apt repository: %w", err)
	}
	status, err := im.ReadFile("/var/lib/dpkg/status")
	if err != nil {
		return nil, fmt.Errorf("apt repository: the image's dpkg status: %w", err)
	}
	imageKey := shortHash(status)
	keyNames := opts.Packages
	if opts.Reinstall {
		keyNames = append(slices.Clone(keyNames), "--reinstall")
	}
	debDir := filepath.Join(cache, "aptrepo-"+AptRepoCacheKey(keyNames, imageKey))
	installs, err := fetchClosure(ctx, opts.Packages, opts.Reinstall, status, debDir, logf)
	if err != nil {
		return nil, err
	}
	suite := opts.Suite
	if suite == "" {
		suite = DefaultAptSuite
	}
	r := &AptRepo{Dir: opts.Dir, Suite: suite, Suites: append([]string{suite}, opts.EmptySuites...),
		Installs: installs, ImageKey: imageKey, CacheDir: debDir}
	if err := r.populate(ctx, debDir, opts.Now); err != nil {
		return nil, err
	}
	logf("%s: %d package(s) %s in %s, signed by %s", r.Dir, len(r.Debs), strings.Join(r.Installs, " "), strings.Join(r.Suites, ", "), r.KeyFingerprint)
	return r, nil
}

// AptRepoCacheKey names the cache of one package list for one image.
func AptRepoCacheKey(packages []string, imageKey string) string {
	p := slices.Clone(packages)
	sort.Strings(p)
	p = slices.Compact(p)
	return shortHash([]byte(strings.Join(p, "\n") + "\n--\n" + imageKey))
}

func shortHash(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:8])
}

// closureFile lists, in a cache directory, the packages it was filled with;
// its presence marks the directory complete.
const closureFile = "closure.txt"

// fetchClosure fills debDir with the .debs of the closure (unless it is
// already complete) and returns the package names.
func fetchClosure(ctx context.Context, packages []string, reinstall bool, status []byte, debDir string, logf func(string, ...any)) ([]string, error) {
	if b, err := os.ReadFile(filepath.Join(debDir, closureFile)); err == nil {
		logf("cached: %s", debDir)
		return Lines(b), nil
	}
	work, err := os.MkdirTemp("", "aptrepo-resolve-")
	if err != nil {
		return nil, fmt.Errorf("apt repository: %w", err)
	}
	defer os.RemoveAll(work)
	// apt looks for dpkg's journal beside the status file.
	if err := os.MkdirAll(filepath.Join(work, "updates"), 0o755); err != nil {
		return nil, fmt.Errorf("apt repository: %w", err)
	}
	if err := os.WriteFile(filepath.Join(work, "status"), status, 0o644); err != nil {
		return nil, fmt.Errorf("apt repository: %w", err)
	}
	args := []string{"-s", "-q", "-o", "Dir::State::status=" + filepath.Join(work, "status"),
		"-o", "Debug::NoLocking=1", "install", "--no-install-recommends"}
	if reinstall {
		args = append(args, "--reinstall")
	}
	out, _, err := runTool(ctx, nil, nil, "apt-get", append(args, packages...)...)
	if err != nil {
		return nil, fmt.Errorf("apt repository: resolving %s against the image (is the host's apt list current? apt-get update): %w", strings.Join(packages, " "), err)
	}
	inst := ParseAptSimulation(string(out))
	if len(inst) == 0 {
		return nil, fmt.Errorf("apt repository: the image already has %s and everything it needs", strings.Join(packages, " "))
	}
	if err := os.MkdirAll(filepath.Dir(debDir), 0o755); err != nil {
		return nil, fmt.Errorf("apt repository: %w", err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(debDir), ".aptrepo-")
	if err != nil {
		return nil, fmt.Errorf("apt repository: %w", err)
	}
	defer os.RemoveAll(tmp)
	var names, want []string
	for _, p := range inst {
		names = append(names, p.Name)
		want = append(want, p.Name+"="+p.Version)
	}
	logf("downloading %s", strings.Join(want, " "))
	cmd := exec.CommandContext(ctx, "apt-get", append([]string{"download", "-q", "-o", "APT::Sandbox::User=root"}, want...)...)
	cmd.Dir = tmp
	if b, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("apt repository: apt-get download %s: %w: %s", strings.Join(want, " "), err, strings.TrimSpace(string(b)))
	}
	sort.Strings(names)
	if err := os.WriteFile(filepath.Join(tmp, closureFile), []byte(strings.Join(names, "\n")+"\n"), 0o644); err != nil {
		return nil, fmt.Errorf("apt repository: %w", err)
	}
	_ = os.RemoveAll(debDir) // an incomplete earlier attempt
	if err := os.Rename(tmp, debDir); err != nil {
		return nil, fmt.Errorf("apt repository: %w", err)
	}
	return names, nil
}

// AptPackage is one package apt would install.
type AptPackage struct{ Name, Version string }

var reInst = regexp.MustCompile(`^Inst (\S+) (?:\[[^]]*\] )?\((\S+) `)

// ParseAptSimulation reads `apt-get -s install`'s "Inst NAME [OLD] (VERSION
// ...)" lines, in order.
func ParseAptSimulation(out string) []AptPackage {
	var ps []AptPackage
	for line := range strings.SplitSeq(out, "\n") {
		if m := reInst.FindStringSubmatch(line); m != nil {
			ps = append(ps, AptPackage{Name: m[1], Version: m[2]})
		}
	}
	return ps
}

// populate copies the .debs into pool/, writes the indexes and signs them.
func (r *AptRepo) populate(ctx context.Context, debDir string, now time.Time) error {
	pool := filepath.Join(r.Dir, "pool", AptRepoComponent)
	if err := os.MkdirAll(pool, 0o755); err != nil {
		return fmt.Errorf("apt repository: %w", err)
	}
	debs, err := filepath.Glob(filepath.Join(debDir, "*.deb"))
	if err != nil || len(debs) == 0 {
		return fmt.Errorf("apt repository: no .deb in %s", debDir)
	}
	for _, d := range debs {
		if err := copyFile(d, filepath.Join(pool, filepath.Base(d))); err != nil {
			return fmt.Errorf("apt repository: %w", err)
		}
		r.Debs = append(r.Debs, filepath.Base(d))
	}
	sort.Strings(r.Debs)
	cmd := exec.CommandContext(ctx, "dpkg-scanpackages", "--multiversion", "pool", "/dev/null")
	cmd.Dir = r.Dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	packages, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("apt repository: dpkg-scanpackages: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	if now.IsZero() {
		now = time.Now()
	}
	key, err := newRepoKey(ctx)
	if err != nil {
		return err
	}
	defer key.Close()
	r.KeyArmored, r.KeyFingerprint = key.armored, key.fpr
	for i, s := range r.Suites {
		idx := packages
		if i > 0 {
			idx = nil
		}
		if err := r.writeSuite(ctx, key, s, idx, now); err != nil {
			return err
		}
	}
	return nil
}

// writeSuite writes dists/SUITE: Packages(.gz), an empty Sources(.gz),
// Release, InRelease and Release.gpg.
func (r *AptRepo) writeSuite(ctx context.Context, key *repoKey, suite string, packages []byte, now time.Time) error {
	dist := filepath.Join(r.Dir, "dists", suite)
	// An empty Sources index too: the deb-src lines of a sources.list
	// rendered from a distro template then update cleanly.
	files := map[string][]byte{}
	for _, idx := range []struct {
		name string
		data []byte
	}{
		{AptRepoComponent + "/binary-amd64/Packages", packages},
		{AptRepoComponent + "/source/Sources", nil},
	} {
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		_, _ = zw.Write(idx.data)
		if err := zw.Close(); err != nil {
			return fmt.Errorf("apt repository: %w", err)
		}
		files[idx.name], files[idx.name+".gz"] = idx.data, gz.Bytes()
		if err := os.MkdirAll(filepath.Join(dist, filepath.Dir(idx.name)), 0o755); err != nil {
			return fmt.Errorf("apt repository: %w", err)
		}
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dist, name), b, 0o644); err != nil {
			return fmt.Errorf("apt repository: %w", err)
		}
	}
	release := AptRelease(suite, now, files)
	if err := os.WriteFile(filepath.Join(dist, "Release"), release, 0o644); err != nil {
		return fmt.Errorf("apt repository: %w", err)
	}
	in, err := key.sign(ctx, release, "--clearsign")
	if err != nil {
		return err
	}
	det, err := key.sign(ctx, release, "--detach-sign", "--armor")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dist, "InRelease"), in, 0o644); err != nil {
		return fmt.Errorf("apt repository: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dist, "Release.gpg"), det, 0o644); err != nil {
		return fmt.Errorf("apt repository: %w", err)
	}
	return nil
}

// AptRelease renders a Release file for one suite whose index files (paths
// relative to dists/SUITE) are files.
func AptRelease(suite string, now time.Time, files map[string][]byte) []byte {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	fmt.Fprintf(&b, "Origin: cloudroot-test\nLabel: cloudroot-test\nSuite: %s\nCodename: %s\n", suite, suite)
	fmt.Fprintf(&b, "Date: %s\n", now.UTC().Format("Mon, 02 Jan 2006 15:04:05 UTC"))
	fmt.Fprintf(&b, "Architectures: amd64\nComponents: %s\nDescription: cloudroot test repository\n", AptRepoComponent)
	b.WriteString("MD5Sum:\n")
	for _, n := range names {
		s := md5.Sum(files[n])
		fmt.Fprintf(&b, " %s %8d %s\n", hex.EncodeToString(s[:]), len(files[n]), n)
	}
	b.WriteString("SHA256:\n")
	for _, n := range names {
		s := sha256.Sum256(files[n])
		fmt.Fprintf(&b, " %s %8d %s\n", hex.EncodeToString(s[:]), len(files[n]), n)
	}
	return []byte(b.String())
}

// repoKey is a throwaway signing key in its own GNUPGHOME.
type repoKey struct {
	home         string
	fpr, armored string
}

func newRepoKey(ctx context.Context) (*repoKey, error) {
	// Short: gpg-agent's socket lives in it (sun_path is ~108 bytes).
	home, err := os.MkdirTemp("", "gpg-")
	if err != nil {
		return nil, fmt.Errorf("apt repository: signing key: %w", err)
	}
	k := &repoKey{home: home}
	if _, err := k.gpg(ctx, nil, "--quick-gen-key", "cloudroot test repository <aptrepo@cloudroot.invalid>", "rsa3072", "sign", "never"); err != nil {
		k.Close()
		return nil, err
	}
	out, err := k.gpg(ctx, nil, "--with-colons", "--list-keys")
	if err != nil {
		k.Close()
		return nil, err
	}
	for line := range strings.SplitSeq(string(out), "\n") {
		if f := strings.Split(line, ":"); len(f) > 9 && f[0] == "fpr" {
			k.fpr = f[9]
			break
		}
	}
	pub, err := k.gpg(ctx, nil, "--armor", "--export", k.fpr)
	if err != nil || k.fpr == "" || len(pub) == 0 {
		k.Close()
		return nil, fmt.Errorf("apt repository: exporting the signing key %q: %w", k.fpr, err)
	}
	k.armored = string(pub)
	return k, nil
}

func (k *repoKey) gpg(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	base := []string{"--batch", "--quiet", "--no-tty", "--pinentry-mode", "loopback", "--passphrase", ""}
	out, _, err := runTool(ctx, stdin, []string{"GNUPGHOME=" + k.home}, "gpg", append(base, args...)...)
	if err != nil {
		return nil, fmt.Errorf("apt repository: %w", err)
	}
	return out, nil
}

func (k *repoKey) sign(ctx context.Context, data []byte, how ...string) ([]byte, error) {
	return k.gpg(ctx, data, append([]string{"--digest-algo", "SHA256", "--local-user", k.fpr, "--output", "-"}, how...)...)
}

// Close stops the gpg-agent the key's GNUPGHOME started and removes it.
func (k *repoKey) Close() {
	if p, err := lookPath("gpgconf"); err == nil {
		cmd := exec.Command(p, "--kill", "gpg-agent")
		cmd.Env = append(os.Environ(), "GNUPGHOME="+k.home)
		_ = cmd.Run()
	}
	_ = os.RemoveAll(k.home)
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// SourceLine is the one-line apt source for the repository as the guest
// sees it through AptRepoGuestFwd, for suite ("" the packages' suite).
func (r *AptRepo) SourceLine(suite string) string {
	if suite == "" {
		suite = r.Suite
	}
	return fmt.Sprintf("deb %s %s %s", r.GuestURL(), suite, AptRepoComponent)
}

// GuestURL is the repository's URL in the guest.
func (r *AptRepo) GuestURL() string {
	return fmt.Sprintf("http://%s:%d/", AptRepoGuestIP, AptRepoGuestPort)
}

// AptRepoServer serves a repository directory on 127.0.0.1 and logs every
// request.
type AptRepoServer struct {
	ln   net.Listener
	srv  *http.Server
	done chan struct{}

	mu  sync.Mutex
	log []string
}

// ServeAptRepo starts serving dir on 127.0.0.1 (an ephemeral port).
func ServeAptRepo(dir string) (*AptRepoServer, error) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("apt repository server: %w", err)
	}
	s := &AptRepoServer{ln: ln, done: make(chan struct{})}
	files := http.FileServer(http.Dir(dir))
	s.srv = &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w, code: http.StatusOK}
		files.ServeHTTP(rec, r)
		s.mu.Lock()
		s.log = append(s.log, fmt.Sprintf("%s %s %d", r.Method, r.URL.Path, rec.code))
		s.mu.Unlock()
	})}
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln)
	}()
	return s, nil
}

type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.code = code
	s.ResponseWriter.WriteHeader(code)
}

// Port is the server's port on 127.0.0.1.
func (s *AptRepoServer) Port() int { return s.ln.Addr().(*net.TCPAddr).Port }

// GuestFwd puts the server at AptRepoGuestIP:AptRepoGuestPort in the guest.
func (s *AptRepoServer) GuestFwd() GuestFwd {
	return GuestFwd{GuestIP: AptRepoGuestIP, GuestPort: AptRepoGuestPort, HostPort: s.Port()}
}

// Requests are "METHOD PATH STATUS" lines in arrival order.
func (s *AptRepoServer) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.log)
}

// Fetched reports whether a GET of a path ending in suffix was answered 200.
func (s *AptRepoServer) Fetched(suffix string) bool {
	for _, l := range s.Requests() {
		f := strings.Fields(l)
		if len(f) == 3 && f[0] == http.MethodGet && strings.HasSuffix(f[1], suffix) && f[2] == "200" {
			return true
		}
	}
	return false
}

// Close stops the server.
func (s *AptRepoServer) Close() error {
	err := s.srv.Close()
	<-s.done
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// PackageNames lists the Package: fields of a Packages index.
func PackageNames(index []byte) []string {
	var names []string
	sc := bufio.NewScanner(bytes.NewReader(index))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Package: "); ok {
			names = append(names, strings.TrimSpace(v))
		}
	}
	return names
}
