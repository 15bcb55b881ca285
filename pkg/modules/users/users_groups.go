package users

// users_groups (cloud-init cc_users_groups): groups first, then users, all
// edited in the target's account files through pkg/target (no useradd in
// the initramfs). Per user, as cloud-init's distro.create_user:
//
//   - An existing user is not recreated ("already exists, skipping"), but
//     its password hash, lock, sudo/doas rules and keys are still applied.
//   - plain_text_passwd is hashed with SHA-512 crypt; hashed_passwd wins
//     over it; passwd (legacy) only applies to a new user; lock_passwd
//     (default true) then prefixes the hash with "!".
//   - sudo rules go to /etc/sudoers.d/90-cloud-init-users (0440) with
//     cloud-init's header and one "# User rules for <name>" block per user,
//     appended when not already there; /etc/sudoers, when it exists, gets
//     "#includedir /etc/sudoers.d" unless it includes that directory.
//     (cloud-init also creates /etc/sudoers when missing; cloudroot does not,
//     since a target without it has no sudo.)
//   - ssh_authorized_keys go to the user's authorized_keys (see ssh.go).
//   - Failures of one group or user are collected and joined; the others
//     are still processed.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strings"
	"sync"

	"github.com/cloudroot/cloudroot/pkg/modules"
	"github.com/cloudroot/cloudroot/pkg/modules/internal/ugutil"
	"github.com/cloudroot/cloudroot/pkg/state"
	"github.com/cloudroot/cloudroot/pkg/target"
)

// Paths written by users_groups.
const (
	SudoersFile      = "/etc/sudoers"
	SudoersDir       = "/etc/sudoers.d"
	CloudSudoersFile = SudoersDir + "/90-cloud-init-users"
	DoasFile         = "/etc/doas.conf"
)

// UsersGroups is cloud-init's users_groups module.
var UsersGroups = modules.Module{
	Name:      "users_groups",
	Frequency: state.PerInstance,
	Keys:      []string{"groups", "user", "users"},
	Run:       modules.Typed(runUsersGroups),
}

func runUsersGroups(ctx context.Context, c *modules.Context, cfg ugutil.Keys) error {
	users, def, groups, err := ugutil.Normalize(cfg, c.Distro.DefaultUser(), c.Warnf)
	var errs []error
	errs = append(errs, eachWrapped(err, "users_groups: %w")...)
	for _, g := range groups {
		if err := createGroup(c, g); err != nil {
			errs = append(errs, fmt.Errorf("users_groups: group %s: %w", g.Name, err))
		}
	}
	var defName string
	if def != nil {
		defName = def.Name
	}
	for _, u := range users {
		if err := ctx.Err(); err != nil {
			return errors.Join(append(errs, err)...)
		}
		if err := createUser(c, u, defName); err != nil {
			errs = append(errs, fmt.Errorf("users_groups: add user %s: %w", u.Name, err))
		}
	}
	return errors.Join(errs...)
}

// eachWrapped wraps every error joined in err with format.
func eachWrapped(err error, format string) []error {
	if err == nil {
		return nil
	}
	list := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		list = j.Unwrap()
	}
	out := make([]error, 0, len(list))
	for _, e := range list {
		out = append(out, fmt.Errorf(format, e))
	}
	return out
}

func logInfo(c *modules.Context, msg string, args ...any) {
	if c.Log != nil {
		c.Log.Info(msg, args...)
	}
}

// createGroup is distro.create_group: create unless present, then add the
// members that exist.
func createGroup(c *modules.Context, g ugutil.Group) error {
	_, created, err := c.Root.AddGroup(g.Name, target.GroupOpts{})
	if err != nil {
		return err
	}
	if created {
		logInfo(c, "created group", "group", g.Name)
	} else {
		logInfo(c, "skipping creation of existing group", "group", g.Name)
	}
	var add []string
	for _, m := range g.Members {
		if _, err := c.Root.LookupUser(m); err != nil {
			c.Warnf("Unable to add group member '%s' to group '%s'; user does not exist.", m, g.Name)
			continue
		}
		add = append(add, m)
	}
	if len(add) > 0 {
		return c.Root.AddGroupMembers(g.Name, add...)
	}
	return nil
}

