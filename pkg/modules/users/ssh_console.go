package users

// keys_to_console and ssh_authkey_fingerprints: what cloud-init 26.x
// prints about SSH keys on the console at the end of a boot.
//
// keys_to_console does natively what cloud-init's helper
// /usr/lib/cloud-init/write-ssh-key-fingerprints does (cloudroot ships no
// helper, so its absence is not a reason to skip): for each
// /etc/ssh/ssh_host_*key.pub in glob order, the `ssh-keygen -l` line
// between banners, each as `logger -s -p user.info -t cloud-init` echoes
// it ("<14>Mmm dd hh:mm:ss cloud-init: ..."), then the public keys
// themselves; key types listed in ssh_fp_console_blacklist /
// ssh_key_console_blacklist are left out of the respective part.
//
// ssh_authkey_fingerprints prints, per user that gets a home, a table of
// the fingerprints of its authorized keys, as cc_ssh_authkey_fingerprints
// does with cloud-init's SimpleTable. Like cloud-init's
// extract_authorized_keys (check_create_path), it first creates a missing
// authorized keys file — empty, 0600, in a 0700 directory, both owned by
// the user — so every such user ends with ~/.ssh/authorized_keys.

import (
	"context"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io/fs"
	"os"
	"path"
	"strings"

	"golang.org/x/crypto/ssh"

	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
	"github.com/cloudroot/cloudroot/pkg/modules"
	"github.com/cloudroot/cloudroot/pkg/modules/internal/ugutil"
	"github.com/cloudroot/cloudroot/pkg/state"
	"github.com/cloudroot/cloudroot/pkg/target"
)

// KeysToConsole is cc_keys_to_console.
var KeysToConsole = modules.Module{
	Name:      "keys_to_console",
	Frequency: state.PerInstance,
	Keys:      []string{"ssh", "ssh_key_console_blacklist", "ssh_fp_console_blacklist"},
	Run:       modules.Typed(runKeysToConsole),
}

// SSHAuthkeyFingerprints is cc_ssh_authkey_fingerprints.
var SSHAuthkeyFingerprints = modules.Module{
	Name:      "ssh_authkey_fingerprints",
	Frequency: state.PerInstance,
	Keys:      []string{"no_ssh_fingerprints", "authkey_hash"},
	Run:       modules.Typed(runAuthkeyFingerprints),
}

// keysToConsoleConfig is the module's keys, decoded once.
type keysToConsoleConfig struct {
	Emit          bool
	FPBlacklist   []string
	KeyBlacklist  []string
	helperArgFP   string
	helperArgKeys string
}

// keysToConsoleKeys is keys_to_console's configuration as given.
type keysToConsoleKeys struct {
	SSH struct {
		// Emit is emit_keys_to_console (util.is_false reads it).
		Emit any `cfg:"emit_keys_to_console"`
	} `cfg:"ssh,loose"`
	// The blacklists: a string or a list ("" entries kept).
	FPBlacklist  pyval.List `cfg:"ssh_fp_console_blacklist"`
	KeyBlacklist pyval.List `cfg:"ssh_key_console_blacklist"`
}

func decodeKeysToConsole(cfg keysToConsoleKeys) keysToConsoleConfig {
	k := keysToConsoleConfig{Emit: true}
	if pyval.IsFalse(cfg.SSH.Emit) {
		k.Emit = false
	}
	k.FPBlacklist = cfg.FPBlacklist
	k.KeyBlacklist = cfg.KeyBlacklist
	// The helper gets the lists comma-joined and matches ",type,".
	k.helperArgFP = "," + strings.Join(k.FPBlacklist, ",") + ","
	k.helperArgKeys = "," + strings.Join(k.KeyBlacklist, ",") + ","
	return k
}

