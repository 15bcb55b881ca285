package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cloudroot/cloudroot/pkg/cli"
	"github.com/google/go-cmp/cmp"
)

func TestServed(t *testing.T) {
	tests := []struct {
		argv []string
		want bool
	}{
		{[]string{"/usr/bin/cloudroot", "--version"}, true},
		{[]string{"cloud-init", "-v"}, true},
		{[]string{"cloud-init", "-d", "--version"}, true},
		{[]string{"cloud-init", "--version", "--bogus"}, true}, // 26.x prints the version first
		{[]string{"cloud-init", "status"}, true},
		{[]string{"cloud-init", "status", "--wait", "--long"}, true},
		{[]string{"cloud-init", "status", "--format", "json"}, true},
		{[]string{"cloud-init", "status", "--bogus"}, true}, // status's own argparse error
		{[]string{"/usr/bin/cloudroot", "--force", "-d", "status", "--format=yaml"}, true},
		{[]string{"cloud-init"}, false},
		{[]string{"cloud-init", "-d"}, false},
		{[]string{"cloud-init", "--help"}, false}, // lists every subcommand
		{[]string{"cloud-init", "-h", "--version"}, false},
		{[]string{"cloud-init", "-dv"}, false},
		{[]string{"cloud-init", "--vers"}, false},
		{[]string{"cloud-init", "--all-stages", "status"}, false},
		{[]string{"cloud-init", "--bogus", "status"}, false},
		{[]string{"cloud-init", "query", "v1"}, true},
		{[]string{"/usr/bin/cloudroot", "-d", "query", "--format", "{{v1.region}}"}, true},
		{[]string{"cloud-init", "query", "--help"}, true},
		{[]string{"cloud-init", "query", "--bogus"}, true}, // query's own argparse error
		{[]string{"cloud-init", "schema", "--system"}, true},
		{[]string{"/usr/bin/cloudroot", "schema", "-c", "x.yaml", "--annotate"}, true},
		{[]string{"cloud-init", "schema"}, true},
		{[]string{"cloud-init", "devel", "net-convert", "-p", "x", "-k", "yaml", "-d", "o", "-D", "ubuntu", "-O", "netplan"}, true},
		{[]string{"cloud-init", "--force", "devel", "net-convert", "--help"}, true},
		{[]string{"/usr/bin/cloudroot", "devel", "net-convert"}, true},
		{[]string{"cloud-init", "devel"}, true},
		{[]string{"cloud-init", "devel", "--help"}, true},
		{[]string{"cloud-init", "devel", "-h", "net-convert"}, true},
		{[]string{"cloud-init", "devel", "bogus"}, true},
		{[]string{"cloud-init", "devel", "--", "hotplug-hook", "-h"}, false},
		{[]string{"cloud-init", "devel", "render", "ud"}, true},
		{[]string{"cloud-init", "devel", "make-mime", "-a", "x:cloud-config"}, true},
		{[]string{"cloud-init", "-d", "devel", "make-mime", "--list-types"}, true},
		{[]string{"cloud-init", "features"}, true},
		{[]string{"cloud-init", "features", "--bogus"}, true}, // features's own argparse error
		{[]string{"/usr/bin/cloudroot", "cloud-id", "-j"}, true},
		{[]string{"cloud-init", "devel", "hotplug-hook", "-s", "net", "query"}, false},
		{[]string{"cloud-init", "net-convert"}, false},
		{[]string{"cloud-init", "--help", "query"}, false},
		{[]string{"cloud-id", "query"}, true}, // cloud-id's own argparse error
		{[]string{"cloud-init", "init", "--local"}, false},
		{[]string{"cloud-init", "modules", "--mode", "final"}, false},
		{[]string{"cloud-init", "nosuch"}, false},
		{[]string{"cloud-init", "analyze", "show"}, true},
		{[]string{"/usr/bin/cloudroot", "-d", "analyze", "blame", "-i", "cloud-init.log"}, true},
		{[]string{"cloud-init", "analyze"}, true}, // analyze's own argparse error
		{[]string{"cloud-init", "--help", "analyze"}, false},
		{[]string{"/usr/bin/cloudroot", "install", "--root", "/x"}, false},
		{[]string{"/usr/bin/cloud-id"}, true},
		{[]string{"/usr/bin/cloud-id", "-l", "-i", "instance-data.json"}, true},
		{[]string{"cloud-id", "--version"}, true},
		{[]string{"/usr/lib/systemd/system-generators/cloudroot-generator", "status"}, false},
		{nil, false},
	}
	for _, tt := range tests {
		if got := served(tt.argv); got != tt.want {
			t.Errorf("served(%q) = %v, want %v", tt.argv, got, tt.want)
		}
	}
}

type execCall struct {
	Path string
	Argv []string
	Env  []string
}

