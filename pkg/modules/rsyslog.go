package modules

// rsyslog (cloud-init cc_rsyslog, init stage, per-instance, all distros)
// writes rsyslog configuration snippets and remote forwarding rules:
//
//  1. rsyslog.configs entries (strings, or {content, filename}) go to
//     config_dir/filename (default /etc/rsyslog.d/20-cloud-config.conf);
//     the first entry for a file truncates it, later ones append, each
//     ends with a newline. rsyslog.remotes ({name: "[match ][@|@@]host[:port]"})
//     become one more entry between "# begin remotes" and "# end remotes".
//     The deprecated list form (rsyslog: [...], with rsyslog_filename and
//     rsyslog_dir) is translated by the decoder.
//  2. install_rsyslog installs packages (default rsyslog) when check_exe
//     (rsyslogd) is missing.
//  3. When files were written on a booted system, service_reload_command
//     runs: "auto" is the service manager's try-reload of
//     system_info.rsyslog_svcname (default rsyslog); a list is run as
//     given. In the initramfs rsyslog has not started and reads its
//     configuration when it does.
//
// Remotes are written in name order (cloud-init keeps their YAML order).

import (
	"context"
	"errors"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/cloudroot/cloudroot/pkg/distro"
	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
	"github.com/cloudroot/cloudroot/pkg/state"
)

// Rsyslog is cc_rsyslog.
var Rsyslog = Module{
	Name:       "rsyslog",
	Frequency:  state.PerInstance,
	Keys:       []string{"rsyslog"},
	ActivateBy: []string{"rsyslog"},
	Run:        Typed(runRsyslog),
}

// rsyslogEntry is one configs entry.
type rsyslogEntry struct {
	Content  string
	Filename string // "" = the default file
	HasBody  bool
}

// rsyslogConfig is the module's configuration.
type rsyslogConfig struct {
	Present        bool
	Configs        []rsyslogEntry
	ConfigDir      string
	ConfigFilename string
	Remotes        map[string]string
	ReloadAuto     bool
	ReloadCommand  []string
	CheckExe       string
	Packages       []string
	Install        bool
}

// pyType names a decoded YAML value's Python type, for cloud-init's
// type errors.
func pyType(v any) string { return "<class '" + pyval.TypeName(v) + "'>" }

// rsyslogKeys is the module's configuration as given: rsyslog (a
// mapping, or the list deprecated in 22.2 with rsyslog_filename and
// rsyslog_dir beside it), its keys checked by decodeRsyslog with
// cloud-init's type errors; and system_info.rsyslog_svcname.
type rsyslogKeys struct {
	HasRsyslog bool           `cfg:"rsyslog,present"`
	Rsyslog    any            `cfg:"rsyslog"`
	Section    rsyslogSection `cfg:"rsyslog,loose"`
	// ListItems is rsyslog when it is a list (the deprecated form).
	ListItems  []rsyslogItem `cfg:"rsyslog,loose"`
	Filename   pyval.Opt     `cfg:"rsyslog_filename"`
	Dir        pyval.Opt     `cfg:"rsyslog_dir"`
	SystemInfo struct {
		SvcName string `cfg:"rsyslog_svcname,scalar"`
	} `cfg:"system_info,loose"`
}

// rsyslogSection is the rsyslog mapping, each key as given (its type
// checked by decodeRsyslog), configs' items and remotes decoded when they
// have the right shape.
type rsyslogSection struct {
	Configs        pyval.Opt `cfg:"configs"`
	ConfigDir      pyval.Opt `cfg:"config_dir"`
	ConfigFilename pyval.Opt `cfg:"config_filename"`
	Remotes        pyval.Opt `cfg:"remotes"`
	ReloadCommand  pyval.Opt `cfg:"service_reload_command"`
	CheckExe       pyval.Opt `cfg:"check_exe"`
	Packages       pyval.Opt `cfg:"packages"`
	Install        pyval.Opt `cfg:"install_rsyslog"`
	// Items is configs when it is a list.
	Items []rsyslogItem `cfg:"configs,loose"`
	// RemoteMap is remotes when it is a mapping: every name is a remote.
	RemoteMap map[string]any `cfg:"remotes,loose"`
}

// rsyslogItem is one configs item: a mapping's filename and content, or
// a scalar (the content).
type rsyslogItem struct {
	IsMap             bool
	Filename, Content pyval.Opt
	Scalar            any
}

// UnmarshalPy reads one item.
func (r *rsyslogItem) UnmarshalPy(d *pyval.Decoder, v any) error {
	switch m := v.(type) {
	case map[string]any:
		var f struct {
			Filename pyval.Opt `cfg:"filename"`
			Content  pyval.Opt `cfg:"content"`
		}
		if err := d.Decode(m, &f); err != nil {
			return err
		}
		*r = rsyslogItem{IsMap: true, Filename: f.Filename, Content: f.Content}
	default:
		*r = rsyslogItem{Scalar: v}
	}
	return nil
}

