package cli

import (
	"context"
	"strings"
	"testing"
)

// TestVersionProg: --version prints the name the program was called by.
func TestVersionProg(t *testing.T) {
	for _, prog := range []string{"cloud-init", "/usr/bin/cloud-init", "cloudroot"} {
		env, out, _ := newTestEnv(t.TempDir())
		env.Prog = prog
		if rc := Run(context.Background(), env, []string{"--version"}); rc != 0 || out.String() != prog+" "+Version+"\n" {
			t.Errorf("%s --version: exit %d, %q", prog, rc, out)
		}
	}
}

// TestHelpByName: as cloud-init the help is 26.x's; as cloudroot it lists
// cloudroot's own subcommands too, and the usage is wrapped for the name.
func TestHelpByName(t *testing.T) {
	env, out, _ := newTestEnv(t.TempDir())
	env.Prog = "cloudroot"
	if rc := Run(context.Background(), env, []string{"-h"}); rc != 0 {
		t.Fatalf("exit %d", rc)
	}
	s := out.String()
	if !strings.HasPrefix(s, "usage: cloudroot [-h] [--version] [--debug] [--force] [--all-stages]\n                 {init,") {
		t.Errorf("usage:\n%s", s)
	}
	for _, name := range []string{"identify", "growpart", "install", "cloud-id"} {
		if !strings.Contains(s, "    "+name+" ") {
			t.Errorf("cloudroot help lacks %s", name)
		}
	}
	env, out, _ = newTestEnv(t.TempDir())
	Run(context.Background(), env, []string{"--help"})
	if strings.Contains(out.String(), "identify") {
		t.Error("cloud-init help lists cloudroot's own subcommands")
	}
}

// TestUsageRewriterPassesOutput: output that is not an argparse error is
// passed through untouched, even when it starts like a usage line.
func TestUsageRewriterPassesOutput(t *testing.T) {
	var b strings.Builder
	u := &usageRewriter{w: &b}
	u.Write([]byte("use"))
	u.Write([]byte("ful output\n"))
	u.finish(context.Background(), &Env{}, 1, nil)
	u2 := &usageRewriter{w: &b}
	u2.Write([]byte("usage: something else\n"))
	u2.finish(context.Background(), &Env{}, 0, nil)
	if b.String() != "useful output\nusage: something else\n" {
		t.Errorf("got %q", b.String())
	}
}
