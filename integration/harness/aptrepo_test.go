package harness

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseAptSimulation(t *testing.T) {
	out := `Reading package lists...
The following NEW packages will be installed:
  hello libestr0 tree
Inst hello (2.10-3 Debian:12.15/oldstable [amd64])
Inst libestr0 (0.1.11-1 Debian:12.15/oldstable [amd64])
Inst chrony [4.3-2] (4.3-2+deb12u1 Debian-Security:12/oldstable-security [amd64])
Conf hello (2.10-3 Debian:12.15/oldstable [amd64])
`
	want := []AptPackage{{"hello", "2.10-3"}, {"libestr0", "0.1.11-1"}, {"chrony", "4.3-2+deb12u1"}}
	if diff := cmp.Diff(want, ParseAptSimulation(out)); diff != "" {
		t.Errorf("ParseAptSimulation (-want +got):\n%s", diff)
	}
}

func TestAptRepoCacheKey(t *testing.T) {
	a := AptRepoCacheKey([]string{"tree", "hello"}, "img1")
	if b := AptRepoCacheKey([]string{"hello", "tree", "hello"}, "img1"); a != b {
		t.Errorf("the key depends on order or duplicates: %s vs %s", a, b)
	}
	if b := AptRepoCacheKey([]string{"hello", "tree"}, "img2"); a == b {
		t.Error("the key ignores the image")
	}
	if b := AptRepoCacheKey([]string{"hello"}, "img1"); a == b {
		t.Error("the key ignores the package list")
	}
}

func TestAptRelease(t *testing.T) {
	files := map[string][]byte{"main/binary-amd64/Packages": []byte("Package: a\n"), "main/binary-amd64/Packages.gz": []byte("gz")}
	got := string(AptRelease("bookworm", time.Date(2026, 11, 25, 17, 0, 0, 0, time.UTC), files))
	sum := sha256.Sum256(files["main/binary-amd64/Packages"])
	for _, want := range []string{
		"Suite: bookworm\nCodename: bookworm\n",
		"Date: Wed, 25 Nov 2026 17:00:00 UTC\n",
		"Components: main\n",
		"SHA256:\n",
		fmt.Sprintf(" %s %8d main/binary-amd64/Packages\n", hex.EncodeToString(sum[:]), 11),
	} {
		if !strings.Contains(got, want) {
			t.Errorf("Release lacks %q:\n%s", want, got)
		}
	}
	if strings.Index(got, "Packages\n") > strings.Index(got, "Packages.gz\n") {
		t.Errorf("Release does not list files in order:\n%s", got)
	}
}

// fakeDeb builds a tiny binary package with dpkg-deb.
func fakeDeb(t *testing.T, dir, name, version string) {
	t.Helper()
	root := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(filepath.Join(root, "DEBIAN"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "usr/share/doc", name), 0o755); err != nil {
		t.Fatal(err)
	}
	control := fmt.Sprintf("Package: %s\nVersion: %s\nArchitecture: all\nMaintainer: test <t@example.invalid>\nDescription: test package %s\n", name, version, name)
	if err := os.WriteFile(filepath.Join(root, "DEBIAN/control"), []byte(control), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "usr/share/doc", name, "README"), []byte(name+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, fmt.Sprintf("%s_%s_all.deb", name, version))
	if b, err := exec.Command("dpkg-deb", "--root-owner-group", "-Zgzip", "--build", root, out).CombinedOutput(); err != nil {
		t.Fatalf("dpkg-deb: %v: %s", err, b)
	}
}