func decodeRsyslog(c *Context, cfg rsyslogKeys) (rsyslogConfig, error) {
	rc := rsyslogConfig{ConfigDir: "/etc/rsyslog.d", ConfigFilename: "20-cloud-config.conf", ReloadAuto: true,
		CheckExe: "rsyslogd", Packages: []string{"rsyslog"}}
	v, ok := cfg.Rsyslog, cfg.HasRsyslog
	if !ok {
		return rc, nil
	}
	rc.Present = true
	m := cfg.Section
	if l, ok := v.([]any); ok {
		c.Deprecate("The rsyslog key with value of type 'list'", "22.2", "")
		m = rsyslogSection{Configs: pyval.Opt{Given: true, Value: l}, Items: cfg.ListItems,
			ConfigFilename: cfg.Filename, ConfigDir: cfg.Dir}
	}
	typeErr := func(key, want string, v any) error {
		return fmt.Errorf("Invalid type for key `%s`. Expected type(s): %s. Current type: %s", key, want, pyType(v))
	}
	var errs []error
	for _, f := range []struct {
		key string
		o   pyval.Opt
	}{{"configs", m.Configs}, {"config_dir", m.ConfigDir}, {"config_filename", m.ConfigFilename}, {"remotes", m.Remotes},
		{"service_reload_command", m.ReloadCommand}, {"check_exe", m.CheckExe}, {"packages", m.Packages}, {"install_rsyslog", m.Install}} {
		key, x := f.key, f.o.Value
		if !f.o.Given {
			continue
		}
		switch key {
		case "configs":
			if _, ok := x.([]any); !ok {
				errs = append(errs, typeErr(key, "<class 'list'>", x))
				continue
			}
			for _, e := range m.Items {
				if !e.IsMap {
					rc.Configs = append(rc.Configs, rsyslogEntry{Content: scalarString(e.Scalar), HasBody: true})
					continue
				}
				ent := rsyslogEntry{Filename: scalarString(e.Filename.Value)}
				if e.Content.Given {
					ent.Content, ent.HasBody = scalarString(e.Content.Value), true
				}
				rc.Configs = append(rc.Configs, ent)
			}
		case "config_dir", "config_filename", "check_exe":
			s, ok := x.(string)
			if !ok {
				errs = append(errs, typeErr(key, "<class 'str'>", x))
				continue
			}
			switch key {
			case "config_dir":
				rc.ConfigDir = s
			case "config_filename":
				rc.ConfigFilename = s
			default:
				rc.CheckExe = s
			}
		case "remotes":
			if !isMapping(x) {
				errs = append(errs, typeErr(key, "<class 'dict'>", x))
				continue
			}
			rc.Remotes = map[string]string{}
			for k, v := range m.RemoteMap {
				rc.Remotes[k] = scalarString(v)
			}
		case "service_reload_command":
			switch t := x.(type) {
			case string:
				rc.ReloadAuto = t == "auto"
				if !rc.ReloadAuto {
					rc.ReloadCommand = []string{t}
				}
			case []any:
				rc.ReloadAuto, rc.ReloadCommand = false, StringList(t)
			default:
				errs = append(errs, typeErr(key, "(<class 'str'>, <class 'list'>)", x))
			}
		case "packages":
			l, ok := x.([]any)
			if !ok {
				errs = append(errs, typeErr(key, "<class 'list'>", x))
				continue
			}
			rc.Packages = StringList(l)
		case "install_rsyslog":
			b, ok := x.(bool)
			if !ok {
				errs = append(errs, typeErr(key, "<class 'bool'>", x))
				continue
			}
			rc.Install = b
		}
	}
	return rc, errors.Join(errs...)
}