func createUser(c *modules.Context, u ugutil.User, defaultUser string) error {
	var noHome, needHome []string
	if u.NoCreateHome {
		noHome = append(noHome, "no_create_home")
	}
	if u.System {
		noHome = append(noHome, "system")
	}
	if u.SSHAuthorizedKeysSet && len(u.SSHAuthorizedKeys) > 0 {
		needHome = append(needHome, "ssh_authorized_keys")
	}
	if len(u.SSHImportID) > 0 {
		needHome = append(needHome, "ssh_import_id")
	}
	if u.SSHRedirectUser {
		needHome = append(needHome, "ssh_redirect_user")
	}
	if len(noHome) > 0 && len(needHome) > 0 {
		return fmt.Errorf("key(s) %s cannot be provided with %s", strings.Join(needHome, ", "), strings.Join(noHome, ", "))
	}
	if u.SSHRedirectUser && (u.SSHAuthorizedKeysSet || len(u.SSHImportID) > 0) {
		return errors.New("ssh_redirect_user cannot be combined with ssh_authorized_keys or ssh_import_id")
	}
	if u.Snapuser != "" {
		return errors.New("snapuser is not supported (no snapd in the initramfs)")
	}
	if len(u.SSHImportID) > 0 {
		c.Warnf("users_groups: user %s: ssh_import_id is not supported by cloudroot; keys not imported", u.Name)
	}
	if u.SELinuxUser != "" {
		c.Warnf("users_groups: user %s: selinux_user is not supported by cloudroot; ignored", u.Name)
	}

	spec := target.UserSpec{
		Name:           u.Name,
		Gecos:          u.Gecos,
		Home:           u.Homedir,
		Shell:          u.Shell,
		PrimaryGroup:   u.PrimaryGroup,
		UID:            u.UID,
		Groups:         u.Groups,
		System:         u.System,
		NoCreateHome:   u.NoCreateHome,
		NoUserGroup:    u.NoUserGroup,
		NoCreateGroups: !u.CreateGroups,
		Passwd:         string(u.Passwd),
		HashedPasswd:   string(u.HashedPasswd),
		LockPasswd:     u.LockPasswd,
		ExpireDate:     u.ExpireDate,
		Inactive:       u.Inactive,
	}
	if spec.HashedPasswd == "" && u.PlainTextPasswd != "" {
		h, err := target.HashPassword(string(u.PlainTextPasswd))
		if err != nil {
			return err
		}
		spec.HashedPasswd = h
	}
	user, created, err := c.Root.AddUser(spec)
	if err != nil {
		return err
	}
	if created {
		logInfo(c, "created user", "user", u.Name, "uid", user.UID)
	} else {
		logInfo(c, "user already exists, skipping creation", "user", u.Name)
	}

	var errs []error
	if len(u.Doas) > 0 {
		if err := writeDoasRules(c, u.Name, u.Doas); err != nil {
			errs = append(errs, err)
		}
	}
	if len(u.Sudo) > 0 {
		if err := writeSudoRules(c, u.Name, u.Sudo); err != nil {
			errs = append(errs, err)
		}
	}
	if u.SSHAuthorizedKeysSet {
		if err := setupUserKeys(c, user, u.SSHAuthorizedKeys, nil); err != nil {
			errs = append(errs, fmt.Errorf("authorized keys: %w", err))
		}
	}
	if u.SSHRedirectUser {
		keys := publicKeys(c)
		switch {
		case defaultUser == "":
			c.Warnf("users_groups: ssh_redirect_user for %s: no default user is configured", u.Name)
		case len(keys) == 0:
			c.Warnf("Unable to disable SSH logins for %s given ssh_redirect_user: %s. No cloud public-keys present.", u.Name, defaultUser)
		default:
			opts := disableUserOpts(DefaultDisableRootOpts, defaultUser, u.Name)
			if err := setupUserKeys(c, user, keys, &opts); err != nil {
				errs = append(errs, fmt.Errorf("redirect keys: %w", err))
			}
		}
	}
	return errors.Join(errs...)
}

var includedirRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[#|@]includedir\s+(.*)$`) })

// ensureSudoDir is distro.ensure_sudo_dir for an existing /etc/sudoers.
func ensureSudoDir(c *modules.Context) error {
	b, err := c.Root.ReadFile(SudoersFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("read %s: %w", SudoersFile, err)
	default:
		found := false
		for l := range strings.SplitSeq(string(b), "\n") {
			if m := includedirRE().FindStringSubmatch(strings.TrimSpace(l)); m != nil {
				if d := strings.TrimSpace(m[1]); d != "" && path.Clean(d) == SudoersDir {
					found = true
					break
				}
			}
		}
		if !found {
			fi, err := c.Root.Stat(SudoersFile)
			if err != nil {
				return err
			}
			add := "\n" + c.MakeHeader("Added") + "\n#includedir " + SudoersDir + "\n"
			if err := c.Root.WriteFileOpts(SudoersFile, []byte(add), modules.SameOwner(fi, true)); err != nil {
				return fmt.Errorf("update %s: %w", SudoersFile, err)
			}
		}
	}
	// util.ensure_dir: an existing directory is chmodded too (Debian's
	// sudo ships it 0755).
	if err := c.Root.MkdirAll(SudoersDir, 0o750); err != nil {
		return err
	}
	return c.Root.Chmod(SudoersDir, 0o750)
}

// writeSudoRules is distro.write_sudo_rules.
func writeSudoRules(c *modules.Context, user string, rules []string) error {
	lines := []string{"", "# User rules for " + user}
	for _, r := range rules {
		lines = append(lines, user+" "+r)
	}
	content := strings.Join(lines, "\n") + "\n"
	if err := ensureSudoDir(c); err != nil {
		return err
	}
	old, err := c.Root.ReadFile(CloudSudoersFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		data := c.MakeHeader("Created") + "\n" + content
		if err := c.Root.WriteFileOpts(CloudSudoersFile, []byte(data), modules.RootOwned(0o440)); err != nil {
			return fmt.Errorf("write sudoers: %w", err)
		}
	case err != nil:
		return fmt.Errorf("read sudoers: %w", err)
	case !strings.Contains(string(old), content):
		fi, err := c.Root.Stat(CloudSudoersFile)
		if err != nil {
			return err
		}
		if err := c.Root.WriteFileOpts(CloudSudoersFile, []byte(content), modules.SameOwner(fi, true)); err != nil {
			return fmt.Errorf("append sudoers: %w", err)
		}
	}
	return nil
}

var doasRuleRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(?:permit|deny)(?:\s+(?:nolog|nopass|persist|keepenv|setenv \{[^}]+\})+)*\s+([a-zA-Z0-9_]+)+(?:\s+as\s+[a-zA-Z0-9_]+)*(?:\s+cmd\s+[^\s]+(?:\s+args\s+[^\s]+(?:\s*[^\s]+)*)*)*\s*$`)
})

// writeDoasRules is distro.write_doas_rules: every rule must name the user,
// else none is written.
func writeDoasRules(c *modules.Context, user string, rules []string) error {
	for _, r := range rules {
		m := doasRuleRE().FindStringSubmatch(r)
		if m == nil || m[1] != user {
			return fmt.Errorf("invalid doas rule %q for user %s, not writing any doas rules for user", r, user)
		}
	}
	content := strings.Join(append([]string{"", "# cloud-init User rules for " + user}, rules...), "\n") + "\n"
	old, err := c.Root.ReadFile(DoasFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		data := c.MakeHeader("Created") + "\n" + content
		return c.Root.WriteFileOpts(DoasFile, []byte(data), modules.RootOwned(0o440))
	case err != nil:
		return fmt.Errorf("read %s: %w", DoasFile, err)
	case !strings.Contains(string(old), content):
		fi, err := c.Root.Stat(DoasFile)
		if err != nil {
			return err
		}
		return c.Root.WriteFileOpts(DoasFile, []byte(content), modules.SameOwner(fi, true))
	}
	return nil
}
