package target

// Durability: what survives a power cut at any instant.
//
// The contract (docs/security.md, "Crash consistency"):
//
//   - Every write is atomic: a temp file in the same directory, renamed over
//     the path. Readers (and a reboot) see the old or the new content.
//   - Without WithDeferredSync each write fsyncs the file before the rename
//     and the directory after it.
//   - With WithDeferredSync (the initramfs and the agent's stages) writes are
//     not flushed one by one; Root.Sync is the barrier that makes everything
//     written so far durable (one syncfs). Two writes flush on their own
//     because a cut could otherwise lose data that existed before the boot:
//     replacing an existing non-empty file outside cloudroot's own state
//     (/var/lib/cloud, /run) fsyncs the new content before the rename (what
//     ext4's auto_da_alloc does implicitly, made explicit for every
//     filesystem), so /etc/passwd, sudoers, sshd_config... are never
//     renamed-but-empty; and an account commit (below) flushes once.
//   - The account databases (passwd, shadow, group, gshadow) change as one
//     set: every changed file is written to ".<name>.cloudroot-new.<seq>"
//     beside it, a journal "/etc/.cloudroot-accounts.<seq>.commit" lists
//     them with the SHA-256 of their content, one flush makes both durable,
//     then the files are renamed into place. The journal is removed after
//     the next barrier. Recover, run before anything reads the databases on
//     the next boot, rolls a complete journal forward (renames the .new
//     files still there) and a journal whose files do not match their sums
//     (the cut came before the flush) back (removes them), so a cut leaves
//     the old set or the new set, never a user in passwd without its shadow
//     line.
//   - The filesystem is assumed to persist metadata operations (create,
//     rename, unlink) in the order they were made, as ext4 (data=ordered),
//     xfs and btrfs do; file data is assumed to need an explicit flush.

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Names of the account commit files, in the directory of /etc/passwd.
const (
	acctJournalPrefix = ".cloudroot-accounts."
	acctJournalSuffix = ".commit"
	acctNewInfix      = ".cloudroot-new."
	acctJournalHeader = "cloudroot-accounts-commit 1"
)

// stateDirs hold files cloudroot regenerates on every boot: replacing one
// of them needs no flush of its own (the next barrier covers it).
var stateDirs = []string{"/var/lib/cloud/", "/run/"}

// DeferredSync reports whether writes wait for Sync to become durable.
func (r *Root) DeferredSync() bool { return r.deferSync }

// Sync is the durability barrier: everything written through the root so
// far is on disk when it returns (one syncfs of the root's filesystem).
// Account journals of finished commits are removed afterwards.
func (r *Root) Sync() error {
	if err := r.fault("sync"); err != nil {
		return err
	}
	if err := syncFS(r.dir); err != nil {
		return err
	}
	r.acct.Lock()
	done := r.journals
	r.journals = nil
	r.acct.Unlock()
	for _, j := range done {
		_ = os.Remove(j)
	}
	return nil
}

// fault is the test hook for simulated power cuts: a non-nil error stops
// the operation at that point, as if the machine had lost power there.
func (r *Root) fault(point string) error {
	if r.faultAt == nil {
		return nil
	}
	return r.faultAt(point)
}

// needsReplaceFlush reports whether writing p over what is there (a
// non-empty regular file when nonEmpty) must flush the new content before
// the rename in deferred mode.
func (r *Root) needsReplaceFlush(p string, nonEmpty bool) bool {
	if !r.deferSync {
		return false
	}
	for _, d := range stateDirs {
		if strings.HasPrefix(p, d) {
			return false
		}
	}
	return nonEmpty
}

