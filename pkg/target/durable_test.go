package target

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// errCut is the simulated power cut.
var errCut = errors.New("power cut")

// crashRoot opens a Debian-like root whose operations stop at point, as if
// the power went off there.
func crashRoot(t *testing.T, deferred bool, point string) *Root {
	t.Helper()
	r := debianRoot(t)
	if deferred {
		r.deferSync = true
	}
	r.faultAt = func(p string) error {
		if p == point {
			return errCut
		}
		return nil
	}
	return r
}

// loseUnflushed models the page cache lost at the cut: staged account
// files and journals whose flush had not happened keep no data.
func loseUnflushed(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(dir, "etc"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		n := e.Name()
		if strings.Contains(n, acctNewInfix) || strings.HasPrefix(n, acctJournalPrefix) {
			if err := os.Truncate(filepath.Join(dir, "etc", n), 0); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// accountState is which databases name the user "crash" (and its group).
func accountState(t *testing.T, r *Root) []string {
	t.Helper()
	var in []string
	for _, f := range []string{PasswdFile, ShadowFile, GroupFile, GshadowFile} {
		b, err := r.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) == 0 {
			t.Fatalf("%s is empty after the cut", f)
		}
		if !strings.Contains(string(b), "root:") {
			t.Fatalf("%s lost root after the cut:\n%s", f, b)
		}
		if strings.Contains(string(b), "\ncrash:") {
			in = append(in, f)
		}
	}
	return in
}

// TestAccountCommitCrash cuts the power at every point of a user creation
// (which changes all four databases) and checks that, after Recover on the
// next boot, the user is in all of them or in none.
func TestAccountCommitCrash(t *testing.T) {
	all := []string{PasswdFile, ShadowFile, GroupFile, GshadowFile}
	points := []struct {
		point   string
		flushed bool // the commit's flush had completed
		want    []string
	}{
		{"acct-staged", false, nil},
		{"acct-journal", false, nil},
		{"acct-flushed", true, all},
		{"acct-renamed-0", true, all},
		{"acct-renamed-1", true, all},
		{"acct-renamed-2", true, all},
		{"acct-renamed-3", true, all},
		{"", true, all}, // no cut: the commit finished
	}
	for _, deferred := range []bool{true, false} {
		for _, p := range points {
			name := p.point
			if name == "" {
				name = "none"
			}
			if deferred {
				name += "/deferred"
			}
			t.Run(name, func(t *testing.T) {
				r := crashRoot(t, deferred, p.point)
				_, _, err := r.AddUser(UserSpec{Name: "crash", Gecos: "Crash Test"})
				if p.point != "" && !errors.Is(err, errCut) {
					t.Fatalf("AddUser = %v, want the simulated cut", err)
				}
				if p.point == "" && err != nil {
					t.Fatal(err)
				}
				if !p.flushed {
					loseUnflushed(t, r.Dir())
				}
				// The next boot.
				next, err := New(r.Dir())
				if err != nil {
					t.Fatal(err)
				}
				rc, err := next.Recover()
				if err != nil {
					t.Fatalf("Recover: %v", err)
				}
				if got := accountState(t, next); !slices.Equal(got, p.want) {
					t.Errorf("after the cut at %q and recovery (%+v) the user is in %q, want %q", p.point, rc, got, p.want)
				}
				ents, _ := os.ReadDir(filepath.Join(r.Dir(), "etc"))
				for _, e := range ents {
					if strings.Contains(e.Name(), acctNewInfix) || strings.HasPrefix(e.Name(), acctJournalPrefix) {
						t.Errorf("left behind after recovery: /etc/%s", e.Name())
					}
				}
				// The recovered root works: a second user goes in all four.
				if _, _, err := next.AddUser(UserSpec{Name: "after"}); err != nil {
					t.Fatal(err)
				}
				if _, err := next.LookupShadow("after"); err != nil {
					t.Errorf("after recovery, a new user has no shadow entry: %v", err)
				}
			})
		}
	}
}

// TestAccountJournalKeptUntilSync checks that in deferred mode a finished
// commit's journal stays until the barrier, and goes with it.
func TestAccountJournalKeptUntilSync(t *testing.T) {
	r := debianRoot(t)
	r.deferSync = true
	if _, _, err := r.AddUser(UserSpec{Name: "one"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.AddUser(UserSpec{Name: "two"}); err != nil {
		t.Fatal(err)
	}
	journals := func() []string {
		m, _ := filepath.Glob(filepath.Join(r.Dir(), "etc", acctJournalPrefix+"*"))
		return m
	}
	if n := len(journals()); n != 2 {
		t.Fatalf("%d journals before Sync, want 2 (one per commit)", n)
	}
	// A cut here: recovery finds both commits complete and keeps the set.
	next, _ := New(r.Dir())
	if _, err := next.Recover(); err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"one", "two"} {
		if _, err := next.LookupShadow(u); err != nil {
			t.Errorf("%s: %v", u, err)
		}
	}
	if _, _, err := r.AddUser(UserSpec{Name: "three"}); err != nil {
		t.Fatal(err)
	}
	if err := r.Sync(); err != nil {
		t.Fatal(err)
	}
	if j := journals(); len(j) != 0 {
		t.Errorf("journals left after Sync: %q", j)
	}
}

// TestRecoverStrayStaged removes staged files of a commit cut before its
// journal existed, and leaves a clean root alone.
func TestRecoverStrayStaged(t *testing.T) {
	r := debianRoot(t)
	before, _ := r.ReadFile(PasswdFile)
	if rc, err := r.Recover(); err != nil || !rc.Empty() {
		t.Fatalf("Recover on a clean root = %+v, %v", rc, err)
	}
	stray := filepath.Join(r.Dir(), "etc", ".passwd"+acctNewInfix+"7")
	if err := os.WriteFile(stray, []byte("half"), 0o600); err != nil {
		t.Fatal(err)
	}
	rc, err := r.Recover()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rc.RolledBack, []string{PasswdFile}) {
		t.Errorf("RolledBack = %q, want [%s]", rc.RolledBack, PasswdFile)
	}
	if _, err := os.Stat(stray); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stray staged file still there: %v", err)
	}
	if after, _ := r.ReadFile(PasswdFile); string(after) != string(before) {
		t.Errorf("passwd changed by recovery")
	}
}

// TestReplaceFlush checks which deferred writes flush on their own:
// replacing existing content outside cloudroot's state does, a new file or
// a state file does not.
func TestReplaceFlush(t *testing.T) {
	r, err := New(t.TempDir(), WithDeferredSync(), WithClock(time.Now))
	if err != nil {
		t.Fatal(err)
	}
	var flushed []string
	r.faultAt = func(p string) error {
		if s, ok := strings.CutPrefix(p, "flush "); ok {
			flushed = append(flushed, s)
		}
		return nil
	}
	for _, w := range []struct{ p, data string }{
		{"/etc/hostname", "one\n"},            // new: no flush
		{"/etc/hostname", "two\n"},            // replaces content: flush
		{"/var/lib/cloud/data/x", "a"},        // new state
		{"/var/lib/cloud/data/x", "b"},        // replaced state: no flush
		{"/etc/empty", ""},                    // new, empty
		{"/etc/empty", "now something\n"},     // replaces an empty file: no flush
		{"/etc/sudoers.d/90-cloud-init", "x"}, // new
	} {
		if err := r.WriteFile(w.p, []byte(w.data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if want := []string{"/etc/hostname"}; !slices.Equal(flushed, want) {
		t.Errorf("flushed %q, want %q", flushed, want)
	}
}

// TestAccountCommitCrashAfterFinishedCommit cuts the second of two commits
// before its flush, while the first one's journal still waits for a
// barrier: the first user stays whole, the second is in no database.
func TestAccountCommitCrashAfterFinishedCommit(t *testing.T) {
	r := debianRoot(t)
	r.deferSync = true
	if _, _, err := r.AddUser(UserSpec{Name: "one"}); err != nil {
		t.Fatal(err)
	}
	r.faultAt = func(p string) error {
		if p == "acct-journal" {
			return errCut
		}
		return nil
	}
	if _, _, err := r.AddUser(UserSpec{Name: "two"}); !errors.Is(err, errCut) {
		t.Fatalf("AddUser = %v, want the cut", err)
	}
	// The second commit's staged files and journal lose their data.
	ents, _ := os.ReadDir(filepath.Join(r.Dir(), "etc"))
	for _, e := range ents {
		if n := e.Name(); strings.HasSuffix(n, acctNewInfix+"2") || n == acctJournalPrefix+"2"+acctJournalSuffix {
			os.Truncate(filepath.Join(r.Dir(), "etc", n), 0)
		}
	}
	next, _ := New(r.Dir())
	if _, err := next.Recover(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{PasswdFile, ShadowFile, GroupFile, GshadowFile} {
		b, _ := next.ReadFile(f)
		if !strings.Contains(string(b), "\none:") {
			t.Errorf("%s lost the first user", f)
		}
		if strings.Contains(string(b), "\ntwo:") {
			t.Errorf("%s has the second user, whose commit never flushed", f)
		}
	}
}
