package users

// ssh (cloud-init cc_ssh, plus ssh_pwauth from cc_set_passwords), applied
// to the target without running ssh-keygen or restarting sshd:
//
//  1. ssh_deletekeys (default true) removes /etc/ssh/ssh_host_*key*.
//  2. ssh_keys, when given, writes the host keys/certificates it names
//     (<type>_private 0600, <type>_public and <type>_certificate 0644;
//     certificates are announced with HostCertificate in sshd's config) and
//     derives a missing public key from its private key. Otherwise
//     ssh_genkeytypes (default rsa, ecdsa, ed25519) generates each missing
//     /etc/ssh/ssh_host_<type>_key (OpenSSH format, RSA 3072, ECDSA P-256)
//     concurrently, with "<key>.pub" 0644 commented root@<hostname>, and
//     prints what ssh-keygen prints (fingerprint, randomart) unless
//     ssh_quiet_keygen. Keys come from Context.HostKeys (made in the
//     background once entropy is ready); when the kernel RNG is not ready
//     in time they are deferred through Context.DeferHostKeys (hostkeys.go),
//     never silently skipped. When the
//     target has an ssh_keys group, private keys are 0640 root:ssh_keys
//     (cloud-init's RHEL behaviour) instead of 0600 root:root.
//  3. The meta-data public-keys (unless allow_public_ssh_keys is false) and
//     ssh_authorized_keys go to the default user's authorized_keys, and to
//     root's, each prefixed with disable_root_opts when disable_root
//     (default true). As in cloud-init, without a default user root's keys
//     still carry the options, with $USER replaced by "NONE".
//
// ssh_pwauth belongs to set_passwords, as in cloud-init; the sshd_config
// editing both share (updateSSHDConfig, appendSSHDConfig) lives here: the
// drop-in /etc/ssh/sshd_config.d/50-cloud-init.conf when sshd_config
// includes that directory (or is absent while the directory exists, as on
// SUSE with /usr/etc/ssh/sshd_config), else sshd_config itself, where a
// new line goes before the first Match block (cloud-init appends it at the
// end, inside any trailing Match block). Nothing is written when the target
// has neither.
//
// authorized_keys files are merged like cloud-init's ssh_util: existing
// lines are kept, a key already present (same base64) is replaced in place
// by the new entry, new keys are appended; the directory is 0700 and both
// are owned by the user.

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"sync"

	"golang.org/x/crypto/ssh"

	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
	"github.com/cloudroot/cloudroot/pkg/modules"
	"github.com/cloudroot/cloudroot/pkg/modules/internal/ugutil"
	"github.com/cloudroot/cloudroot/pkg/state"
	"github.com/cloudroot/cloudroot/pkg/target"
)

// Paths and defaults of the ssh module.
const (
	SSHDConfig         = "/etc/ssh/sshd_config"
	SSHDConfigDir      = SSHDConfig + ".d"
	SSHDCloudInitConf  = SSHDConfigDir + "/50-cloud-init.conf"
	hostKeyTemplate    = "/etc/ssh/ssh_host_%s_key"
	DefaultRSAKeyBits  = 3072
	DefaultAuthKeyFile = ".ssh/authorized_keys"

	// DefaultDisableRootOpts is cloud-init's ssh_util.DISABLE_USER_OPTS.
	DefaultDisableRootOpts = `no-port-forwarding,no-agent-forwarding,no-X11-forwarding,command="echo 'Please login as the user \"$USER\" rather than the user \"$DISABLE_USER\".';echo;sleep 10;exit 142"`
)

// DefaultGenKeyTypes is cloud-init's GENERATE_KEY_NAMES.
var DefaultGenKeyTypes = []string{"rsa", "ecdsa", "ed25519"}

// SSH is cloud-init's ssh module.
var SSH = modules.Module{
	Name:      "ssh",
	Frequency: state.PerInstance,
	Keys: []string{"ssh_keys", "ssh_authorized_keys", "ssh_deletekeys", "ssh_genkeytypes", "disable_root",
		"disable_root_opts", "allow_public_ssh_keys", "ssh_quiet_keygen", "ssh_publish_hostkeys", "ssh_pwauth"},
	Run: modules.Typed(runSSH),
}

