package pkgmgr

// apt_configure's mirrors, keys and sources files (see apt_configure.go).

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/cloudroot/cloudroot/pkg/distro"
	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
	"github.com/cloudroot/cloudroot/pkg/modules"
	"github.com/cloudroot/cloudroot/pkg/modules/internal/render"
	"github.com/cloudroot/cloudroot/pkg/yaml11"
	"github.com/cloudroot/cloudroot/templates"
)

// mirrors is find_apt_mirror_info: PRIMARY, SECURITY and MIRROR (plus the
// lower-case names of the distro's mirror info when it supplied them).
func (r *aptRun) mirrors(ctx context.Context, arch string) map[string]string {
	p, praw := r.mirror(ctx, r.cfg.Primary, "primary", arch)
	s, sraw := r.mirror(ctx, r.cfg.Security, "security", arch)
	var out map[string]string
	switch {
	case p != "":
		if s == "" {
			s, sraw = p, praw
		}
		out = map[string]string{"PRIMARY": p, "SECURITY": s}
		r.mirrorURIs = map[string]any{}
		for name, raw := range map[string]any{"PRIMARY": praw, "SECURITY": sraw} {
			if raw != nil {
				r.mirrorURIs[name] = raw
			}
		}
	default:
		out = r.distroMirrors(arch)
		if out == nil {
			out = defaultUbuntuMirrors(arch)
		}
		if out == nil {
			out = map[string]string{}
		}
	}
	out["MIRROR"] = out["PRIMARY"]
	return out
}

// mirror is get_mirror for one mirror type: uri, else the first
// resolvable search entry, else search_dns's names; with the uri as given
// when the mirror is one.
func (r *aptRun) mirror(ctx context.Context, list []aptMirror, kind, arch string) (string, any) {
	var m *aptMirror
	for i := range list {
		if slices.Contains(list[i].Arches, arch) {
			m = &list[i]
			break
		}
		if slices.Contains(list[i].Arches, "default") {
			m = &list[i]
		}
	}
	if m == nil {
		return "", nil
	}
	if m.URI != "" {
		return m.URI, m.URIRaw
	}
	if found := r.searchMirror(ctx, m.Search); found != "" {
		return found, nil
	}
	if !pyval.Truthy(m.SearchDNS) {
		return "", nil
	}
	dns := map[string]string{"primary": "mirror", "security": "security-mirror"}[kind]
	var doms []string
	// cloud-init asks get_hostname_fqdn with the apt section as the
	// config, so the datasource's name is what counts, never `fqdn`.
	fqdn, _ := r.c.DSHostname(true)
	if _, dom, ok := strings.Cut(fqdn, "."); ok && dom != "" {
		doms = append(doms, "."+dom)
	}
	doms = append(doms, ".localdomain", "")
	name := r.distroName()
	var cands []string
	for _, d := range doms {
		cands = append(cands, fmt.Sprintf("http://%s-%s%s/%s", name, dns, d, name))
	}
	return r.searchMirror(ctx, cands), nil
}

// searchMirror is util.search_for_mirror: the first candidate whose host
// is an IP address or resolves to an address a DNS-redirecting resolver
// does not give for names that cannot exist.
func (r *aptRun) searchMirror(ctx context.Context, cands []string) string {
	for _, cand := range cands {
		u, err := url.Parse(cand)
		if err != nil || u.Hostname() == "" {
			continue
		}
		host := u.Hostname()
		if net.ParseIP(host) != nil {
			return cand
		}
		addrs, err := r.lookup(ctx, host)
		if err != nil || len(addrs) == 0 {
			continue
		}
		if r.badIPs == nil {
			r.badIPs = map[string]bool{}
			for _, bad := range []string{"does-not-exist.example.com.", "example.invalid.", "__cloud_init_expected_not_found__"} {
				ips, _ := r.lookup(ctx, bad)
				for _, ip := range ips {
					r.badIPs[ip] = true
				}
			}
		}
		if !r.badIPs[addrs[0]] {
			return cand
		}
	}
	return ""
}

