package cm

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cloudroot/cloudroot/pkg/distro"
	"github.com/cloudroot/cloudroot/pkg/modules"
	"github.com/cloudroot/cloudroot/pkg/modules/internal/famtest"
	"github.com/cloudroot/cloudroot/pkg/modules/internal/modtest"
)

// upstreamCM is one case of testdata/<module>-upstream.json
// (scripts/goldens/cm.py: upstream's handler on the same golden cases).
type upstreamCM struct {
	Events []struct {
		Subp    []string `json:"subp"`
		Env     []string `json:"env"`
		Cwd     string   `json:"cwd"`
		Install []string `json:"install"`
		Service []string `json:"service"`
		Readurl string   `json:"readurl"`
	} `json:"events"`
	Files map[string]string `json:"files"`
	Chown [][]string        `json:"chown"`
	Error string            `json:"error"`
}

// cmModules are the configuration-management modules compared with
// upstream by TestCMUpstream, their downloads answered by a recorder.
var cmModules = []modules.Module{Ansible, SaltMinion, Mcollective, cmModule("puppet", nil), cmModule("chef", nil)}

// cmModule is the module called name with its installer downloads
// recorded in *fetched and answered with a shell script.
func cmModule(name string, fetched *[]string) modules.Module {
	fetch := FetchOptions{Fetch: func(_ context.Context, url string, _ int) ([]byte, error) {
		if fetched != nil {
			*fetched = append(*fetched, url)
		}
		return []byte("#!/bin/sh\n"), nil
	}}
	switch name {
	case "puppet":
		return NewPuppet(fetch)
	case "chef":
		return NewChef(fetch)
	}
	for _, m := range Modules() {
		if m.Name == name {
			return m
		}
	}
	panic("no module " + name)
}

// TestCMUpstream runs each configuration-management module on every golden
// case and requires upstream's commands in order (its install_packages and
// manage_service calls as this distro's commands), the files and
// directories it left (content and mode), and its error message.
func TestCMUpstream(t *testing.T) {
	for _, m := range cmModules {
		t.Run(m.Name, func(t *testing.T) {
			b, err := os.ReadFile("testdata/" + m.Name + "-upstream.json")
			if err != nil {
				t.Fatal(err)
			}
			var up map[string]upstreamCM
			if err := json.Unmarshal(b, &up); err != nil {
				t.Fatal(err)
			}
			dirs, _ := filepath.Glob(filepath.Join("testdata/modgolden", m.Name, "*"))
			if len(dirs) != len(up) {
				t.Errorf("%d cases, %d in upstream's goldens: run scripts/goldens/cm.py", len(dirs), len(up))
			}
			for name, want := range up {
				t.Run(name, func(t *testing.T) { compareCM(t, m, name, want) })
			}
		})
	}
}

func compareCM(t *testing.T, m modules.Module, name string, want upstreamCM) {
	g := famtest.Setup(t, filepath.Join("testdata/modgolden", m.Name, name))
	var fetched, wantFetched []string
	m = cmModule(m.Name, &fetched)
	runErr := m.Run(t.Context(), g.C)
	got := ""
	if runErr != nil {
		got = runErr.Error()
	}
	if !strings.HasSuffix(got, want.Error) || (want.Error == "") != (got == "") {
		t.Errorf("error %q, upstream %q", got, want.Error)
	}
	f := g.C.Facts()
	var wantCmds []string
	line := func(env, argv []string, dir string) string {
		s := strings.Join(append(slices.Clone(env), argv...), " ")
		if dir != "" {
			s += " (in " + dir + ")"
		}
		return s
	}
	for _, ev := range want.Events {
		switch {
		case ev.Readurl != "":
			wantFetched = append(wantFetched, ev.Readurl)
		case ev.Subp != nil:
			wantCmds = append(wantCmds, line(ev.Env, ev.Subp, ev.Cwd))
		case ev.Install != nil:
			var pk []distro.Package
			for _, p := range ev.Install {
				n, v, _ := strings.Cut(p, "=")
				pk = append(pk, distro.Package{Name: n, Version: v})
			}
			for _, c := range f.Packages().Install(pk) {
				wantCmds = append(wantCmds, line(c.Env, c.Argv, ""))
			}
		case ev.Service != nil:
			c, err := f.Services().Command(ev.Service[0], ev.Service[1], ev.Service[2:]...)
			if err != nil {
				t.Fatal(err)
			}
			wantCmds = append(wantCmds, line(c.Env, c.Argv, ""))
		}
	}
	gotCmds := slices.Clone(g.Runner.Log)
	for i, l := range gotCmds {
		gotCmds[i] = modtest.TmpPath.ReplaceAllString(l, "<tmp>/")
	}
	if diff := cmp.Diff(wantCmds, gotCmds); diff != "" {
		t.Errorf("commands (-upstream +cloudroot):\n%s", diff)
	}
	if diff := cmp.Diff(wantFetched, fetched); diff != "" {
		t.Errorf("downloads (-upstream +cloudroot):\n%s", diff)
	}
	after := modtest.Snapshot(t, g.Root)
	for p, content := range want.Files {
		gp := p
		if in, err := os.ReadFile(filepath.Join("testdata/modgolden", m.Name, name, "root", p)); err == nil && "mode 0644\n"+string(in) == content {
			continue // an input upstream left alone (cloudroot's golden harness adds users to passwd)
		}
		if strings.HasSuffix(p, "/") {
			content = strings.Replace(content, "dir ", "directory ", 1) + "\n"
		} else if _, body, _ := strings.Cut(content, "\n"); body != "" && !strings.HasSuffix(body, "\n") {
			content += "\n<no newline at end>\n"
		}
		content = createdHeader.ReplaceAllString(content, "# Created by cloud-init v. <version> on <date>")
		if a, ok := after[gp]; ok {
			after[gp] = createdHeader.ReplaceAllString(a, "# Created by cloud-init v. <version> on <date>")
		}
		if (m.Name == "salt_minion" && strings.HasSuffix(p, "/minion.pem")) || (m.Name == "chef" && strings.HasSuffix(p, ".pem")) {
			// Deliberate: private keys are 0600 (cloud-init: 0644).
			content = strings.Replace(content, "mode 0644", "mode 0600", 1)
		}
		if a, ok := after[gp]; !ok {
			t.Errorf("%s: upstream wrote it, cloudroot did not", p)
		} else if a != content {
			t.Errorf("%s (-upstream +cloudroot):\n%s", p, cmp.Diff(content, a))
		}
	}
	var extra []string
	for p, a := range after {
		if _, ok := want.Files[p]; !ok && g.Before[p] != a {
			extra = append(extra, p)
		}
	}
	sort.Strings(extra)
	for _, p := range extra {
		// cloud-init's executable temp dir: the goldens ran in the host's /tmp.
		if strings.HasPrefix(p, "/var/lib/cloud/") || strings.HasPrefix(p, "/var/tmp/") || p == "/var/" {
			continue
		}
		t.Errorf("%s: cloudroot wrote it, upstream did not", p)
	}
}