// sshConfig is the ssh module's configuration.
type sshConfig struct {
	DeleteKeys bool `cfg:"ssh_deletekeys,default=true"`
	// Keys is ssh_keys (Mapping false when absent or not a mapping;
	// writeGivenHostKeys reads its TYPE_private, TYPE_public and
	// TYPE_certificate entries).
	Keys        pyval.Dict `cfg:"ssh_keys"`
	HasGenTypes bool       `cfg:"ssh_genkeytypes,present"`
	GenTypes    []string   `cfg:"ssh_genkeytypes,scalar"`
	QuietKeygen bool       `cfg:"ssh_quiet_keygen"`
	AllowPublic bool       `cfg:"allow_public_ssh_keys,default=true"`
	// AuthorizedKeys is ssh_authorized_keys as given (keyList reads it).
	AuthorizedKeys  any         `cfg:"ssh_authorized_keys"`
	DisableRoot     bool        `cfg:"disable_root,default=true"`
	HasRootOpts     bool        `cfg:"disable_root_opts,present"`
	DisableRootOpts string      `cfg:"disable_root_opts,scalar"`
	Users           ugutil.Keys `cfg:",inline"`
}

// generateHostKey makes a private key of type kind; tests may replace it.
var generateHostKey = func(kind string) (crypto.Signer, error) {
	switch kind {
	case "rsa":
		return rsa.GenerateKey(rand.Reader, DefaultRSAKeyBits)
	case "ecdsa":
		return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case "ed25519":
		_, k, err := ed25519.GenerateKey(rand.Reader)
		return k, err
	}
	return nil, fmt.Errorf("unsupported host key type %q", kind)
}

func runSSH(ctx context.Context, c *modules.Context, cfg sshConfig) error {
	var errs []error
	if cfg.DeleteKeys {
		keys, err := c.Root.Glob("/etc/ssh/ssh_host_*key*")
		if err != nil {
			errs = append(errs, fmt.Errorf("ssh: %w", err))
		}
		for _, k := range keys {
			if err := c.Root.Remove(k); err != nil {
				errs = append(errs, fmt.Errorf("ssh: delete host key: %w", err))
			}
		}
	}
	if cfg.Keys.Mapping {
		errs = append(errs, writeGivenHostKeys(c, cfg.Keys))
	} else {
		types := DefaultGenKeyTypes
		if cfg.HasGenTypes {
			types = cfg.GenTypes
		}
		errs = append(errs, generateHostKeys(ctx, c, types, cfg.QuietKeygen))
	}
	if err := applyCredentials(c, cfg); err != nil {
		errs = append(errs, fmt.Errorf("ssh: applying SSH credentials failed: %w", err))
	}
	return errors.Join(errs...)
}

// hostKeyOwner is root:root 0600, or root:ssh_keys 0640 when that group exists.
func hostKeyOwner(c *modules.Context) target.WriteOpts {
	o := modules.RootOwned(0o600)
	if g, err := c.Root.LookupGroup("ssh_keys"); err == nil {
		o.Perm = 0o640
		if os.Geteuid() == 0 {
			o.GID = g.GID
		}
	}
	return o
}

func hostname(c *modules.Context) string {
	if b, err := c.Root.ReadFile("/etc/hostname"); err == nil {
		if h, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n"); strings.TrimSpace(h) != "" {
			return strings.TrimSpace(h)
		}
	}
	return "localhost"
}

func generateHostKeys(ctx context.Context, c *modules.Context, types []string, quiet bool) error {
	if err := c.Root.MkdirAll("/etc/ssh", 0o755); err != nil {
		return fmt.Errorf("ssh: %w", err)
	}
	var later []string
	if c.BackgroundHostKeys != nil {
		types, later = SplitHostKeyTypes(types)
		later = slices.DeleteFunc(later, func(kind string) bool { return c.Root.Exists(fmt.Sprintf(hostKeyTemplate, kind)) })
	}
	src := c.HostKeys
	if src == nil {
		src = directKeys{}
	}
	err := writeHostKeys(ctx, c, src, types, quiet)
	if len(later) == 0 {
		return err
	}
	d := modules.HostKeyDeferral{Types: later, Quiet: quiet, Reason: "ed25519/ecdsa are ready for sshd; " + strings.Join(later, ", ") + " follows in the booted system"}
	if berr := c.BackgroundHostKeys(d); berr != nil {
		// Nothing will take them over: made now, as cloud-init does.
		if c.Log != nil {
			c.Log.Warn("SSH host keys not left to the booted system, generating them now", "types", strings.Join(later, ","), "err", berr)
		}
		return errors.Join(err, writeHostKeys(ctx, c, src, later, quiet))
	}
	if c.Log != nil {
		c.Log.Info("SSH host key generation left to the booted system ("+BackgroundHostKeysUnit+"), sshd starts with the others", "types", strings.Join(later, ","))
	}
	return err
}

