// Package secret is cloudroot's one list of sensitive keys and the
// redaction built on it.
//
// # Contract
//
//   - A key is sensitive when its name (case-insensitively) is one of
//     cloud-init's sensitive_metadata_keys (cloudinit/sources/__init__.py,
//     with Vultr's startup-script), when its slash path is one of the path
//     entries (ds/vendor_data), or when it names a credential: cloudroot's
//     exact names (OpenStack's admin_pass, token, api_key...), its
//     fragments (passw, secret, private_key) and the pattern set, whole
//     words of the name split at - _ . and case changes: password, passwd,
//     pass, pwd, passphrase, secret(s), token, credential(s), apikey,
//     privatekey, or api/private/secret/access/auth/encryption before a
//     last word key (db_pass, root_pass, api-key, adminPass, auth_key; not
//     bypass, passive, compass, public-keys, AccessKeyId). Everything
//     under a sensitive key is sensitive: user-data and vendor-data whole,
//     merged_cfg whole, security-credentials whole.
//   - Map returns a copy with each sensitive value replaced by Redacted;
//     the original (instance-data-sensitive.json, 0600) keeps them. A key
//     that names a credential only by cloudroot's rules but holds a
//     boolean or null, or "true"/"false" under a switch name (lock_passwd,
//     disablePasswordAuthentication), is a setting and stays visible.
//   - Path reports whether a dotted or slashed location (a schema error's
//     "users.0.plain_text_passwd") passes through a sensitive key, so
//     messages about it never quote the value.
//   - Values collects the strings held under sensitive keys, and Scrub
//     replaces them in free text (error messages, log lines), for the places
//     where a value escapes the structure (status.json, result.json, logs,
//     console). A value of MinScrub (4) bytes or more is replaced wherever
//     it appears. A shorter one ("abc", a PIN) is replaced only where it
//     stands as the value of a credential key: `password: abc`,
//     `password=abc`, `"password": "abc"`, `users.0.passwd=abc` (the key
//     a credential name, then ':' or '=', optional blanks and quotes, and
//     the value followed by a quote, a blank, punctuation or the end):
//     replacing every "abc" or "1" in a log would mangle it and, by what
//     it changed, point at the secret.
//   - Writer scrubs a stream (a log, the console, command output): it
//     holds back an incomplete line (up to MaxLine bytes, then all but the
//     last longest-value-minus-one bytes, never cutting inside a match) so
//     a value split across writes is still caught; Flush or Close writes
//     what it holds.
package secret

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// Redacted is the placeholder cloud-init puts in instance-data.json.
const Redacted = "redacted for non-root user"

// InstanceDataKeys are cloud-init's sensitive_metadata_keys (and Vultr's
// startup-script), in its order: instance-data.json's sensitive_keys.
var InstanceDataKeys = []string{
	"combined_cloud_config", "merged_cfg", "merged_system_cfg", "security-credentials",
	"userdata", "user-data", "user_data", "vendordata", "vendor-data", "ds/vendor_data",
	"startup-script",
}

// extraNames are keys cloudroot redacts beyond cloud-init's list, by exact
// (lower-case) name.
var extraNames = []string{
	"admin_pass", "adminpass", "token", "access_token", "auth_token", "api_key", "apikey",
	"access_key", "secret_key", "ssh_private_key", "private_key", "privatekey",
}

// fragments mark a key as sensitive wherever they appear in its name
// (passwd, plain_text_passwd, hashed_passwd, root_password, client_secret...).
var fragments = []string{"passw", "secret", "private_key", "privatekey"}

// The credential pattern set. A key's name is split into words at '-',
// '_', '.', blanks and lower-to-upper case changes ("db_pass" → db pass,
// "adminPass" → admin pass, "API-Key" → api key), lower-cased. It names a
// credential when one word is in credentialWords, or a word of keyQualifiers
// comes just before a last word "key" ("api-key", "auth_key";
// "AccessKeyId", an identifier, is not). Whole
// words only: "bypass", "passive", "compass", "passthrough", "tokenizer"
// and "public-keys" do not match.
var (
	credentialWords = []string{
		"password", "passwd", "pass", "pwd", "passphrase", "secret", "secrets",
		"token", "credential", "credentials", "apikey", "privatekey",
	}
	keyQualifiers = []string{"api", "private", "secret", "access", "auth", "encryption"}
)

