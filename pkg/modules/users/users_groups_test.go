package users

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cloudroot/cloudroot/pkg/modules"
	"github.com/cloudroot/cloudroot/pkg/modules/internal/famtest"
	"github.com/cloudroot/cloudroot/pkg/modules/internal/modtest"
	"github.com/cloudroot/cloudroot/pkg/target"
)

func TestUsersGroupsSudoersFresh(t *testing.T) {
	r := modtest.AccountsRoot(t, "")
	os.Remove(filepath.Join(r.Dir(), "etc/sudoers"))
	c, _ := famtest.Accounts(t, r, modules.Config{"users": []any{
		map[string]any{"name": "a", "sudo": "ALL=(ALL) NOPASSWD:ALL"},
		map[string]any{"name": "b", "sudo": []any{"ALL=(ALL) ALL"}},
	}}, nil)
	for range 2 { // the second run must not duplicate the blocks
		if err := UsersGroups.Run(context.Background(), c); err != nil {
			t.Fatal(err)
		}
	}
	want := "# Created by cloud-init v. 26.2-cloudroot on Sun, 22 Nov 2026 08:36:48 +0000\n\n" +
		"# User rules for a\na ALL=(ALL) NOPASSWD:ALL\n\n# User rules for b\nb ALL=(ALL) ALL\n"
	b, err := r.ReadFile(CloudSudoersFile)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, string(b)); diff != "" {
		t.Errorf("sudoers (-want +got):\n%s", diff)
	}
	if fi, _ := r.Stat(CloudSudoersFile); fi.Mode().Perm() != 0o440 {
		t.Errorf("mode = %v", fi.Mode())
	}
	if r.Exists(SudoersFile) {
		t.Error("/etc/sudoers created")
	}
	if fi, _ := r.Stat(SudoersDir); fi.Mode().Perm() != 0o750 {
		t.Errorf("sudoers.d mode = %v", fi.Mode())
	}
}

func TestEnsureSudoDir(t *testing.T) {
	tests := []struct {
		name, sudoers string
		appended      bool
	}{
		{"hash includedir", "#includedir /etc/sudoers.d\n", false},
		{"at includedir", "@includedir /etc/sudoers.d/\n", false},
		{"other dir", "#includedir /etc/other\n", true},
		{"commented", "# includedir /etc/sudoers.d\n", true},
		{"none, no final newline", "root ALL=(ALL) ALL", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := modtest.AccountsRoot(t, "")
			sp := filepath.Join(r.Dir(), "etc/sudoers")
			os.Remove(sp)
			if err := os.WriteFile(sp, []byte(tt.sudoers), 0o440); err != nil {
				t.Fatal(err)
			}
			os.Chmod(sp, 0o440)
			c, _ := famtest.Accounts(t, r, nil, nil)
			if err := ensureSudoDir(c); err != nil {
				t.Fatal(err)
			}
			b, _ := r.ReadFile(SudoersFile)
			want := tt.sudoers
			if tt.appended {
				want += "\n# Added by cloud-init v. 26.2-cloudroot on Sun, 22 Nov 2026 08:36:48 +0000\n#includedir /etc/sudoers.d\n"
			}
			if diff := cmp.Diff(want, string(b)); diff != "" {
				t.Errorf("sudoers (-want +got):\n%s", diff)
			}
			if fi, _ := r.Stat(SudoersFile); fi.Mode().Perm() != 0o440 {
				t.Errorf("mode = %v", fi.Mode())
			}
		})
	}
}

func TestDoasRules(t *testing.T) {
	r := modtest.AccountsRoot(t, "")
	c, _ := famtest.Accounts(t, r, nil, nil)
	if err := writeDoasRules(c, "alpine", []string{"permit nopass alpine"}); err != nil {
		t.Fatal(err)
	}
	if err := writeDoasRules(c, "alpine", []string{"permit nopass bob"}); err == nil {
		t.Error("rule for another user accepted")
	}
	b, _ := r.ReadFile(DoasFile)
	want := "# Created by cloud-init v. 26.2-cloudroot on Sun, 22 Nov 2026 08:36:48 +0000\n\n# cloud-init User rules for alpine\npermit nopass alpine\n"
	if diff := cmp.Diff(want, string(b)); diff != "" {
		t.Errorf("doas.conf (-want +got):\n%s", diff)
	}
}

func TestUsersGroupsPlainTextPassword(t *testing.T) {
	r := modtest.AccountsRoot(t, "")
	c, _ := famtest.Accounts(t, r, modules.Config{"users": []any{
		map[string]any{"name": "p", "plain_text_passwd": "s3cret", "lock_passwd": false},
	}}, nil)
	var logs bytes.Buffer
	c.Log = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if err := UsersGroups.Run(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	s, err := r.LookupShadow("p")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := target.SHA512Crypt("s3cret", s.Hash); got != s.Hash {
		t.Errorf("hash %q does not verify", s.Hash)
	}
	if strings.Contains(logs.String(), "s3cret") || strings.Contains(logs.String(), s.Hash) {
		t.Error("password or hash logged")
	}
}