// writeHostKeys writes a key of each type in types that is missing, from
// src, concurrently, deferring through c.DeferHostKeys the types the
// kernel RNG was not ready for.
func writeHostKeys(ctx context.Context, c *modules.Context, src modules.HostKeySource, types []string, quiet bool) error {
	comment := "root@" + hostname(c)
	priv := hostKeyOwner(c)
	type result struct {
		kind, keyfile string
		pub           ssh.PublicKey
		err           error
	}
	var wg sync.WaitGroup
	res := make([]result, len(types))
	for i, kind := range types {
		keyfile := fmt.Sprintf(hostKeyTemplate, kind)
		if c.Root.Exists(keyfile) {
			continue
		}
		res[i] = result{kind: kind, keyfile: keyfile}
		wg.Go(func() {
			if ctx.Err() != nil {
				res[i].err = ctx.Err()
				return
			}
			res[i].pub, res[i].err = writeGeneratedKey(ctx, c, src, kind, keyfile, comment, priv)
		})
	}
	wg.Wait()
	var errs []error
	var deferred []string
	var noEntropy error
	for _, r := range res {
		switch {
		case r.kind == "":
		case deferrable(r.err):
			deferred = append(deferred, r.kind)
			noEntropy = r.err
		case r.err != nil:
			errs = append(errs, fmt.Errorf("ssh: generate %s host key: %w", r.kind, r.err))
		case !quiet && c.Out != nil:
			keygenReport(c.Out, r.kind, r.keyfile, comment, r.pub)
		}
	}
	if len(deferred) > 0 {
		d := modules.HostKeyDeferral{Types: deferred, Quiet: quiet, Reason: noEntropy.Error()}
		switch {
		case c.DeferHostKeys == nil:
			errs = append(errs, fmt.Errorf("ssh: generate %s host keys: %w", strings.Join(deferred, ", "), noEntropy))
		default:
			if err := c.DeferHostKeys(d); err != nil {
				errs = append(errs, fmt.Errorf("ssh: %s host keys neither generated (%v) nor deferred: %w", strings.Join(deferred, ", "), noEntropy, err))
			} else if c.Log != nil {
				c.Log.Info("SSH host key generation deferred to the booted system (cloudroot-hostkeys.service)", "types", strings.Join(deferred, ","), "reason", d.Reason)
			}
		}
	}
	return errors.Join(errs...)
}

func writeGeneratedKey(ctx context.Context, c *modules.Context, src modules.HostKeySource, kind, keyfile, comment string, priv target.WriteOpts) (ssh.PublicKey, error) {
	key, err := src.HostKey(ctx, kind)
	if err != nil {
		return nil, err
	}
	block, err := ssh.MarshalPrivateKey(key, comment)
	if err != nil {
		return nil, err
	}
	pub, err := ssh.NewPublicKey(key.Public())
	if err != nil {
		return nil, err
	}
	if err := c.Root.WriteFileOpts(keyfile, pem.EncodeToMemory(block), priv); err != nil {
		return nil, err
	}
	line := strings.TrimSuffix(string(ssh.MarshalAuthorizedKey(pub)), "\n") + " " + comment + "\n"
	if err := c.Root.WriteFileOpts(keyfile+".pub", []byte(line), modules.RootOwned(0o644)); err != nil {
		return nil, err
	}
	return pub, nil
}

