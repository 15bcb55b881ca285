package users

// set_passwords (cloud-init cc_set_passwords, init stage, per-instance, all
// distros):
//
//  1. chpasswd.users sets each user's password: type "text" (hashed here
//     with SHA-512 crypt, as chpasswd does), "hash" (the default: written
//     as given) or "RANDOM" (a generated 20-character password). The
//     deprecated chpasswd.list ("user:password" lines, as a list or a
//     multi-line string) is translated by the decoder: a value matching
//     cloud-init's crypt pattern is a hash, "R"/"RANDOM" a random password.
//  2. Without either, `password` is the default user's.
//  3. Generated passwords are printed to the console only
//     ("Set the following 'random' passwords"), never logged.
//  4. chpasswd.expire (default true) expires every password it set (plain
//     and random first, then hashed, as cloud-init orders them):
//     `passwd --expire USER`, or, where passwd is busybox's (Alpine's
//     bbsuid), the shadow entry's last-change day set to 0.
//  5. ssh_pwauth true/false sets PasswordAuthentication in sshd's config
//     (sshd_config.d/50-cloud-init.conf when sshd_config includes it).
//     When the file changed on a booted system, sshd is restarted through
//     the service manager: under systemd only if `systemctl show` says it
//     is active (with --job-mode=ignore-dependencies), elsewhere always. In
//     the initramfs nothing is restarted: sshd has not started yet.
//
// A failure for one user is recorded and the others still apply; the
// module fails with every error at the end, as cloud-init re-raises.

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"strings"
	"sync"

	"github.com/cloudroot/cloudroot/pkg/distro"
	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
	"github.com/cloudroot/cloudroot/pkg/modules"
	"github.com/cloudroot/cloudroot/pkg/modules/internal/ugutil"
	"github.com/cloudroot/cloudroot/pkg/state"
	"github.com/cloudroot/cloudroot/pkg/target"
)

// SetPasswords is cc_set_passwords.
var SetPasswords = modules.Module{
	Name:      "set_passwords",
	Frequency: state.PerInstance,
	Keys:      []string{"chpasswd", "password", "ssh_pwauth"},
	Run:       modules.Typed(runSetPasswords),
}

// Password types of chpasswd.users.
const (
	pwText   = "text"
	pwHash   = "hash"
	pwRandom = "RANDOM"
)

// pwEntry is one password to set.
type pwEntry struct {
	User     string
	Password ugutil.Secret
	Type     string // pwText, pwHash or pwRandom
}

// passwordsConfig is the module's configuration, decoded once.
type passwordsConfig struct {
	// Entries are chpasswd.users followed by the deprecated chpasswd.list.
	Entries []pwEntry
	// Password is the default user's password (`password`), if set.
	Password ugutil.Secret
	Expire   bool
	// PwAuth is "yes", "no" or "" (leave unchanged).
	PwAuth string
}