// words splits a key name into its lower-case words.
func words(name string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(name)
	for i, r := range rs {
		switch {
		case r == '-' || r == '_' || r == '.' || r == ' ' || r == '/':
			flush()
			continue
		case i > 0 && unicode.IsUpper(r) && (unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1]) ||
			i+1 < len(rs) && unicode.IsUpper(rs[i-1]) && unicode.IsLower(rs[i+1])):
			flush() // adminPass, APIKey → API Key
		}
		cur = append(cur, r)
	}
	flush()
	return out
}

// pattern reports whether a key's name matches the credential pattern set.
func pattern(name string) bool {
	ws := words(name)
	for i, w := range ws {
		if slices.Contains(credentialWords, w) {
			return true
		}
		if w == "key" && i > 0 && i == len(ws)-1 && slices.Contains(keyQualifiers, ws[i-1]) {
			return true
		}
	}
	return false
}

// Key reports whether a key named name, at slash path p ("" when unknown),
// is sensitive by itself (not by a parent).
func Key(name, p string) bool { return upstream(name, p) || credential(name, p) }

// upstream reports whether a key is one of cloud-init's
// sensitive_metadata_keys, by name or slash path.
func upstream(name, p string) bool {
	lp := strings.ToLower(p)
	for _, k := range InstanceDataKeys {
		if strings.Contains(k, "/") {
			if k == lp {
				return true
			}
		} else if k == strings.ToLower(name) {
			return true
		}
	}
	return false
}

// credentialPaths are credentials known by their slash path (list indices
// left out): chpasswd's "user:password" lines.
var credentialPaths = []string{"chpasswd/list"}

// containers hold credentials without being one: their other keys
// (chpasswd's expire) are plain settings.
var containers = []string{"chpasswd"}

// credential reports whether a key names a credential itself (a password,
// a token, a key), as opposed to a document that may hold some.
func credential(name, p string) bool {
	n := strings.ToLower(name)
	if slices.Contains(extraNames, n) || slices.Contains(credentialPaths, strings.ToLower(p)) {
		return true
	}
	if slices.Contains(containers, n) {
		return false
	}
	if strings.HasSuffix(n, "_private") { // ssh_keys: rsa_private, ed25519_private...
		return true
	}
	for _, f := range fragments {
		if strings.Contains(n, f) {
			return true
		}
	}
	return pattern(name)
}

// Path reports whether a location given as its elements passes through a
// sensitive key (list indices are skipped when building slash paths).
func Path(elems []string) bool {
	var p []string
	for _, e := range elems {
		if _, err := strconv.Atoi(e); err == nil {
			continue
		}
		p = append(p, e)
		if Key(e, strings.Join(p, "/")) {
			return true
		}
	}
	return false
}

// Contains reports whether v (a decoded YAML or JSON value) holds a
// credential key with a value anywhere inside it: a message quoting v would
// quote the credential.
func Contains(v any) bool {
	var walk func(v any, p string) bool
	walk = func(v any, p string) bool {
		switch t := v.(type) {
		case map[string]any:
			for k, e := range t {
				kp := k
				if p != "" {
					kp = p + "/" + k
				}
				if e != nil && credential(k, kp) {
					return true
				}
				if walk(e, kp) {
					return true
				}
			}
		case []any:
			for _, e := range t {
				if walk(e, p) {
					return true
				}
			}
		}
		return false
	}
	return walk(v, "")
}

// setting reports whether a key that names a credential only by the
// pattern set holds a setting rather than one: a boolean or null
// (lock_passwd: true, disablePasswordAuthentication, ssh_pwauth) is no
// secret, and redacting it would hide it from cloud-init query. cloud-init's
// own keys are redacted whatever they hold.
// Azure's osProfile.disablePasswordAuthentication is the string "true":
// a "true" or "false" under a key whose first word is a switch
// (switchWords) is a setting too.
func setting(name, p string, v any) bool {
	if upstream(name, p) {
		return false
	}
	switch t := v.(type) {
	case bool, nil:
		return true
	case string:
		ws := words(name)
		return len(ws) > 1 && slices.Contains(switchWords, ws[0]) &&
			(strings.EqualFold(t, "true") || strings.EqualFold(t, "false"))
	}
	return false
}

// switchWords begin the names of on/off settings about credentials
// (disable_password, lock_passwd, allowPasswordLogin).
var switchWords = []string{"disable", "enable", "lock", "allow", "require"}

// Map returns a copy of m with every sensitive key's value replaced by
// Redacted, at any depth (lists of maps included); m is not changed.
func Map(m map[string]any) map[string]any { return redactMap(m, "") }