// writeGivenHostKeys writes ssh_keys entries.
func writeGivenHostKeys(c *modules.Context, keys pyval.Dict) error {
	var errs []error
	var certs []string
	for _, e := range keys.Entries {
		k := e.Key
		kind, suffix, _ := strings.Cut(k, "_")
		if !slices.Contains(DefaultGenKeyTypes, kind) || (suffix != "private" && suffix != "public" && suffix != "certificate") {
			reason := "unrecognized"
			if kind == "dsa" {
				reason = "unsupported"
			}
			c.Warnf("Skipping %s ssh_keys entry: \"%s\"", reason, k)
			continue
		}
		fn := fmt.Sprintf(hostKeyTemplate, kind)
		o := modules.RootOwned(0o644)
		switch suffix {
		case "private":
			o = hostKeyOwner(c)
		case "public":
			fn += ".pub"
		case "certificate":
			fn += "-cert.pub"
			certs = append(certs, fn)
		}
		if err := c.Root.WriteFileOpts(fn, []byte(pyval.ScalarStr(e.Value)), o); err != nil {
			errs = append(errs, fmt.Errorf("ssh: write %s: %w", fn, err))
		}
	}
	for _, kind := range DefaultGenKeyTypes {
		priv, ok := keys.Get(kind + "_private")
		if _, hasPub := keys.Get(kind + "_public"); !ok || hasPub {
			continue
		}
		signer, err := ssh.ParsePrivateKey([]byte(pyval.ScalarStr(priv)))
		if err != nil {
			errs = append(errs, fmt.Errorf("ssh: %s_private: derive public key: %w", kind, err))
			continue
		}
		line := ssh.MarshalAuthorizedKey(signer.PublicKey())
		if err := c.Root.WriteFileOpts(fmt.Sprintf(hostKeyTemplate, kind)+".pub", line, modules.RootOwned(0o644)); err != nil {
			errs = append(errs, fmt.Errorf("ssh: write public key: %w", err))
		}
	}
	if len(certs) > 0 {
		if err := appendSSHDConfig(c, "HostCertificate", certs); err != nil {
			errs = append(errs, fmt.Errorf("ssh: HostCertificate: %w", err))
		}
	}
	return errors.Join(errs...)
}

// publicKeys is the datasource's get_public_ssh_keys: meta-data public-keys
// as a string (one key a line), a list, or a dict of name → key, list of
// keys, or {"openssh-key": key}.
func publicKeys(c *modules.Context) []string { return c.Metadata().PublicKeys }

func disableUserOpts(opts, user, disableUser string) string {
	return strings.ReplaceAll(strings.ReplaceAll(opts, "$USER", user), "$DISABLE_USER", disableUser)
}

// applyCredentials is cc_ssh.apply_credentials.
func applyCredentials(c *modules.Context, cfg sshConfig) error {
	var keys []string
	if cfg.AllowPublic {
		keys = publicKeys(c)
	}
	keys = append(keys, ugutil.KeyList(cfg.AuthorizedKeys)...)

	_, def, _, _ := ugutil.Normalize(cfg.Users, c.Distro.DefaultUser(), func(string, ...any) {})
	var errs []error
	userName := ""
	if def != nil {
		userName = def.Name
		u, err := c.Root.LookupUser(def.Name)
		if err != nil {
			errs = append(errs, fmt.Errorf("default user: %w", err))
		} else if err := setupUserKeys(c, u, keys, nil); err != nil {
			errs = append(errs, fmt.Errorf("default user %s: %w", u.Name, err))
		}
	}
	opts := ""
	if cfg.DisableRoot {
		if userName == "" {
			userName = "NONE"
		}
		o := DefaultDisableRootOpts
		if cfg.HasRootOpts {
			o = cfg.DisableRootOpts
		}
		opts = disableUserOpts(o, userName, "root")
	}
	root, err := c.Root.LookupUser("root")
	if err != nil {
		root = target.User{Name: "root", Home: "/root"}
	}
	if err := setupUserKeys(c, root, keys, &opts); err != nil {
		errs = append(errs, fmt.Errorf("root: %w", err))
	}
	return errors.Join(errs...)
}