func runKeysToConsole(ctx context.Context, c *modules.Context, cfg keysToConsoleKeys) error {
	k := decodeKeysToConsole(cfg)
	if !k.Emit {
		c.Log.Debug("Skipping module named keys_to_console, logging of SSH host keys disabled")
		return nil
	}
	files, err := c.Root.Glob("/etc/ssh/ssh_host_*key.pub")
	if err != nil {
		return fmt.Errorf("keys_to_console: %w", err)
	}
	stamp := c.Now().Local().Format("Jan _2 15:04:05")
	syslog := func(b *strings.Builder, msg string) {
		fmt.Fprintf(b, "<14>%s cloud-init: %s\n", stamp, msg)
	}
	type hostKey struct{ ktype, text string }
	var keys []hostKey
	for _, f := range files {
		fi, err := c.Root.Stat(f)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		b, err := c.Root.ReadFile(f)
		if err != nil {
			return fmt.Errorf("keys_to_console: %w", err)
		}
		first, _, _ := strings.Cut(string(b), "\n")
		kt, _, _ := strings.Cut(strings.TrimLeft(first, " \t"), " ")
		keys = append(keys, hostKey{ktype: kt, text: string(b)})
	}
	var out strings.Builder
	shown := false
	for _, hk := range keys {
		if strings.Contains(k.helperArgFP, ","+hk.ktype+",") {
			continue
		}
		if !shown {
			syslog(&out, strings.Repeat("#", 61))
			syslog(&out, "-----BEGIN SSH HOST KEY FINGERPRINTS-----")
			shown = true
		}
		syslog(&out, keygenList(hk.text))
	}
	if shown {
		syslog(&out, "-----END SSH HOST KEY FINGERPRINTS-----")
		syslog(&out, strings.Repeat("#", 61))
	}
	shown = false
	for _, hk := range keys {
		if strings.Contains(k.helperArgKeys, ","+hk.ktype+",") {
			continue
		}
		if !shown {
			out.WriteString("-----BEGIN SSH HOST KEY KEYS-----\n")
			shown = true
		}
		out.WriteString(hk.text)
	}
	if shown {
		out.WriteString("-----END SSH HOST KEY KEYS-----\n")
	}
	fmt.Fprint(c.Out, strings.TrimSpace(out.String())+"\n")
	return nil
}

// keygenList is `ssh-keygen -l -f` of a public key file:
// "BITS SHA256:FP COMMENT (TYPE)", or its complaint.
func keygenList(text string) string {
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		pk, comment, _, _, err := ssh.ParseAuthorizedKey([]byte(line))
		if err != nil {
			continue
		}
		if comment == "" {
			comment = "no comment"
		}
		// keyBits and keyTypeName are ssh-keygen's (hostkeys.go).
		return fmt.Sprintf("%d %s %s (%s)", keyBits(pk), ssh.FingerprintSHA256(pk), comment, keyTypeName(pk))
	}
	return "is not a public key file."
}

// authkeyConfig is ssh_authkey_fingerprints' keys, decoded once.
type authkeyConfig struct {
	Disabled bool
	Hash     string
}

// authkeyKeys is ssh_authkey_fingerprints' configuration as given.
type authkeyKeys struct {
	// NoFingerprints is no_ssh_fingerprints (util.is_true reads it).
	NoFingerprints any         `cfg:"no_ssh_fingerprints"`
	Hash           string      `cfg:"authkey_hash,scalar,default=sha256"`
	Users          ugutil.Keys `cfg:",inline"`
}

func decodeAuthkey(cfg authkeyKeys) authkeyConfig {
	return authkeyConfig{Disabled: pyval.IsTrue(cfg.NoFingerprints), Hash: cfg.Hash}
}

// authkeyHashes are the hashlib names the fingerprint supports; others
// give "?" as hashlib.new's ValueError does.
var authkeyHashes = map[string]func() hash.Hash{
	"md5": md5.New, "sha1": sha1.New, "sha224": sha256.New224, "sha256": sha256.New,
	"sha384": sha512.New384, "sha512": sha512.New,
}

// authkeyFingerprint is _gen_fingerprint: the hex digest of the decoded
// key, in colon-separated pairs.
func authkeyFingerprint(b64, hashName string) string {
	if b64 == "" {
		return ""
	}
	newHash, ok := authkeyHashes[strings.ToLower(hashName)]
	if !ok {
		return "?"
	}
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return "?"
	}
	h := newHash()
	h.Write(raw)
	hx := hex.EncodeToString(h.Sum(nil))
	var pairs []string
	for i := 0; i < len(hx); i += 2 {
		pairs = append(pairs, hx[i:i+2])
	}
	return strings.Join(pairs, ":")
}

func runAuthkeyFingerprints(ctx context.Context, c *modules.Context, cfg authkeyKeys) error {
	a := decodeAuthkey(cfg)
	if a.Disabled {
		c.Log.Debug("Skipping module named ssh_authkey_fingerprints, logging of SSH fingerprints disabled")
		return nil
	}
	users, _, _, err := ugutil.Normalize(cfg.Users, c.Distro.DefaultUser(), func(string, ...any) {})
	if err != nil {
		c.Log.Debug("ssh_authkey_fingerprints: some users not understood", "err", err)
	}
	var errs []error
	for _, u := range users {
		if u.NoCreateHome || u.System {
			c.Log.Debug(fmt.Sprintf("Skipping printing of ssh fingerprints for user '%s' because no home directory is created", u.Name))
			continue
		}
		tu, err := c.Root.LookupUser(u.Name)
		if err != nil {
			errs = append(errs, fmt.Errorf("ssh_authkey_fingerprints: user %s: %w", u.Name, err))
			continue
		}
		fn := authorizedKeysPath(c, tu)
		if err := ensureAuthorizedKeysFile(c, tu, fn); err != nil {
			c.Log.Debug("ssh_authkey_fingerprints: could not create the authorized keys file", "user", u.Name, "err", err)
		}
		var entries []authKeyLine
		if b, err := c.Root.ReadFile(fn); err == nil && len(b) > 0 { // "".splitlines() is []
			for _, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
				entries = append(entries, parseAuthKeyLine(l, nil))
			}
		}
		fmt.Fprint(c.Out, authkeyTable(u.Name, fn, entries, a.Hash, "ci-info: "))
	}
	if len(errs) > 0 {
		return errs[len(errs)-1]
	}
	return nil
}