// distroMirrors is the distro's get_package_mirror_info: the failsafe of
// system_info.package_mirrors' entry for arch (its search templates need
// a datasource's availability zone and a DNS lookup, which cloudroot does
// not make). The merged config's system_info wins over the distro default.
func (r *aptRun) distroMirrors(arch string) map[string]string {
	pm := r.pkgMirrors
	if pm == nil {
		if b, err := distro.DefaultCloudConfig(r.c.Distro); err == nil {
			if m, err := decodeYAMLConfig(b); err == nil {
				var k aptKeys
				if (&pyval.Decoder{}).Decode(m, &k) == nil {
					pm = k.SystemInfo.PackageMirrors
				}
			}
		}
	}
	var entry *packageMirror
	for i, e := range pm {
		if !e.OK {
			continue
		}
		if slices.Contains(e.Arches, arch) {
			entry = &pm[i]
			break
		}
		if slices.Contains(e.Arches, "default") {
			entry = &pm[i]
		}
	}
	if entry == nil {
		return nil
	}
	out := map[string]string{}
	for _, e := range entry.Failsafe.Entries {
		out[e.Key] = pyval.ScalarStr(e.Value)
	}
	if out["primary"] == "" && out["security"] == "" {
		return nil
	}
	out["PRIMARY"], out["SECURITY"] = out["primary"], out["security"]
	return out
}

// decodeYAMLConfig parses a cloud-config document (YAML 1.1, as
// cloud-init reads it).
func decodeYAMLConfig(b []byte) (modules.Config, error) {
	m, _, err := yaml11.LoadMap("cloud.cfg", b)
	if err != nil {
		return nil, err
	}
	return modules.Config(m), nil
}

// gpgEnv is the environment of gpg's key work: a throwaway GNUPGHOME.
func (r *aptRun) gpgEnv() map[string]string {
	if !r.gpgUsed {
		r.gpgUsed = true
		_ = r.c.Root.MkdirAll(aptGPGHome, 0o700)
	}
	return map[string]string{"GNUPGHOME": aptGPGHome}
}

// cleanupGPG stops the agents gpg started and removes its home.
func (r *aptRun) cleanupGPG(ctx context.Context) {
	if !r.gpgUsed {
		return
	}
	if targetWhich(r.c.Root, "gpgconf") != "" {
		_, _ = r.output(ctx, []string{"gpgconf", "--kill", "all"}, nil, r.gpgEnv())
	}
	_ = removeAll(r.c, aptGPGHome)
}

// removeAll removes a tree inside the target.
func removeAll(c *modules.Context, p string) error {
	ents, err := c.Root.ReadDir(p)
	if err == nil {
		for _, e := range ents {
			_ = removeAll(c, path.Join(p, e.Name()))
		}
	}
	return c.Root.Remove(p)
}

// keyByID is gpg.getkeybyid: the armoured key, received from keyserver
// when the throwaway keyring lacks it, then deleted from it again.
func (r *aptRun) keyByID(ctx context.Context, keyid, keyserver string) (string, error) {
	env := r.gpgEnv()
	export := func() string {
		out, err := r.output(ctx, []string{"gpg", "--export", "--armour", keyid}, nil, env)
		if err != nil {
			return ""
		}
		return string(out)
	}
	if armour := export(); armour != "" {
		return armour, nil
	}
	var lastErr error
	received := false
	for try := 1; try <= 3; try++ { // cloud-init: one try and two retries
		if _, err := r.output(ctx, []string{"gpg", "--no-tty", "--keyserver=" + keyserver, "--recv-keys", keyid}, nil, env); err != nil {
			lastErr = err
			continue
		}
		received = true
		break
	}
	var armour string
	if received {
		armour = export()
	}
	if _, err := r.output(ctx, []string{"gpg", "--batch", "--yes", "--delete-keys", keyid}, nil, env); err != nil {
		r.c.Warnf("Failed delete key \"%s\": %v", keyid, err)
	}
	if !received {
		return "", fmt.Errorf("Failed to import key '%s' from keyserver '%s' after 3 tries: %w", keyid, keyserver, lastErr)
	}
	return armour, nil
}