// cryptRE is cloud-init's test for a hash in chpasswd.list.
var cryptRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\$(1|2a|2y|5|6)(\$.+){2}`) })

// setPasswordsKeys is the module's configuration.
type setPasswordsKeys struct {
	Password string `cfg:"password,scalar"`
	// Chpasswd is nil when chpasswd is not a mapping.
	Chpasswd *struct {
		Expire bool `cfg:"expire,default=true"`
		// Users are the entries as given (each checked for a name); nil
		// when users is not a list.
		Users []chpasswdUser `cfg:"users,loose"`
		// List is the deprecated list: a list or a multiline string.
		List any `cfg:"list"`
	} `cfg:"chpasswd,loose"`
	// PwAuth is ssh_pwauth as given: a bool, or a deprecated string.
	PwAuth any         `cfg:"ssh_pwauth"`
	Users  ugutil.Keys `cfg:",inline"`
}

// chpasswdUser is one chpasswd.users entry; OK is false when it is not a
// mapping.
type chpasswdUser struct {
	OK     bool
	Fields struct {
		Name     string `cfg:"name,scalar"`
		Type     string `cfg:"type,scalar,default=hash"`
		Password string `cfg:"password,scalar,default=RANDOM"`
	}
}

// UnmarshalPy implements pyval.Unmarshaler.
func (u *chpasswdUser) UnmarshalPy(d *pyval.Decoder, v any) error {
	u.OK = v != nil && d.DecodeValue("", v, &u.Fields) == nil
	return nil
}

// decodeSetPasswords reads chpasswd, password and ssh_pwauth, translating
// the deprecated forms with cloud-init's deprecation messages.
func decodeSetPasswords(c *modules.Context, cfg setPasswordsKeys) (passwordsConfig, error) {
	pc := passwordsConfig{Expire: true}
	var errs []error
	pc.Password = ugutil.Secret(cfg.Password)
	if ch := cfg.Chpasswd; ch != nil {
		pc.Expire = ch.Expire
		for i, u := range ch.Users {
			if !u.OK || u.Fields.Name == "" {
				errs = append(errs, fmt.Errorf("chpasswd.users.%d: an entry needs a name", i))
				continue
			}
			e := pwEntry{User: u.Fields.Name, Type: u.Fields.Type, Password: ugutil.Secret(u.Fields.Password)}
			switch e.Type {
			case pwText, pwHash, pwRandom:
			default:
				// cloud-init sets no password for an unknown type.
				c.Warnf("chpasswd.users.%d: unknown type %q for %s; password not changed", i, e.Type, e.User)
				continue
			}
			pc.Entries = append(pc.Entries, e)
		}
		var lines []string
		switch l := ch.List.(type) {
		case []any:
			if len(l) > 0 {
				c.Deprecate("Config key 'lists'", "22.3", "Use 'users' instead.")
			}
			lines = pyval.ScalarList(l)
		case string:
			if l != "" {
				c.Deprecate("Config key 'lists'", "22.3", "Use 'users' instead.")
				c.Deprecate("The chpasswd multiline string", "22.2", "Use string type instead.")
				lines = strings.Split(strings.TrimRight(strings.ReplaceAll(l, "\r\n", "\n"), "\n"), "\n")
			}
		}
		for i, line := range lines {
			u, p, ok := strings.Cut(line, ":")
			if !ok {
				errs = append(errs, fmt.Errorf("chpasswd.list.%d: not user:password", i))
				continue
			}
			e := pwEntry{User: u, Password: ugutil.Secret(p), Type: pwText}
			switch {
			case cryptRE().MatchString(p) && !strings.Contains(p, ":"):
				e.Type = pwHash
			case p == "R" || p == pwRandom:
				e.Type = pwRandom
			}
			pc.Entries = append(pc.Entries, e)
		}
	}
	switch v := cfg.PwAuth.(type) {
	case nil:
	case bool:
		pc.PwAuth = map[bool]string{true: "yes", false: "no"}[v]
	case string:
		c.Deprecate("Using a string value for the 'ssh_pwauth' key", "22.2", "Use a boolean value with 'ssh_pwauth'.")
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "true", "1", "on", "yes", "y":
			pc.PwAuth = "yes"
		case "false", "0", "off", "no", "n":
			pc.PwAuth = "no"
		case "unchanged":
		default:
			c.Warnf("Leaving SSH config 'PasswordAuthentication' unchanged. Unrecognized value: ssh_pwauth=%s", v)
		}
	default:
		c.Warnf("Leaving SSH config 'PasswordAuthentication' unchanged. Unrecognized value: ssh_pwauth=%v", v)
	}
	return pc, errors.Join(errs...)
}

func runSetPasswords(ctx context.Context, c *modules.Context, cfg setPasswordsKeys) error {
	pc, err := decodeSetPasswords(c, cfg)
	errs := []error{err}
	entries := pc.Entries
	if len(entries) == 0 && pc.Password != "" {
		_, def, _, err := ugutil.Normalize(cfg.Users, c.Distro.DefaultUser(), c.Warnf)
		switch {
		case err != nil:
			errs = append(errs, err)
		case def == nil:
			c.Warnf("No default or defined user to change password for.")
		default:
			entries = []pwEntry{{User: def.Name, Password: pc.Password, Type: pwText}}
			if p := string(pc.Password); p == "R" || p == pwRandom {
				entries[0].Type = pwRandom
			} else if cryptRE().MatchString(p) && !strings.Contains(p, ":") {
				entries[0].Type = pwHash
			}
		}
	}
	// cloud-init sets the plain-text and random passwords first, then the
	// hashed ones, and expires them in that order, whether or not setting
	// one failed.
	var plain, hashed []pwEntry
	for _, e := range entries {
		if e.Type == pwHash {
			hashed = append(hashed, e)
		} else {
			plain = append(plain, e)
		}
	}
	var random []string
	for _, e := range append(plain, hashed...) {
		hash := string(e.Password)
		if e.Type != pwHash {
			pw := string(e.Password)
			if e.Type == pwRandom {
				if pw, err = randomPassword(20); err != nil {
					errs = append(errs, err)
					continue
				}
				random = append(random, e.User+":"+pw)
			}
			if hash, err = target.HashPassword(pw); err != nil {
				errs = append(errs, fmt.Errorf("hashing password of %s: %w", e.User, err))
				continue
			}
		}
		c.Log.Debug("setting password", "module", "set_passwords", "user", e.User, "type", e.Type)
		if err := c.Root.SetPasswordHash(e.User, hash); err != nil {
			errs = append(errs, fmt.Errorf("failed to set password for %s: %w", e.User, err))
		}
	}
	if len(random) > 0 {
		c.ToConsole("Set the following 'random' passwords\n\n" + strings.Join(random, "\n") + "\n")
	}
	if pc.Expire {
		for _, e := range append(plain, hashed...) {
			if err := expirePassword(ctx, c, e.User); err != nil {
				errs = append(errs, fmt.Errorf("failed to set 'expire' for %s: %w", e.User, err))
			}
		}
	}
	if err := applyPwAuth(ctx, c, pc.PwAuth); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// expirePassword is distro.expire_passwd: `passwd --expire`, except with
// busybox's passwd (Alpine's /usr/bin/passwd → bbsuid), which cannot, so
// the shadow entry is edited as cloud-init's Alpine class does.
func expirePassword(ctx context.Context, c *modules.Context, user string) error {
	if c.Distro.Family == "alpine" {
		if t, err := c.Readlink("/usr/bin/passwd"); err == nil && strings.Contains(t, "bbsuid") {
			return c.Root.ExpirePassword(user)
		}
	}
	return c.RunCmd(ctx, distro.Cmd{Argv: []string{"passwd", "--expire", user}})
}

// applyPwAuth is handle_ssh_pwauth: value "" leaves sshd's config alone.
func applyPwAuth(ctx context.Context, c *modules.Context, value string) error {
	if value == "" {
		return nil
	}
	updated, err := updateSSHDConfig(c, "PasswordAuthentication", value)
	if err != nil {
		return fmt.Errorf("ssh_pwauth: %w", err)
	}
	if !updated {
		c.Log.Debug("No need to restart SSH service, PasswordAuthentication not updated.", "module", "set_passwords")
		return nil
	}
	if !c.Booted {
		c.Log.Debug("sshd not started yet; it reads PasswordAuthentication when it starts", "module", "set_passwords")
		return nil
	}
	f := c.Facts()
	svc := f.SSHService
	var extra []string
	if f.Init == distro.InitSystemd {
		out, err := c.RunOutput(ctx, "systemctl", "show", "--property", "ActiveState", "--value", svc)
		if err != nil {
			return fmt.Errorf("ssh_pwauth: %w", err)
		}
		switch strings.ToLower(strings.TrimSpace(out)) {
		case "active", "activating", "reloading":
		default:
			return nil
		}
		extra = []string{"--job-mode=ignore-dependencies"}
	}
	if err := c.ManageService(ctx, f, distro.ActionRestart, svc, extra...); err != nil {
		c.Warnf("'ssh_pwauth' configuration may not be applied. Cloud-init was unable to restart SSH daemon due to error: '%v'", err)
	}
	return nil
}

// randomPassword is rand_user_password: at least one digit, lower- and
// upper-case letter and punctuation character, the rest from all four.
func randomPassword(n int) (string, error) {
	const (
		digits = "0123456789"
		lower  = "abcdefghijklmnopqrstuvwxyz"
		upper  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
		punct  = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
	)
	pick := func(set string) (byte, error) {
		i, err := rand.Int(rand.Reader, big.NewInt(int64(len(set))))
		if err != nil {
			return 0, fmt.Errorf("random password: %w", err)
		}
		return set[i.Int64()], nil
	}
	var out []byte
	for i := 0; i < n; i++ {
		set := digits + lower + upper + punct
		if i < 4 {
			set = []string{digits, lower, upper, punct}[i]
		}
		b, err := pick(set)
		if err != nil {
			return "", err
		}
		out = append(out, b)
	}
	for i := len(out) - 1; i > 0; i-- {
		j, err := rand.Int(rand.Reader, big.NewInt(int64(i+1)))
		if err != nil {
			return "", fmt.Errorf("random password: %w", err)
		}
		out[i], out[j.Int64()] = out[j.Int64()], out[i]
	}
	return string(out), nil
}