// authkeyTable is _pprint_key_entries' output.
func authkeyTable(user, fn string, entries []authKeyLine, hashName, prefix string) string {
	if len(entries) == 0 {
		return fmt.Sprintf("%sno authorized SSH keys fingerprints found for user %s.\n", prefix, user)
	}
	t := simpleTable{fields: []string{"Keytype", "Fingerprint (" + hashName + ")", "Options", "Comment"}}
	for _, e := range entries {
		if e.keytype == "" || !validKeyTypes()[strings.ToLower(strings.TrimSpace(e.keytype))] {
			continue
		}
		t.rows = append(t.rows, []string{orDash(e.keytype), orDash(authkeyFingerprint(e.base64, hashName)), orDash(e.options), orDash(e.comment)})
	}
	lines := t.lines()
	width := 0
	for _, l := range lines {
		width = max(width, len(l))
	}
	var b strings.Builder
	b.WriteString(prefix + formatCenter("Authorized keys from "+fn+" for user "+user, '+', width) + "\n")
	for _, l := range lines {
		b.WriteString(prefix + l + "\n")
	}
	return b.String()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// simpleTable is cloud-init's SimpleTable.
type simpleTable struct {
	fields []string
	rows   [][]string
}

func (t simpleTable) lines() []string {
	w := make([]int, len(t.fields))
	for _, r := range append([][]string{t.fields}, t.rows...) {
		for i, v := range r {
			w[i] = max(w[i], len(v))
		}
	}
	div := "+"
	for i := range w {
		div += strings.Repeat("-", w[i]+2) + "+"
	}
	row := func(r []string) string {
		s := "|"
		for i, v := range r {
			s += pyStrCenter(v, w[i]+2, ' ') + "|"
		}
		return s
	}
	out := []string{div, row(t.fields), div}
	for _, r := range t.rows {
		out = append(out, row(r))
	}
	return append(out, div)
}

// pyStrCenter is Python's str.center: the odd padding goes left when
// both the padding and the width are odd, right otherwise.
func pyStrCenter(s string, width int, fill rune) string {
	marg := width - len(s)
	if marg <= 0 {
		return s
	}
	left := marg/2 + (marg & width & 1)
	return strings.Repeat(string(fill), left) + s + strings.Repeat(string(fill), marg-left)
}

// formatCenter is format(s, "{fill}^{width}"): the odd padding goes right.
func formatCenter(s string, fill rune, width int) string {
	marg := width - len(s)
	if marg <= 0 {
		return s
	}
	left := marg / 2
	return strings.Repeat(string(fill), left) + s + strings.Repeat(string(fill), marg-left)
}

// ensureAuthorizedKeysFile is the creating side of ssh_util's
// check_create_path: the directories between u's home and fn (0700, the
// user's) and fn itself (empty, 0600, the user's) when missing. A symlink
// or a non-directory on the way, a missing home, or fn outside the home
// leave everything as it is.
func ensureAuthorizedKeysFile(c *modules.Context, u target.User, fn string) error {
	home := path.Clean(u.Home)
	if !strings.HasPrefix(fn, home+"/") {
		return nil
	}
	if fi, err := c.Root.Lstat(home); err != nil || !fi.IsDir() {
		return nil
	}
	chown := func(p string) error {
		if os.Geteuid() != 0 {
			return nil
		}
		return c.Root.Chown(p, u.UID, u.GID)
	}
	dir := home
	for _, d := range strings.Split(strings.TrimPrefix(path.Dir(fn), home), "/") {
		if d == "" {
			continue
		}
		dir = path.Join(dir, d)
		fi, err := c.Root.Lstat(dir)
		switch {
		case err == nil && fi.IsDir():
			continue
		case err == nil:
			return fmt.Errorf("%s is not a directory", dir)
		case !errors.Is(err, fs.ErrNotExist):
			return err
		}
		if err := c.Root.MkdirAll(dir, 0o700); err != nil {
			return err
		}
		if err := chown(dir); err != nil {
			return err
		}
	}
	if _, err := c.Root.Lstat(fn); !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	o := target.WriteOpts{Perm: 0o600, UID: -1, GID: -1}
	if os.Geteuid() == 0 {
		o.UID, o.GID = u.UID, u.GID
	}
	return c.Root.WriteFileOpts(fn, nil, o)
}