func runRsyslog(ctx context.Context, c *Context, cfg rsyslogKeys) error {
	rc, err := decodeRsyslog(c, cfg)
	if err != nil || !rc.Present {
		return err
	}
	configs := rc.Configs
	if len(rc.Remotes) > 0 {
		configs = append(configs, rsyslogEntry{Content: remotesConfig(c, rc.Remotes), HasBody: true})
	}
	f := c.Facts()
	if rc.Install && !c.Which(rc.CheckExe) {
		if err := c.InstallPackages(ctx, f, rc.Packages); err != nil {
			return fmt.Errorf("rsyslog: %w", err)
		}
	}
	if len(configs) == 0 {
		c.Log.Debug("Empty config rsyslog['configs'], nothing to do", "module", "rsyslog")
		return nil
	}
	var written []string
	content := map[string]string{}
	for i, e := range configs {
		if !e.HasBody {
			c.Warnf("No 'content' entry in config entry %d", i+1)
			continue
		}
		name := e.Filename
		if name == "" {
			name = rc.ConfigFilename
		}
		name = strings.TrimSpace(name)
		if name == "" {
			c.Warnf("Entry %d has an empty filename", i+1)
			continue
		}
		fn := path.Join(rc.ConfigDir, name)
		if _, seen := content[fn]; !seen {
			written = append(written, fn)
		}
		body := e.Content
		if !strings.HasSuffix(body, "\n") {
			body += "\n"
		}
		content[fn] += body
	}
	for _, fn := range written {
		if err := c.Root.WriteFile(fn, []byte(content[fn]), 0o644); err != nil {
			c.Warnf("Failed to write to %s: %v", fn, err)
		}
	}
	if len(written) == 0 {
		c.Log.Debug("restart of syslog not necessary, no changes made", "module", "rsyslog")
		return nil
	}
	if !c.Booted {
		c.Log.Debug("rsyslog not started yet; it reads its configuration when it starts", "module", "rsyslog")
		return nil
	}
	if rc.ReloadAuto {
		svc := "rsyslog"
		if s := cfg.SystemInfo.SvcName; s != "" {
			svc = s
		}
		err = c.ManageService(ctx, f, distro.ActionTryReload, svc)
	} else if len(rc.ReloadCommand) > 0 {
		err = c.RunCmd(ctx, distro.Cmd{Argv: rc.ReloadCommand})
	}
	if err != nil {
		c.Warnf("Failed to reload syslog %v", err)
	}
	return nil
}

// remotesConfig is remotes_to_rsyslog_cfg, in name order; a line that does
// not parse is warned about and left out.
func remotesConfig(c *Context, remotes map[string]string) string {
	names := make([]string, 0, len(remotes))
	for n := range remotes {
		names = append(names, n)
	}
	sort.Strings(names)
	lines := []string{"# begin remotes"}
	for _, n := range names {
		line := remotes[n]
		if line == "" {
			continue
		}
		r, err := ParseSyslogRemote(line, n)
		if err != nil {
			c.Warnf("failed loading remote %s: %s [%v]", n, line, err)
			continue
		}
		lines = append(lines, r.String())
	}
	lines = append(lines, "# end remotes")
	return strings.Join(lines, "\n") + "\n"
}

// SyslogRemote is one rsyslog forwarding rule.
type SyslogRemote struct {
	Name, Match, Proto, Addr string
	Port                     int // 0 = none
}

var (
	remoteComment = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[ ]*[#]+[ ]*`) })
	remoteHost    = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(?P<proto>[@]{0,2})(([\[](?P<bracket>[^\]]*)[\]])|(?P<addr>[^:]*))([:](?P<port>[0-9]+))?$`)
	})
)

// ParseSyslogRemote is parse_remotes_line: "[match ][@|@@]host[:port][ # comment]",
// the comment naming the rule when name is "".
func ParseSyslogRemote(line, name string) (SyslogRemote, error) {
	data, comment := line, ""
	if parts := remoteComment().Split(line, -1); len(parts) == 2 {
		data, comment = parts[0], strings.TrimSpace(parts[1])
	}
	toks := strings.Fields(data)
	r := SyslogRemote{Match: "*.*"}
	var hostPort string
	switch len(toks) {
	case 1:
		hostPort = data
	case 2:
		r.Match, hostPort = toks[0], toks[1]
	default:
		return r, fmt.Errorf("line had multiple spaces: %s", data)
	}
	m := remoteHost().FindStringSubmatch(hostPort)
	if m == nil {
		return r, fmt.Errorf("Invalid host specification '%s'", hostPort)
	}
	g := func(n string) string { return m[remoteHost().SubexpIndex(n)] }
	r.Addr = g("addr")
	if r.Addr == "" {
		r.Addr = g("bracket")
	}
	switch g("proto") {
	case "@@":
		r.Proto = "tcp"
	default:
		r.Proto = "udp"
	}
	if p := g("port"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil {
			return r, fmt.Errorf("port '%s' is not an integer", p)
		}
		r.Port = n
	}
	if strings.HasPrefix(r.Addr, "[") && !strings.HasSuffix(r.Addr, "]") {
		return r, fmt.Errorf("host spec had invalid brackets: %s", r.Addr)
	}
	if r.Addr == "" {
		return r, errors.New("address is required")
	}
	r.Name = name
	if r.Name == "" {
		r.Name = comment
	}
	return r, nil
}

// String is the rsyslog rule line.
func (r SyslogRemote) String() string {
	b := r.Match + " "
	switch r.Proto {
	case "udp":
		b += "@"
	case "tcp":
		b += "@@"
	}
	if strings.Contains(r.Addr, ":") {
		b += "[" + r.Addr + "]"
	} else {
		b += r.Addr
	}
	if r.Port != 0 {
		b += ":" + strconv.Itoa(r.Port)
	}
	if r.Name != "" {
		b += " # " + r.Name
	}
	return b
}