// writeNew writes data to hp (created or truncated) with the owner and
// mode of o, and fsyncs it when flush is set.
func writeNew(hp string, data []byte, o WriteOpts, flush bool) error {
	f, err := os.OpenFile(hp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if o.UID >= 0 || o.GID >= 0 {
		if err := f.Chown(o.UID, o.GID); err != nil {
			f.Close()
			return err
		}
	}
	if err := f.Chmod(unixMode(o.Perm)); err != nil {
		f.Close()
		return err
	}
	if flush {
		if err := f.Sync(); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// acctWrite is one file of an account commit.
type acctWrite struct {
	path string // inside the root
	data []byte
	opts WriteOpts
}

// commitAccounts writes files as one set (see the contract above). The
// caller holds r.acct.
func (r *Root) commitAccounts(files []acctWrite) error {
	if len(files) == 1 {
		f := files[0]
		return r.WriteFileOpts(f.path, f.data, f.opts)
	}
	jdir, err := r.acctDir()
	if err != nil {
		return err
	}
	r.acctSeq++
	if r.acctSeq == 1 {
		r.acctSeq = nextJournalSeq(jdir)
	}
	seq := strconv.Itoa(r.acctSeq)
	type staged struct{ tmp, hp string }
	var st []staged
	ok := false
	defer func() {
		if !ok {
			for _, s := range st {
				os.Remove(s.tmp)
			}
		}
	}()
	var jb bytes.Buffer
	jb.WriteString(acctJournalHeader + "\n")
	flush := !r.deferSync
	for _, f := range files {
		hp, err := r.Resolve(f.path)
		if err != nil {
			return err
		}
		tmp := filepath.Join(filepath.Dir(hp), "."+filepath.Base(hp)+acctNewInfix+seq)
		st = append(st, staged{tmp, hp})
		if err := writeNew(tmp, f.data, f.opts, flush); err != nil {
			return fmt.Errorf("target: write %s: %w", f.path, err)
		}
		fmt.Fprintf(&jb, "%s %s\n", sum(f.data), r.HostPathOf(hp))
	}
	jb.WriteString("end\n")
	if err := r.fault("acct-staged"); err != nil {
		ok = true // a cut cleans nothing up
		return err
	}
	jp := filepath.Join(jdir, acctJournalPrefix+seq+acctJournalSuffix)
	if err := writeNew(jp, jb.Bytes(), WriteOpts{Perm: 0o600, UID: -1, GID: -1}, flush); err != nil {
		return fmt.Errorf("target: account journal: %w", err)
	}
	if err := r.fault("acct-journal"); err != nil {
		ok = true // a cut cleans nothing up
		return err
	}
	// The one flush of the commit: the new files and the journal are on
	// disk before any of them replaces an account file.
	if r.deferSync {
		err = syncFS(r.dir)
	} else {
		err = syncDir(jdir)
	}
	if err != nil {
		os.Remove(jp)
		return fmt.Errorf("target: account commit: %w", err)
	}
	if err := r.fault("acct-flushed"); err != nil {
		ok = true // a cut cleans nothing up
		return err
	}
	ok = true
	for i, s := range st {
		if err := os.Rename(s.tmp, s.hp); err != nil {
			// The journal stays: the next boot's Recover finishes the set.
			return fmt.Errorf("target: account commit: %w", err)
		}
		if err := r.fault("acct-renamed-" + strconv.Itoa(i)); err != nil {
			return err
		}
	}
	if r.deferSync {
		r.journals = append(r.journals, jp)
		return nil
	}
	dirs := map[string]bool{}
	for _, s := range st {
		dirs[filepath.Dir(s.hp)] = true
	}
	for d := range dirs {
		if err := syncDir(d); err != nil {
			return fmt.Errorf("target: account commit: %w", err)
		}
	}
	_ = os.Remove(jp)
	return nil
}

// acctDir is the host directory of the account journals (that of
// /etc/passwd), created when missing.
func (r *Root) acctDir() (string, error) {
	if err := r.MkdirAll(path.Dir(PasswdFile), 0o755); err != nil {
		return "", err
	}
	return r.Resolve(path.Dir(PasswdFile))
}

// journalSeq is the sequence number in a journal's file name, or -1.
func journalSeq(name string) int {
	if !strings.HasPrefix(name, acctJournalPrefix) || !strings.HasSuffix(name, acctJournalSuffix) {
		return -1
	}
	n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(name, acctJournalPrefix), acctJournalSuffix))
	if err != nil || n < 0 {
		return -1
	}
	return n
}

// nextJournalSeq is one above the highest journal left in dir (1 if none).
func nextJournalSeq(dir string) int {
	next := 1
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if n := journalSeq(e.Name()); n >= next {
			next = n + 1
		}
	}
	return next
}