func redactMap(m map[string]any, prefix string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		p := k
		if prefix != "" {
			p = prefix + "/" + k
		}
		if k != "sensitive_keys" && Key(k, p) && !setting(k, p, v) {
			out[k] = Redacted
			continue
		}
		out[k] = redactValue(v, p)
	}
	return out
}

func redactValue(v any, p string) any {
	switch t := v.(type) {
	case map[string]any:
		return redactMap(t, p)
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = redactValue(e, p)
		}
		return out
	}
	return v
}

// MinScrub is the shortest value Scrub replaces wherever it appears;
// shorter ones are replaced only as the value of a credential key.
const MinScrub = 4

// Values returns the distinct strings held under credential keys
// (passwords, tokens, keys; not whole documents such as user-data) of
// each map, line by line, longest first, for Scrub.
func Values(ms ...map[string]any) []string {
	seen := map[string]bool{}
	var walk func(v any, under bool, p string)
	walk = func(v any, under bool, p string) {
		switch t := v.(type) {
		case map[string]any:
			for k, e := range t {
				kp := k
				if p != "" {
					kp = p + "/" + k
				}
				walk(e, under || credential(k, kp), kp)
			}
		case []any:
			for _, e := range t {
				walk(e, under, p)
			}
		case int, int64, uint64:
			// password: 12345678 is read as a number.
			if s := fmt.Sprint(t); under {
				seen[s] = true
			}
		case string:
			if under {
				for _, line := range strings.Split(t, "\n") {
					if line = strings.TrimSpace(line); line != "" {
						seen[line] = true
					}
				}
			}
		}
	}
	for _, m := range ms {
		walk(m, false, "")
	}
	out := make([]string, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		if len(out[i]) != len(out[j]) {
			return len(out[i]) > len(out[j])
		}
		return out[i] < out[j]
	})
	return out
}

// Placeholder replaces a value in free text.
const Placeholder = "<redacted>"

// Scrub replaces each value in s with Placeholder: every occurrence of a
// value of MinScrub bytes or more, and a shorter value where it is the
// value of a credential key (see the contract).
func Scrub(s string, values []string) string {
	for _, v := range values {
		switch {
		case v == "":
		case len(v) >= MinScrub:
			if strings.Contains(s, v) {
				s = strings.ReplaceAll(s, v, Placeholder)
			}
		default:
			s = scrubShort(s, v)
		}
	}
	return s
}

// scrubShort replaces v where it stands as a credential key's value.
func scrubShort(s, v string) string {
	var b strings.Builder
	last := 0
	for i := 0; i+len(v) <= len(s); {
		j := strings.Index(s[i:], v)
		if j < 0 {
			break
		}
		at := i + j
		if keyed(s, at, at+len(v)) {
			b.WriteString(s[last:at])
			b.WriteString(Placeholder)
			last = at + len(v)
			i = last
			continue
		}
		i = at + 1
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// keyed reports whether s[start:end] is the value of a credential key:
// `key<blanks>[:=]<blanks>` with optional quotes around key and value,
// the value not running on into more of a word.
func keyed(s string, start, end int) bool {
	if end < len(s) && !valueEnd(s[end]) {
		return false
	}
	i := start
	if i > 0 && (s[i-1] == '"' || s[i-1] == '\'') {
		i--
	}
	for i > 0 && (s[i-1] == ' ' || s[i-1] == '\t') {
		i--
	}
	if i == 0 || (s[i-1] != ':' && s[i-1] != '=') {
		return false
	}
	i--
	for i > 0 && (s[i-1] == ' ' || s[i-1] == '\t') {
		i--
	}
	if i > 0 && (s[i-1] == '"' || s[i-1] == '\'') {
		i--
	}
	k := i
	for k > 0 && keyByte(s[k-1]) {
		k--
	}
	name := s[k:i]
	if d := strings.LastIndexByte(name, '.'); d >= 0 {
		name = name[d+1:] // users.0.passwd
	}
	return name != "" && credential(name, "")
}

func keyByte(c byte) bool {
	return c == '_' || c == '-' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// valueEnd reports whether c may follow a value: a quote, a blank or
// punctuation that ends a value in YAML, JSON, logfmt or a Go map.
func valueEnd(c byte) bool {
	switch c {
	case '"', '\'', ' ', '\t', '\r', '\n', ',', ';', '}', ']', ')', '&':
		return true
	}
	return false
}
