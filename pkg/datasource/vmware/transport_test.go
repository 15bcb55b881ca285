package vmware

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestEnvKey(t *testing.T) {
	for in, want := range map[string]string{
		"guestinfo.metadata":          "VMX_GUESTINFO_METADATA",
		"guestinfo.metadata.encoding": "VMX_GUESTINFO_METADATA_ENCODING",
		"guestinfo.userdata":          "VMX_GUESTINFO_USERDATA",
	} {
		if got := EnvKey(in); got != want {
			t.Errorf("EnvKey(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestEnvTransport(t *testing.T) {
	e := EnvTransport{"VMX_GUESTINFO_METADATA": "md", "VMX_GUESTINFO_USERDATA": ""}
	ctx := context.Background()
	if v, err := e.Get(ctx, "guestinfo.metadata"); v != "md" || err != nil {
		t.Errorf("Get = %q, %v", v, err)
	}
	for _, k := range []string{"guestinfo.userdata", "guestinfo.vendordata"} {
		if _, err := e.Get(ctx, k); !errors.Is(err, ErrNoValue) {
			t.Errorf("%s: err = %v, want ErrNoValue", k, err)
		}
	}
	if err := e.Set(ctx, "guestinfo.metadata", "---"); !errors.Is(err, ErrReadOnly) {
		t.Errorf("Set: err = %v", err)
	}
}

func TestCommandTransport(t *testing.T) {
	gi := t.TempDir()
	os.WriteFile(filepath.Join(gi, "metadata"), []byte("instance-id: i\n"), 0o644)
	ctx := context.Background()
	for _, vmtoolsd := range []bool{false, true} {
		name := RPCToolName
		if vmtoolsd {
			name = VMToolsdName
		}
		t.Run(name, func(t *testing.T) {
			c := &CommandTransport{Path: fakeTool(t, name, gi), VMToolsd: vmtoolsd}
			if c.Name() != c.Path {
				t.Errorf("Name() = %q", c.Name())
			}
			v, err := c.Get(ctx, "guestinfo.metadata")
			if err != nil || v != "instance-id: i\n" {
				t.Fatalf("Get = %q, %v", v, err)
			}
			if _, err := c.Get(ctx, "guestinfo.nothing"); !errors.Is(err, ErrNoValue) {
				t.Errorf("unset: err = %v", err)
			}
			if err := c.Set(ctx, "guestinfo."+name, "a value with spaces"); err != nil {
				t.Fatal(err)
			}
			if v, _ := c.Get(ctx, "guestinfo."+name); v != "a value with spaces" {
				t.Errorf("after Set: %q", v)
			}
		})
	}
	if c := calls(t, gi); !strings.HasPrefix(c[len(c)-1], "--cmd info-get guestinfo.vmtoolsd") {
		t.Errorf("vmtoolsd called with %q", c[len(c)-1])
	}
}

func TestCommandTransportFailures(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name, script string
		noValue      bool
		want         string
	}{
		{"exit 1 silent", "exit 1", true, ""},
		{"exit 1 no value", "echo 'No value found' >&2; exit 1", true, ""},
		{"exit 1 other error", "echo 'Failed sending message' >&2; exit 1", false, "exit status 1: Failed sending message"},
		{"exit 1 with output", "echo partial; exit 1", false, "exit status 1"},
		{"exit 2", "printf 'boom\\nmore\\n' >&2; exit 2", false, "exit status 2: boom"},
		{"killed", "kill -9 $$", false, "signal: killed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &CommandTransport{Path: writeScript(t, t.TempDir(), "tool", "#!/bin/sh\n"+tc.script+"\n")}
			_, err := c.Get(ctx, "guestinfo.metadata")
			if tc.noValue {
				if !errors.Is(err, ErrNoValue) {
					t.Fatalf("err = %v, want ErrNoValue", err)
				}
				return
			}
			if err == nil || errors.Is(err, ErrNoValue) || !strings.Contains(err.Error(), tc.want) ||
				!strings.Contains(err.Error(), "info-get guestinfo.metadata: "+c.Path) {
				t.Fatalf("err = %v, want containing %q", err, tc.want)
			}
		})
	}
	t.Run("missing", func(t *testing.T) {
		c := &CommandTransport{Path: missing}
		if _, err := c.Get(ctx, "guestinfo.metadata"); err == nil || errors.Is(err, ErrNoValue) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		c := &CommandTransport{Path: writeScript(t, t.TempDir(), "tool", "#!/bin/sh\nexec sleep 60\n"), Timeout: 100 * time.Millisecond}
		_, err := c.Get(ctx, "guestinfo.metadata")
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "after 100ms") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("child keeps the pipe", func(t *testing.T) {
		c := &CommandTransport{Path: writeScript(t, t.TempDir(), "tool", "#!/bin/sh\nsleep 2 &\necho value\n")}
		v, err := c.Get(ctx, "guestinfo.metadata")
		if err != nil && !strings.Contains(err.Error(), "WaitDelay") {
			t.Fatalf("err = %v", err)
		}
		if err == nil && v != "value\n" {
			t.Errorf("v = %q", v)
		}
	})
}

func TestLimitedBuffer(t *testing.T) {
	b := &limitedBuffer{max: 5}
	b.Write([]byte("abc"))
	if b.over {
		t.Fatal("over after 3 of 5")
	}
	if n, err := b.Write([]byte("defg")); n != 4 || err != nil {
		t.Fatalf("Write = %d, %v", n, err)
	}
	if !b.over || b.String() != "abcde" {
		t.Errorf("over %v, kept %q", b.over, b.String())
	}
}

func TestFindCommand(t *testing.T) {
	dir := t.TempDir()
	tool := writeScript(t, dir, RPCToolName, "#!/bin/sh\n")
	t.Setenv("PATH", dir)
	for _, tc := range []struct{ path, name, want string }{
		{"", RPCToolName, tool},
		{tool, "other", tool},
		{RPCToolName, "other", tool},
		{"", VMToolsdName, ""},
		{missing, RPCToolName, ""},
	} {
		if got := FindCommand(tc.path, tc.name); got != tc.want {
			t.Errorf("FindCommand(%q, %q) = %q, want %q", tc.path, tc.name, got, tc.want)
		}
	}
}