// Recovery is what Recover did.
type Recovery struct {
	// RolledForward are account files a journal put in place.
	RolledForward []string
	// RolledBack are staged account files of an unfinished commit removed.
	RolledBack []string
}

// Empty reports whether Recover found nothing to do.
func (rc Recovery) Empty() bool { return len(rc.RolledForward)+len(rc.RolledBack) == 0 }

// Recover finishes or undoes an account commit a power cut interrupted
// (see the contract at the top of this file). It runs before anything
// reads the account databases on a boot; with nothing to do it reads one
// directory.
func (r *Root) Recover() (Recovery, error) {
	var rc Recovery
	r.acct.Lock()
	defer r.acct.Unlock()
	jdir, err := r.Resolve(path.Dir(PasswdFile))
	if err != nil {
		return rc, err
	}
	ents, err := os.ReadDir(jdir)
	if errors.Is(err, fs.ErrNotExist) {
		return rc, nil
	}
	if err != nil {
		return rc, fmt.Errorf("target: recover accounts: %w", err)
	}
	var seqs []int
	for _, e := range ents {
		if n := journalSeq(e.Name()); n >= 0 {
			seqs = append(seqs, n)
		}
	}
	slices.Sort(seqs)
	var errs []error
	var journals []string
	referenced := map[string]bool{}
	for _, n := range seqs {
		jp := filepath.Join(jdir, acctJournalPrefix+strconv.Itoa(n)+acctJournalSuffix)
		journals = append(journals, jp)
		b, err := os.ReadFile(jp)
		if err != nil {
			errs = append(errs, fmt.Errorf("target: recover accounts: %w", err))
			continue
		}
		entries, complete := parseJournal(b)
		type move struct{ tmp, hp, p string }
		var moves []move
		for _, e := range entries {
			hp, err := r.Resolve(e.path)
			if err != nil {
				complete = false
				continue
			}
			tmp := filepath.Join(filepath.Dir(hp), "."+filepath.Base(hp)+acctNewInfix+strconv.Itoa(n))
			referenced[tmp] = true
			got, err := os.ReadFile(tmp)
			if errors.Is(err, fs.ErrNotExist) {
				continue // already renamed into place
			}
			if err != nil || sum(got) != e.sum {
				complete = false
			}
			moves = append(moves, move{tmp, hp, e.path})
		}
		for _, m := range moves {
			if complete {
				if err := os.Rename(m.tmp, m.hp); err != nil {
					errs = append(errs, fmt.Errorf("target: recover %s: %w", m.p, err))
					continue
				}
				rc.RolledForward = append(rc.RolledForward, m.p)
			} else {
				os.Remove(m.tmp)
				rc.RolledBack = append(rc.RolledBack, m.p)
			}
		}
	}
	// Staged files without a journal: the cut came before the journal.
	for _, e := range ents {
		name := e.Name()
		if i := strings.Index(name, acctNewInfix); strings.HasPrefix(name, ".") && i > 0 {
			tmp := filepath.Join(jdir, name)
			if !referenced[tmp] {
				os.Remove(tmp)
				rc.RolledBack = append(rc.RolledBack, path.Join(path.Dir(PasswdFile), name[1:i]))
			}
		}
	}
	if len(journals) == 0 && rc.Empty() {
		return rc, errors.Join(errs...)
	}
	if err := syncFS(r.dir); err != nil {
		errs = append(errs, err)
	} else {
		for _, jp := range journals {
			os.Remove(jp)
		}
	}
	return rc, errors.Join(errs...)
}

type journalEntry struct{ sum, path string }

// parseJournal reads a journal; complete is false when it was cut short.
func parseJournal(b []byte) (entries []journalEntry, complete bool) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	first := true
	for sc.Scan() {
		line := sc.Text()
		if first {
			if line != acctJournalHeader {
				return nil, false
			}
			first = false
			continue
		}
		if line == "end" {
			return entries, true
		}
		s, p, ok := strings.Cut(line, " ")
		if !ok || len(s) != sha256.Size*2 || !strings.HasPrefix(p, "/") {
			return entries, false
		}
		entries = append(entries, journalEntry{s, p})
	}
	return entries, false
}