// validKeyTypes is ssh_util.VALID_KEY_TYPES (built on first use: nothing
// is built at package init).
var validKeyTypes = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, t := range []string{
		"dsa", "ecdsa", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp256-cert-v01@openssh.com",
		"ecdsa-sha2-nistp384", "ecdsa-sha2-nistp384-cert-v01@openssh.com", "ecdsa-sha2-nistp521",
		"ecdsa-sha2-nistp521-cert-v01@openssh.com", "ed25519", "rsa", "rsa-sha2-256", "rsa-sha2-512",
		"sk-ecdsa-sha2-nistp256-cert-v01@openssh.com", "sk-ecdsa-sha2-nistp256@openssh.com",
		"sk-ssh-ed25519-cert-v01@openssh.com", "sk-ssh-ed25519@openssh.com", "ssh-dss",
		"ssh-dss-cert-v01@openssh.com", "ssh-ed25519", "ssh-ed25519-cert-v01@openssh.com", "ssh-rsa",
		"ssh-rsa-cert-v01@openssh.com", "ssh-xmss-cert-v01@openssh.com", "ssh-xmss@openssh.com",
	} {
		m[t] = true
	}
	return m
})

// authKeyLine is ssh_util.AuthKeyLine.
type authKeyLine struct {
	line                              string
	options, keytype, base64, comment string
}

func (k authKeyLine) valid() bool { return k.keytype != "" && k.base64 != "" }

func (k authKeyLine) String() string {
	if !k.valid() {
		return k.line
	}
	var toks []string
	for _, s := range []string{k.options, k.keytype, k.base64, k.comment} {
		if s != "" {
			toks = append(toks, s)
		}
	}
	return strings.Join(toks, " ")
}

// parseAuthKeyLine is AuthKeyLineParser.parse: options, when not nil,
// replace the line's own options.
func parseAuthKeyLine(src string, options *string) authKeyLine {
	line := strings.TrimRight(src, "\r\n")
	ent := strings.TrimSpace(line)
	if ent == "" || strings.HasPrefix(ent, "#") {
		return authKeyLine{line: src}
	}
	parse := func(s string) (kt, b64, comment string, ok bool) {
		f := strings.Fields(s)
		if len(f) < 2 || !validKeyTypes()[f[0]] {
			return "", "", "", false
		}
		rest := strings.TrimSpace(s)
		rest = strings.TrimSpace(strings.TrimPrefix(rest, f[0]))
		rest = strings.TrimSpace(strings.TrimPrefix(rest, f[1]))
		return f[0], f[1], rest, true
	}
	k := authKeyLine{line: src}
	kt, b64, comment, ok := parse(ent)
	opts := ""
	if !ok {
		var remain string
		opts, remain = extractKeyOptions(ent)
		if kt, b64, comment, ok = parse(remain); !ok {
			return k
		}
	}
	if options != nil {
		opts = *options
	}
	k.options, k.keytype, k.base64, k.comment = opts, kt, b64, comment
	return k
}

// extractKeyOptions is AuthKeyLineParser._extract_options: options run to
// the first unquoted blank.
func extractKeyOptions(ent string) (string, string) {
	quoted := false
	i := 0
	for i < len(ent) && (quoted || (ent[i] != ' ' && ent[i] != '\t')) {
		if i+1 >= len(ent) {
			i++
			break
		}
		switch {
		case ent[i] == '\\' && ent[i+1] == '"':
			i++
		case ent[i] == '"':
			quoted = !quoted
		}
		i++
	}
	return ent[:i], strings.TrimLeft(ent[i:], " \t")
}

// updateAuthorizedKeys is ssh_util.update_authorized_keys.
func updateAuthorizedKeys(old, keys []authKeyLine) string {
	// New keys are deduplicated by key material, first one wins (cloud-init
	// only drops identical lines, through a set).
	var toAdd []authKeyLine
	for _, k := range keys {
		if k.valid() && !slices.ContainsFunc(toAdd, func(a authKeyLine) bool { return a.base64 == k.base64 }) {
			toAdd = append(toAdd, k)
		}
	}
	keys = toAdd
	for i, ent := range old {
		if !ent.valid() {
			continue
		}
		for _, k := range keys {
			if k.valid() && k.base64 == ent.base64 {
				ent = k
				toAdd = slices.DeleteFunc(toAdd, func(a authKeyLine) bool { return a.base64 == k.base64 })
			}
		}
		old[i] = ent
	}
	old = append(old, toAdd...)
	lines := make([]string, 0, len(old)+1)
	for _, e := range old {
		lines = append(lines, e.String())
	}
	return strings.Join(append(lines, ""), "\n")
}