// TestAptRepoIndexes builds a repository from two fake packages and checks
// the indexes agree with the files and the signatures verify with the
// exported key, as the guest's apt would check them.
func TestAptRepoIndexes(t *testing.T) {
	if miss := HaveTools("dpkg-deb", "dpkg-scanpackages", "gpg", "gpgv"); len(miss) > 0 {
		t.Skipf("missing %v (scripts/deps.sh)", miss)
	}
	debDir := t.TempDir()
	fakeDeb(t, debDir, "cloudroot-a", "1.0-1")
	fakeDeb(t, debDir, "cloudroot-b", "2.0")
	r := &AptRepo{Dir: t.TempDir(), Suite: "bookworm", Suites: []string{"bookworm", "bookworm-updates"}}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := r.populate(ctx, debDir, time.Now()); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"cloudroot-a_1.0-1_all.deb", "cloudroot-b_2.0_all.deb"}, r.Debs); diff != "" {
		t.Errorf("Debs (-want +got):\n%s", diff)
	}
	if !strings.Contains(r.KeyArmored, "BEGIN PGP PUBLIC KEY BLOCK") || len(r.KeyFingerprint) != 40 {
		t.Errorf("key: fingerprint %q, armored:\n%s", r.KeyFingerprint, r.KeyArmored)
	}
	read := func(p string) []byte {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(r.Dir, p))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	pk := read("dists/bookworm/main/binary-amd64/Packages")
	if diff := cmp.Diff([]string{"cloudroot-a", "cloudroot-b"}, PackageNames(pk)); diff != "" {
		t.Errorf("Packages (-want +got):\n%s", diff)
	}
	deb := read("pool/main/cloudroot-a_1.0-1_all.deb")
	sum := sha256.Sum256(deb)
	for _, want := range []string{"Filename: pool/main/cloudroot-a_1.0-1_all.deb\n", "SHA256: " + hex.EncodeToString(sum[:]) + "\n", fmt.Sprintf("Size: %d\n", len(deb))} {
		if !bytes.Contains(pk, []byte(want)) {
			t.Errorf("Packages lacks %q:\n%s", want, pk)
		}
	}
	zr, err := gzip.NewReader(bytes.NewReader(read("dists/bookworm/main/binary-amd64/Packages.gz")))
	if err != nil {
		t.Fatal(err)
	}
	if unz, _ := io.ReadAll(zr); !bytes.Equal(unz, pk) {
		t.Error("Packages.gz is not Packages compressed")
	}
	if got := read("dists/bookworm/main/source/Sources"); len(got) != 0 {
		t.Errorf("Sources is not empty:\n%s", got)
	}
	if got := read("dists/bookworm-updates/main/binary-amd64/Packages"); len(got) != 0 {
		t.Errorf("the empty suite lists packages:\n%s", got)
	}
	rel := read("dists/bookworm/Release")
	psum := sha256.Sum256(pk)
	if want := fmt.Sprintf(" %s %8d main/binary-amd64/Packages\n", hex.EncodeToString(psum[:]), len(pk)); !bytes.Contains(rel, []byte(want)) {
		t.Errorf("Release lacks %q:\n%s", want, rel)
	}

	// Verify like apt: gpgv against a keyring holding only the exported key.
	kdir, err := os.MkdirTemp("", "gpgv-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(kdir)
	keyring := filepath.Join(kdir, "repo.gpg")
	dearmor := exec.Command("gpg", "--batch", "--dearmor", "--output", keyring)
	dearmor.Stdin = strings.NewReader(r.KeyArmored)
	dearmor.Env = append(os.Environ(), "GNUPGHOME="+kdir)
	if b, err := dearmor.CombinedOutput(); err != nil {
		t.Fatalf("gpg --dearmor: %v: %s", err, b)
	}
	for _, args := range [][]string{
		{filepath.Join(r.Dir, "dists/bookworm/InRelease")},
		{filepath.Join(r.Dir, "dists/bookworm/Release.gpg"), filepath.Join(r.Dir, "dists/bookworm/Release")},
		{filepath.Join(r.Dir, "dists/bookworm-updates/InRelease")},
	} {
		if b, err := exec.Command("gpgv", append([]string{"--keyring", keyring}, args...)...).CombinedOutput(); err != nil {
			t.Errorf("gpgv %v: %v: %s", args, err, b)
		}
	}
	if in := read("dists/bookworm/InRelease"); !bytes.Contains(in, rel) {
		t.Error("InRelease does not hold the Release text")
	}

	// Served on 127.0.0.1, with a request log.
	s, err := ServeAptRepo(r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/dists/bookworm/InRelease", s.Port()))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || !s.Fetched("/InRelease") {
		t.Errorf("GET InRelease: %s; log %q", resp.Status, s.Requests())
	}
	if g := s.GuestFwd(); g.GuestIP != AptRepoGuestIP || g.HostPort != s.Port() {
		t.Errorf("GuestFwd = %+v", g)
	}
	if got, want := r.SourceLine(""), "deb http://169.254.0.80:80/ bookworm main"; got != want {
		t.Errorf("SourceLine = %q, want %q", got, want)
	}
}