// addKey is add_apt_key: the key (inline, or by id) dearmoured into
// trusted.gpg.d/<name>.gpg, or cloud-init.gpg.d/<name>.gpg when a source
// refers to it as $KEY_FILE. It returns the file ("" when no key).
func (r *aptRun) addKey(ctx context.Context, key, keyid, keyserver, fileName string, hardened bool) (string, error) {
	if key == "" && keyid != "" {
		if keyserver == "" {
			keyserver = DefaultKeyserver
		}
		k, err := r.keyByID(ctx, keyid, keyserver)
		if err != nil {
			return "", err
		}
		key = k
	}
	if key == "" {
		return "", nil
	}
	name := path.Base(fileName)
	if ext := path.Ext(name); ext != "" && name != ext {
		name = strings.TrimSuffix(name, ext)
	}
	var bin []byte
	var err error
	if r.nativeDearmor {
		bin, err = dearmorKey(key)
	} else {
		bin, err = r.output(ctx, []string{"gpg", "--dearmor"}, []byte(key), r.gpgEnv())
	}
	if err != nil {
		r.c.Warnf("Gpg error, failed to add key: %v", err)
		return "/dev/null", nil
	}
	dir := AptTrustedGPGDir
	if hardened {
		dir = AptCloudInitGPGDir
	}
	fn := dir + name + ".gpg"
	if err := r.c.Root.WriteFile(fn, bin, 0o644); err != nil {
		return "", fmt.Errorf("writing key %s: %w", fn, err)
	}
	return fn, nil
}

// mirrorKeys is add_mirror_keys: primary_key / security_key for the
// sources template.
func (r *aptRun) mirrorKeys(ctx context.Context) (map[string]string, error) {
	keys := map[string]string{}
	for _, mt := range []struct {
		name string
		list []aptMirror
	}{{"primary", r.cfg.Primary}, {"security", r.cfg.Security}} {
		for _, m := range mt.list {
			fn, err := r.addKey(ctx, m.Key, m.Keyid, m.Keyserver, mt.name, false)
			if err != nil {
				return nil, err
			}
			if fn != "" {
				keys[mt.name+"_key"] = fn
			}
		}
	}
	return keys, nil
}

var (
	deb822Lines  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^(Types: |Suites: |Components: |URIs: )`) })
	oneLineLines = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^(deb |deb-src )`) })
)

// isDeb822 is is_deb822_sources_format.
func (r *aptRun) isDeb822(s string) bool {
	if oneLineLines().MatchString(s) {
		return false
	}
	if deb822Lines().MatchString(s) {
		return true
	}
	r.c.Warnf("apt.sources_list value does not match either deb822 source keys or deb/deb-src list keys. Assuming APT deb/deb-src list format.")
	return false
}

// distroName is cloud.distro.name for the sources file and templates.
func (r *aptRun) distroName() string { return r.c.DistroName() }

// renderAptTemplate is templater.render_string: Jinja with a
// "## template: jinja" header, else $NAME / ${NAME} substitution.
func renderAptTemplate(tmpl string, params map[string]string) (string, error) {
	vars := map[string]any{}
	for k, v := range params {
		vars[k] = v
	}
	first, _, _ := strings.Cut(tmpl, "\n")
	if !strings.HasPrefix(strings.ReplaceAll(strings.ToLower(first), " ", ""), "##template:jinja") {
		return render.Basic(tmpl, params)
	}
	out, err := render.Jinja([]byte(tmpl), vars)
	return string(out), err
}

// sourcesTemplate finds the template: the target's own
// /etc/cloud/templates/sources.list.<distro>[.deb822].tmpl, else
// cloudroot's, else the generic sources.list.tmpl of the target.
func (r *aptRun) sourcesTemplate(deb822 bool) (string, bool) {
	name := "sources.list." + r.distroName()
	if deb822 {
		name += ".deb822"
	}
	if b, err := r.c.Root.ReadFile("/etc/cloud/templates/" + name + ".tmpl"); err == nil {
		return string(b), true
	}
	if b, err := templates.FS.ReadFile("apt/" + name + ".tmpl"); err == nil {
		return string(b), true
	}
	if b, err := r.c.Root.ReadFile("/etc/cloud/templates/sources.list.tmpl"); err == nil {
		return string(b), true
	}
	return "", false
}