// authorizedKeysPath is the first AuthorizedKeysFile of sshd_config inside
// u's home (%h, %u and %% expanded; relative paths are home-relative), else
// ~/.ssh/authorized_keys, as cloud-init's extract_authorized_keys picks it.
func authorizedKeysPath(c *modules.Context, u target.User) string {
	def := path.Join(u.Home, DefaultAuthKeyFile)
	b, err := c.Root.ReadFile(SSHDConfig)
	if err != nil {
		return def
	}
	for l := range strings.SplitSeq(string(b), "\n") {
		k, v := sshdKV(l)
		if !strings.EqualFold(k, "AuthorizedKeysFile") {
			continue
		}
		for _, f := range strings.Fields(v) {
			f = strings.NewReplacer("%h", u.Home, "%u", u.Name, "%%", "%").Replace(f)
			if !path.IsAbs(f) {
				f = path.Join(u.Home, f)
			}
			if strings.HasPrefix(path.Clean(f), path.Clean(u.Home)+"/") {
				return path.Clean(f)
			}
		}
		break // sshd uses the first AuthorizedKeysFile line
	}
	return def
}

// setupUserKeys is ssh_util.setup_user_keys for user u.
//
// A symlink in the key file's path below the home directory (the file
// itself, or .ssh) is refused with a warning and the user's keys are left
// alone: the user may have planted it to make this root write replace
// /etc/shadow. 26.x refuses symlinked directories in the path
// (check_create_path) but falls back to the default file and writes
// through a symlinked authorized_keys; cloudroot writes nothing. The check
// gives the clear message; pkg/target enforces it without a race (a link
// in a directory the user controls is never followed).
func setupUserKeys(c *modules.Context, u target.User, keys []string, options *string) error {
	var entries []authKeyLine
	for _, k := range keys {
		entries = append(entries, parseAuthKeyLine(k, options))
	}
	fn := authorizedKeysPath(c, u)
	if link := symlinkBelow(c, u.Home, fn); link != "" {
		c.Warnf("Not writing SSH authorized keys for user %s: %s is a symlink; refusing to follow it", u.Name, link)
		return nil
	}
	dir := path.Dir(fn)
	if !c.Root.Exists(dir) {
		if err := c.Root.MkdirAll(dir, 0o700); err != nil {
			return err
		}
		if os.Geteuid() == 0 {
			if err := c.Root.Chown(dir, u.UID, u.GID); err != nil {
				return err
			}
		}
	}
	var old []authKeyLine
	o := target.WriteOpts{Perm: 0o600, UID: -1, GID: -1}
	// Read through the same confined walk as the write: a link swapped in
	// after the check above is refused, not read.
	if f, err := c.Root.OpenRegular(fn); err == nil {
		b, rerr := io.ReadAll(io.LimitReader(f, maxAuthorizedKeys+1))
		fi, serr := f.Stat()
		f.Close()
		if rerr != nil {
			return fmt.Errorf("read %s: %w", fn, rerr)
		}
		if len(b) > maxAuthorizedKeys {
			return fmt.Errorf("read %s: larger than %d bytes", fn, maxAuthorizedKeys)
		}
		for _, l := range splitKeepLines(string(b)) {
			old = append(old, parseAuthKeyLine(l, nil))
		}
		if serr == nil {
			o.Perm = fi.Mode() & fs.ModePerm
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read %s: %w", fn, err)
	}
	if os.Geteuid() == 0 {
		o.UID, o.GID = u.UID, u.GID
	}
	content := updateAuthorizedKeys(old, entries)
	if err := c.Root.WriteFileOpts(fn, []byte(content), o); err != nil {
		return fmt.Errorf("write %s: %w", fn, err)
	}
	return nil
}

// maxAuthorizedKeys bounds an existing authorized_keys file read back
// (a user controls it).
const maxAuthorizedKeys = 16 << 20

// symlinkBelow returns the first path from below home down to fn that is a
// symlink, or "".
func symlinkBelow(c *modules.Context, home, fn string) string {
	home = path.Clean(home)
	rel, ok := strings.CutPrefix(path.Clean(fn), home+"/")
	if !ok {
		return ""
	}
	p := home
	for e := range strings.SplitSeq(rel, "/") {
		p = path.Join(p, e)
		fi, err := c.Root.Lstat(p)
		if err != nil {
			return ""
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return p
		}
	}
	return ""
}

func splitKeepLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// sshdKV splits an sshd_config line into keyword and arguments ("" for
// comments and blank lines).
func sshdKV(line string) (string, string) {
	l := strings.TrimSpace(line)
	if l == "" || strings.HasPrefix(l, "#") {
		return "", ""
	}
	i := strings.IndexAny(l, " \t=")
	if i < 0 {
		return l, ""
	}
	return l[:i], strings.TrimSpace(strings.TrimLeft(l[i:], " \t="))
}

// sshdConfigTarget is _ensure_cloud_init_ssh_config_file: the drop-in when
// sshd_config includes sshd_config.d, else sshd_config; "" when the target
// has no sshd_config.
func sshdConfigTarget(c *modules.Context) (string, error) {
	b, err := c.Root.ReadFile(SSHDConfig)
	dconf := false
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if fi, err := c.Root.Stat(SSHDConfigDir); err != nil || !fi.IsDir() {
			return "", nil
		}
		dconf = true
	case err != nil:
		return "", err
	}
	for l := range strings.SplitSeq(string(b), "\n") {
		dconf = dconf || strings.HasPrefix(l, "Include "+SSHDConfigDir+"/*.conf")
	}
	if !dconf {
		return SSHDConfig, nil
	}
	if err := c.Root.MkdirAll(SSHDConfigDir, 0o755); err != nil {
		return "", err
	}
	if !c.Root.Exists(SSHDCloudInitConf) {
		if err := c.Root.WriteFileOpts(SSHDCloudInitConf, nil, modules.RootOwned(0o600)); err != nil {
			return "", err
		}
	}
	return SSHDCloudInitConf, nil
}