// fakeFront is a front at dir/cloudroot whose exec is recorded.
func fakeFront(dir string, calls *[]execCall, stderr *bytes.Buffer) front {
	self := filepath.Join(dir, "cloudroot")
	return front{
		Self:   self,
		Agents: agentCandidates(self),
		Exec: func(path string, argv, envv []string) error {
			*calls = append(*calls, execCall{path, argv, envv})
			return errors.New("fake exec")
		},
		Stderr: stderr,
	}
}

func testEnv(out *bytes.Buffer) func() *cli.Env {
	return func() *cli.Env {
		return &cli.Env{
			Root: "/nonexistent", Stdout: out, Stderr: out, Prog: "cloud-init",
			Now: time.Now, Uptime: func() float64 { return 1 },
			Sleep: func(context.Context, time.Duration) error { return errors.New("no sleep") },
		}
	}
}

func TestRunHandsOverToAgent(t *testing.T) {
	dir := t.TempDir()
	agent := filepath.Join(dir, AgentName)
	if err := os.WriteFile(agent, []byte("#!/bin/true\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, argv := range [][]string{
		{"/usr/bin/cloud-init", "clean", "--logs"},
		{"cloud-init", "--help"},
		{"cloud-init", "devel", "hotplug-hook", "-s", "net", "query"},
		{"/usr/bin/cloudroot", "modules", "--mode", "config"},
		{"/usr/bin/cloudroot", "single", "--name", "runcmd"},
	} {
		var calls []execCall
		var stderr, out bytes.Buffer
		f := fakeFront(dir, &calls, &stderr)
		environ := []string{"PATH=/usr/bin", "NOTIFY_SOCKET=/run/x"}
		rc := f.run(context.Background(), argv, environ, testEnv(&out))
		want := []execCall{{agent, argv, environ}}
		if diff := cmp.Diff(want, calls); diff != "" {
			t.Errorf("%q: exec (-want +got):\n%s", argv, diff)
		}
		if rc != 1 || !strings.Contains(stderr.String(), "running the full agent "+agent+": fake exec") {
			t.Errorf("%q: failed exec: rc %d, stderr %q", argv, rc, stderr.String())
		}
		if out.Len() != 0 {
			t.Errorf("%q: the front printed %q", argv, out.String())
		}
	}
}

func TestRunAnswersItself(t *testing.T) {
	var calls []execCall
	var stderr, out bytes.Buffer
	f := fakeFront(t.TempDir(), &calls, &stderr)
	rc := f.run(context.Background(), []string{"/usr/bin/cloud-init", "--version"}, nil, testEnv(&out))
	if rc != 0 || out.String() != "cloud-init "+cli.Version+"\n" || len(calls) != 0 {
		t.Errorf("--version: rc %d, out %q, execs %v", rc, out.String(), calls)
	}
	out.Reset()
	rc = f.run(context.Background(), []string{"cloud-init", "status"}, nil, testEnv(&out))
	if rc != 0 || out.String() != "status: not started\n" || len(calls) != 0 {
		t.Errorf("status: rc %d, out %q, execs %v", rc, out.String(), calls)
	}
	out.Reset()
	rc = f.run(context.Background(), []string{"cloud-init", "schema"}, nil, testEnv(&out))
	if want := "Error:\nExpected one of --config-file or --system arguments\n"; rc != 1 || out.String() != want || len(calls) != 0 {
		t.Errorf("schema: rc %d, out %q, execs %v", rc, out.String(), calls)
	}
	// analyze reads the log it is given: the upstream golden of pkg/cli's
	// analyze tests (stdout, "exit: N", stderr).
	out.Reset()
	td := filepath.Join("..", "..", "pkg", "cli", "testdata", "analyze", "two-boots")
	want, err := os.ReadFile(filepath.Join(td, "want-show.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var errOut bytes.Buffer
	env := func() *cli.Env { e := testEnv(&out)(); e.Stderr = &errOut; return e }
	rc = f.run(context.Background(), []string{"cloud-init", "analyze", "show", "-i", filepath.Join(td, "cloud-init.log")}, nil, env)
	if got := fmt.Sprintf("%sexit: %d\n%s", out.String(), rc, errOut.String()); got != string(want) || len(calls) != 0 {
		t.Errorf("analyze show: execs %v, got:\n%s\nwant:\n%s", calls, got, want)
	}
	// net-convert's unrecognized argument ends with devel's help, which the
	// front must print itself (go test -tags cloudroot_front runs this
	// against the front's pkg/cli).
	out.Reset()
	rc = f.run(context.Background(), []string{"cloud-init", "devel", "net-convert", "--bogus"}, nil, testEnv(&out))
	if want := "error: unrecognized arguments: --bogus\n\nusage: cloud-init devel [-h] {hotplug-hook,net-convert,render,make-mime} ...\n"; rc != 2 || !strings.HasPrefix(out.String(), want) || len(calls) != 0 {
		t.Errorf("devel net-convert --bogus: rc %d, out %q, execs %v", rc, out.String(), calls)
	}
}

func TestRunAgentMissing(t *testing.T) {
	dir := t.TempDir()
	var calls []execCall
	var stderr, out bytes.Buffer
	f := fakeFront(dir, &calls, &stderr)
	f.Agents = []string{filepath.Join(dir, AgentName), filepath.Join(dir, "lib", AgentName)}
	rc := f.run(context.Background(), []string{"/usr/bin/cloud-init", "collect-logs"}, nil, testEnv(&out))
	want := "cloud-init: the full agent is missing: neither " + f.Agents[0] + " nor " + f.Agents[1] + " exists (this command runs in it; reinstall cloudroot)\n"
	if rc != 1 || stderr.String() != want || len(calls) != 0 {
		t.Errorf("rc %d, execs %v, stderr:\n%s\nwant:\n%s", rc, calls, stderr.String(), want)
	}
}

// TestRunFrontInAgentsPlace: a front installed as the agent finds no agent
// (it never execs itself) and says so.
func TestRunFrontInAgentsPlace(t *testing.T) {
	var calls []execCall
	var stderr, out bytes.Buffer
	f := front{Self: AgentPath, Agents: agentCandidates(AgentPath), Stderr: &stderr,
		Exec: func(path string, argv, envv []string) error {
			calls = append(calls, execCall{path, argv, envv})
			return nil
		}}
	rc := f.run(context.Background(), []string{AgentPath, "modules", "--mode", "final"}, nil, testEnv(&out))
	want := "cloudroot-agent: the full agent is missing: " + AgentPath + " is this front binary, not the agent (reinstall cloudroot)\n"
	if rc != 1 || stderr.String() != want || len(calls) != 0 {
		t.Errorf("rc %d, execs %v, stderr:\n%s\nwant:\n%s", rc, calls, stderr.String(), want)
	}
}

func TestAgentCandidates(t *testing.T) {
	for self, want := range map[string][]string{
		"/usr/bin/cloudroot":             {"/usr/bin/cloudroot-agent", AgentPath},
		"/src/cloudroot/build/cloudroot": {"/src/cloudroot/build/cloudroot-agent", AgentPath},
		"/usr/lib/cloudroot/x":           {AgentPath},
		"":                               {AgentPath},
	} {
		if diff := cmp.Diff(want, agentCandidates(self)); diff != "" {
			t.Errorf("%q (-want +got):\n%s", self, diff)
		}
	}
}

// frontMustNotLink are packages that the front binary must not link: each
// would put its package initialisation (and its dependencies') back into
// every command line the front serves. query and schema need pkg/userdata
// (gonja, net/http for #include) and the schema's jsonschema, so those are
// allowed; the boot's stages and modules, SSH, DHCP, netlink, disks and the
// datasources are not.
var frontMustNotLink = []string{
	"github.com/cloudroot/cloudroot/pkg/stages",
	"github.com/cloudroot/cloudroot/pkg/modules",
	"github.com/cloudroot/cloudroot/pkg/datasource",
	"golang.org/x/crypto/ssh",
	"github.com/insomniacslk/dhcp/dhcpv4",
	"github.com/vishvananda/netlink",
	"github.com/diskfs/go-diskfs/filesystem/iso9660",
}

// TestFrontLinksLittle lists the front's packages as `just agent` builds it
// (the cloudroot_front tag).
func TestFrontLinksLittle(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list the front's packages")
	}
	cmd := exec.Command(gobin, "list", "-tags", "cloudroot_front", "-deps", ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(b))
	for _, p := range frontMustNotLink {
		for _, d := range deps {
			if d == p {
				t.Errorf("the front binary links %s", p)
			}
		}
	}
	if len(deps) > 280 {
		t.Errorf("the front binary links %d packages (bound 280; the full agent links ~370)", len(deps))
	}
}

// frontCLIFiles are the pkg/cli files the front is built from: the
// commands it serves (served) and what they share. Every other pkg/cli
// file starts with `//go:build !cloudroot_front`; a new file without that
// line would link its command's dependencies into every front process.
var frontCLIFiles = []string{
	"allstages_front.go", "analyze.go", "analyze_plot.go", "argparse.go", "cli.go", "cloudid.go",
	"commandindex.go", "commands_front.go", "devel.go", "develhelp.go", "features.go", "netconvert.go",
	"pyformat.go", "query.go", "schema.go", "status.go", "termsafe.go", "toplevel.go", "uptime_linux.go",
}

// TestFrontCLIFiles: the front builds exactly frontCLIFiles of pkg/cli
// (TestFrontLinksLittle bounds what they import; this catches a light new
// file too).
func TestFrontCLIFiles(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list pkg/cli's files")
	}
	cmd := exec.Command(gobin, "list", "-tags", "cloudroot_front", "-f", "{{join .GoFiles \" \"}}", "../../pkg/cli")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	got := strings.Fields(string(b))
	if diff := cmp.Diff(frontCLIFiles, got); diff != "" {
		t.Errorf("pkg/cli files in the front (-want +got); a file the front does not serve needs //go:build !cloudroot_front, one it serves belongs in frontCLIFiles and served:\n%s", diff)
	}
}