// generateSourcesList is generate_sources_list.
func (r *aptRun) generateSourcesList(release string, mirrors, keys map[string]string) error {
	deb822 := r.c.Distro.AptSourcesDeb822()
	deb822File := AptSourceParts + r.distroName() + ".sources"
	file := AptSourcesList
	if deb822 {
		file = deb822File
	}
	params := map[string]string{"RELEASE": release, "codename": release}
	for k, v := range keys {
		params[k] = v
	}
	for k, v := range mirrors {
		params[k] = v
		params[strings.ToLower(k)] = v
	}
	tmpl := r.cfg.SourcesList
	if tmpl == "" {
		t, ok := r.sourcesTemplate(deb822)
		if !ok {
			r.c.Warnf("No template found, not rendering %s", file)
			return nil
		}
		tmpl = t
	}
	rendered, err := renderAptTemplate(tmpl, params)
	if err != nil {
		return fmt.Errorf("rendering the sources template: %w", err)
	}
	if r.isDeb822(rendered) {
		file = deb822File
	} else {
		file = AptSourcesList
	}
	out := disableSuites(r.cfg.DisableSuites, rendered, release, r.isDeb822)
	if err := r.c.Root.WriteFile(file, []byte(out), 0o644); err != nil {
		return err
	}
	if file == deb822File && r.c.Root.Exists(AptSourcesList) {
		if r.distroName() == "ubuntu" {
			if b, _ := r.c.Root.ReadFile(AptSourcesList); string(b) != UbuntuDefaultSourcesList {
				r.c.Log.Info("Replacing " + AptSourcesList + " to favor deb822 source format")
				return r.c.Root.WriteFile(AptSourcesList, []byte(UbuntuDefaultSourcesList), 0o644)
			}
			return nil
		}
		r.c.Log.Info("Removing " + AptSourcesList + " to favor deb822 source format")
		return r.c.Root.Remove(AptSourcesList)
	}
	return nil
}

// knownSuites are disable_suites' short names.
var knownSuites = map[string]string{"updates": "$RELEASE-updates", "backports": "$RELEASE-backports",
	"security": "$RELEASE-security", "proposed": "$RELEASE-proposed", "release": "$RELEASE"}

func suiteName(s, release string) string {
	if m, ok := knownSuites[s]; ok {
		s = m
	}
	out, err := render.Basic(s, map[string]string{"RELEASE": release})
	if err != nil {
		return s
	}
	return out
}

// disableSuitesPrefix marks a Suites line cloud-init edited.
const disableSuitesPrefix = "# cloud-init disable_suites redacted: "

// disableSuites comments the disabled suites out of src.
func disableSuites(disabled []string, src, release string, isDeb822 func(string) bool) string {
	if len(disabled) == 0 {
		return src
	}
	if isDeb822(src) {
		return disableSuitesDeb822(disabled, src, release)
	}
	for _, d := range disabled {
		suite := suiteName(d, release)
		var b strings.Builder
		for _, line := range strings.SplitAfter(src, "\n") {
			if line == "" {
				continue
			}
			if strings.HasPrefix(line, "#") {
				b.WriteString(line)
				continue
			}
			cols := strings.Fields(line)
			if len(cols) > 1 {
				p := 2
				if strings.HasPrefix(cols[1], "[") {
					for _, col := range cols[1:] {
						p++
						if strings.HasSuffix(col, "]") {
							break
						}
					}
				}
				if p < len(cols) && cols[p] == suite {
					line = "# suite disabled by cloud-init: " + line
				}
			}
			b.WriteString(line)
		}
		src = b.String()
	}
	return src
}