// updateSSHDConfig sets key to value (ssh_util.update_ssh_config): every
// line with the keyword is changed, or a new line is added before the first
// Match block. It reports whether the file changed.
func updateSSHDConfig(c *modules.Context, key, value string) (bool, error) {
	fn, err := sshdConfigTarget(c)
	if fn == "" || err != nil {
		return false, err
	}
	b, err := c.Root.ReadFile(fn)
	if err != nil {
		return false, err
	}
	lines := splitKeepLines(string(b))
	found, changed := false, false
	match := -1
	for i, l := range lines {
		k, v := sshdKV(l)
		if strings.EqualFold(k, "Match") && match < 0 {
			match = i
		}
		if !strings.EqualFold(k, key) {
			continue
		}
		found = true
		if v != value {
			// keep the line's indentation (inside a Match block)
			lines[i] = l[:len(l)-len(strings.TrimLeft(l, " \t"))] + k + " " + value
			changed = true
		}
	}
	if !found {
		changed = true
		nl := key + " " + value
		if match >= 0 {
			lines = slices.Insert(lines, match, nl)
		} else {
			lines = append(lines, nl)
		}
	}
	if !changed {
		return false, nil
	}
	fi, err := c.Root.Stat(fn)
	if err != nil {
		return false, err
	}
	return true, c.Root.WriteFileOpts(fn, []byte(strings.Join(lines, "\n")+"\n"), modules.SameOwner(fi, false))
}

// appendSSHDConfig adds "key value" lines not already present
// (ssh_util.append_ssh_config), before the first Match block: after it they
// would only apply inside that block.
func appendSSHDConfig(c *modules.Context, key string, values []string) error {
	fn, err := sshdConfigTarget(c)
	if fn == "" || err != nil {
		return err
	}
	b, err := c.Root.ReadFile(fn)
	if err != nil {
		return err
	}
	lines := splitKeepLines(string(b))
	at := slices.IndexFunc(lines, func(l string) bool { k, _ := sshdKV(l); return strings.EqualFold(k, "Match") })
	if at < 0 {
		at = len(lines)
	}
	var add []string
	for _, v := range values {
		if l := key + " " + v; !slices.Contains(lines, l) {
			add = append(add, l)
		}
	}
	if len(add) == 0 {
		return nil
	}
	lines = slices.Insert(lines, at, add...)
	fi, err := c.Root.Stat(fn)
	if err != nil {
		return err
	}
	return c.Root.WriteFileOpts(fn, []byte(strings.Join(lines, "\n")+"\n"), modules.SameOwner(fi, false))
}