// createdHeader is util.make_header's line (version and time differ).
var createdHeader = regexp.MustCompile(`(?m)^# Created by cloud-init v\. \S+ on .*$`)

// FuzzConfigObj: whatever server.cfg holds, parsing never panics, and once
// written (indentation and quoting normalised) the file reads back and
// writes to the same text.
func FuzzConfigObj(f *testing.F) {
	for _, p := range []string{"testdata/modgolden/mcollective/existing-cfg-ubuntu/root/etc/mcollective/server.cfg"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Add("a = 'x' # c\n[s]\n  k = ,\n")
	f.Fuzz(func(t *testing.T, text string) {
		out, err := parseConfigObj(text).String()
		if err != nil {
			return
		}
		if out, err = parseConfigObj(out).String(); err != nil {
			return
		}
		again, err := parseConfigObj(out).String()
		if err != nil {
			return
		}
		if again != out {
			t.Fatalf("%q → %q → %q", text, out, again)
		}
	})
}

// FuzzRawConfig: whatever puppet.conf holds, parsing never panics, and
// what cloudroot writes reads back to the same sections and options.
func FuzzRawConfig(f *testing.F) {
	b, err := os.ReadFile("testdata/modgolden/puppet/fallback-packages-rhel/root/etc/puppet/puppet.conf")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(b))
	f.Add("[DEFAULT]\na: 1\n[x]\nb = c\n  d\n")
	f.Fuzz(func(t *testing.T, text string) {
		r, err := parseRawConfig(text, "puppet.conf")
		if err != nil {
			return
		}
		out := r.String()
		r2, err := parseRawConfig(out, "puppet.conf")
		if err != nil {
			return
		}
		if again := r2.String(); again != out {
			t.Fatalf("%q → %q → %q", text, out, again)
		}
	})
}

// TestCMDocsExamples: every example of cloud-init's docs for the
// configuration-management modules (pkg/modules/testdata/docs/<module>/) runs on a
// Debian target where the tools are installed, without error.
func TestCMDocsExamples(t *testing.T) {
	outputs := map[string]string{
		"ansible-pull --version":                               "ansible-pull [core 2.14.3]\n",
		"su - ubuntu -c env PATH=$PATH ansible-pull --version": "ansible-pull [core 2.14.3]\n",
		"/usr/bin/python3 -m pip list":                         "ansible-core 2.14.3\n",
		"puppet config print config":                           "/etc/puppet/puppet.conf\n",
		"puppet config print ssldir":                           "/var/lib/puppet/ssl\n",
		"puppet config print csr_attributes":                   "/etc/puppet/csr_attributes.yaml\n",
	}
	for _, m := range cmModules {
		files, _ := filepath.Glob(filepath.Join(modtest.Shared(), "docs", m.Name, "example*.yaml"))
		if len(files) == 0 {
			t.Errorf("%s: no examples", m.Name)
		}
		for _, f := range files {
			t.Run(m.Name+"/"+filepath.Base(f), func(t *testing.T) {
				dir := t.TempDir()
				b, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				os.WriteFile(filepath.Join(dir, "config.yaml"), b, 0o644)
				os.WriteFile(filepath.Join(dir, "distro"), []byte("debian\n"), 0o644)
				for _, p := range []string{"usr/bin/ansible", "usr/bin/chef-client"} {
					os.MkdirAll(filepath.Join(dir, "root", filepath.Dir(p)), 0o755)
					os.WriteFile(filepath.Join(dir, "root", p), []byte("#!/bin/sh\n"), 0o755)
				}
				os.MkdirAll(filepath.Join(dir, "root/etc/puppet"), 0o755)
				os.WriteFile(filepath.Join(dir, "root/etc/puppet/puppet.conf"), []byte("[main]\n"), 0o644)
				g := famtest.Setup(t, dir)
				for k, v := range outputs {
					g.Runner.Outputs[k] = v
				}
				if err := cmModule(m.Name, nil).Run(t.Context(), g.C); err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				changed := 0
				for p, a := range modtest.Snapshot(t, g.Root) {
					if g.Before[p] != a {
						changed++
					}
				}
				if len(g.Runner.Log) == 0 && changed == 0 {
					t.Errorf("%s ran no command and wrote nothing", f)
				}
			})
		}
	}
}

func TestModuleGolden(t *testing.T) {
	for _, m := range cmModules {
		t.Run(m.Name, func(t *testing.T) { famtest.Golden(t, m) })
	}
}