var activeSuites = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\nSuites:[ \t]+[\w-]+`) })

// disableSuitesDeb822 drops the disabled suites from Suites lines and
// comments out a stanza left without any.
func disableSuitesDeb822(disabled []string, src, release string) string {
	var names []string
	for _, d := range disabled {
		names = append(names, suiteName(d, release))
	}
	closeEntry := func(e string) string {
		if activeSuites().MatchString(e) {
			return e
		}
		e = regexp.MustCompile(`\nSuites:.*`).ReplaceAllString(e, "")
		e = strings.ReplaceAll(e, disableSuitesPrefix, "")
		var b strings.Builder
		b.WriteString("## Entry disabled by cloud-init, due to disable_suites\n")
		for _, l := range strings.SplitAfter(e, "\n") {
			if strings.TrimSpace(l) != "" {
				b.WriteString("# disabled by cloud-init: " + l)
			} else {
				b.WriteString(l)
			}
		}
		return b.String()
	}
	var out []string
	entry := ""
	lines := strings.Split(src, "\n")
	if strings.HasSuffix(src, "\n") {
		lines = lines[:len(lines)-1]
	}
	for _, line := range lines {
		if strings.HasPrefix(line, "#") {
			if entry != "" {
				entry += line + "\n"
			} else {
				out = append(out, line)
			}
			continue
		}
		if strings.TrimSpace(line) == "" {
			if entry != "" {
				out = append(out, closeEntry(entry))
				entry = ""
			}
			out = append(out, line)
			continue
		}
		if !strings.HasPrefix(line, "Suites:") {
			entry += line + "\n"
			continue
		}
		orig := strings.Fields(line)[1:]
		var kept []string
		for _, s := range orig {
			if !slices.Contains(names, s) {
				kept = append(kept, s)
			}
		}
		if len(kept) != len(orig) {
			entry += disableSuitesPrefix + line + "\n"
			line = "Suites: " + strings.Join(kept, " ")
		}
		entry += line + "\n"
	}
	if entry != "" {
		out = append(out, closeEntry(entry))
	}
	return strings.Join(out, "\n")
}

// addSources is add_apt_sources, then the forced source refresh.
func (r *aptRun) addSources(ctx context.Context, params map[string]string, matcher *regexp.Regexp) error {
	if matcher == nil {
		return fmt.Errorf("did not get a valid repo matcher")
	}
	for _, s := range r.cfg.Sources {
		hardened := s.HasSource() && strings.Contains(s.Source, "$KEY_FILE")
		fn, err := r.addKey(ctx, s.Key, s.Keyid, s.Keyserver, s.Filename, hardened)
		if err != nil {
			return fmt.Errorf("apt source %s: %w", s.Name, err)
		}
		if hardened {
			params["KEY_FILE"] = fn
		}
		if !s.HasSource() {
			continue
		}
		source, err := renderAptTemplate(s.Source, params)
		if err != nil {
			return fmt.Errorf("apt source %s: %w", s.Name, err)
		}
		file := s.Filename
		if !strings.HasPrefix(file, "/") {
			file = path.Join(AptSourceParts, file)
		}
		if !strings.HasSuffix(file, ".list") {
			file += ".list"
		}
		if matcher.MatchString(source) {
			if _, err := r.output(ctx, []string{"add-apt-repository", "--no-update", source}, nil, nil); err != nil {
				return fmt.Errorf("add-apt-repository failed: %w", err)
			}
			continue
		}
		content := []byte(source + "\n")
		if !s.Append.Given || pyval.Truthy(s.Append.Value) {
			if old, err := r.c.Root.ReadFile(file); err == nil {
				content = append(old, content...)
			}
		}
		if err := r.c.Root.WriteFile(file, content, 0o644); err != nil {
			return fmt.Errorf("failed write to file %s: %w", file, err)
		}
	}
	pm := r.c.Distro.Packages()
	a, ok := pm.(distro.Apt)
	if !ok {
		return nil
	}
	pr := &pkgRun{c: r.c, pm: aptFromConfig(r.c, a, r.aptGet)}
	if !pr.aptAvailable() {
		r.c.Log.Debug("Skipping update for package manager 'apt': not available.")
		return nil
	}
	if err := pr.run(ctx, pr.pm.Update()); err != nil {
		r.c.Log.Error(fmt.Sprintf("Failed to update package using apt: %v", err))
	}
	return nil
}
