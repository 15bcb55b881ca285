package vmware

// Transports: how guestinfo keys are read (and, for cleanup-guestinfo,
// written). Three exist, as in cloud-init plus one: the environment
// (VMX_GUESTINFO_* variables, for containers), the tools' commands
// (vmware-rpctool, vmtoolsd --cmd) and the native backdoor (backdoor.go).

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// Transport reads and writes guestinfo keys. Keys are full names
// ("guestinfo.metadata", "guestinfo.metadata.encoding").
type Transport interface {
	// Name says which transport this is, for logs and errors
	// ("/usr/bin/vmware-rpctool", "backdoor", "environment").
	Name() string
	// Get returns the key's value as the host has it, or an error wrapping
	// ErrNoValue when the key is not set.
	Get(ctx context.Context, key string) (string, error)
	// Set sets the key's value.
	Set(ctx context.Context, key, value string) error
}

// ErrNoValue means the guestinfo key is not set.
var ErrNoValue = errors.New("no value found")

// ErrReadOnly is returned by transports that cannot set keys.
var ErrReadOnly = errors.New("transport cannot set guestinfo keys")

// noValueText is what the host answers for an unset key.
const noValueText = "No value found"

// EnvKey is the environment variable carrying a guestinfo key in the
// envvar transport: "guestinfo.metadata.encoding" →
// "VMX_GUESTINFO_METADATA_ENCODING" (cloud-init's
// get_guestinfo_envvar_key_name).
func EnvKey(key string) string {
	return strings.ReplaceAll(strings.ToUpper("vmx."+key), ".", "_")
}

// EnvTransport reads guestinfo keys from environment variables (a copy of
// the environment, so the caller decides which one).
type EnvTransport map[string]string

// Name implements Transport.
func (EnvTransport) Name() string { return "environment" }

// Get implements Transport: an unset or empty variable has no value.
func (e EnvTransport) Get(_ context.Context, key string) (string, error) {
	v := e[EnvKey(key)]
	if v == "" {
		return "", fmt.Errorf("%s: %w", EnvKey(key), ErrNoValue)
	}
	return v, nil
}

// Set implements Transport: the environment is read-only.
func (EnvTransport) Set(_ context.Context, key, _ string) error {
	return fmt.Errorf("%s: %w", EnvKey(key), ErrReadOnly)
}

// Command names of the tools, looked up on PATH.
const (
	RPCToolName  = "vmware-rpctool"
	VMToolsdName = "vmtoolsd"
)

// DefaultCommandTimeout bounds one run of a tool.
const DefaultCommandTimeout = 10 * time.Second

// CommandTransport runs vmware-rpctool ("RPC") or vmtoolsd ("--cmd RPC")
// for each key.
type CommandTransport struct {
	// Path is the command to run.
	Path string
	// VMToolsd says Path is vmtoolsd, which takes the RPC after --cmd.
	VMToolsd bool
	// Timeout bounds one run; 0 means DefaultCommandTimeout.
	Timeout time.Duration
}

// Name implements Transport.
func (c *CommandTransport) Name() string { return c.Path }

// run runs the tool with one RPC and returns its output. An exit status
// of 1 with nothing on stdout and nothing or "No value found" on stderr
// is ErrNoValue (how both tools report an unset key); any other failure is
// an error quoting stderr.
func (c *CommandTransport) run(ctx context.Context, rpc string) (string, error) {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultCommandTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	args := []string{rpc}
	if c.VMToolsd {
		args = []string{"--cmd", rpc}
	}
	cmd := exec.CommandContext(ctx, c.Path, args...)
	// A tool that leaves a child holding its pipes must not hold Get.
	cmd.WaitDelay = time.Second
	stdout := &limitedBuffer{max: MaxReply}
	var stderr limitedBuffer
	stderr.max = 4096
	cmd.Stdout, cmd.Stderr = stdout, &stderr
	err := cmd.Run()
	if stdout.over {
		return "", fmt.Errorf("%s: output larger than %d bytes", c.Path, MaxReply)
	}
	if err == nil {
		return stdout.String(), nil
	}
	if ctx.Err() != nil {
		return "", fmt.Errorf("%s: %w (after %s)", c.Path, ctx.Err(), timeout)
	}
	errText := strings.TrimSpace(stderr.String())
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 1 && strings.TrimSpace(stdout.String()) == "" &&
		(errText == "" || errText == noValueText) {
		return "", ErrNoValue
	}
	if errText != "" {
		return "", fmt.Errorf("%s: %w: %s", c.Path, err, firstLine(errText))
	}
	return "", fmt.Errorf("%s: %w", c.Path, err)
}

// Get implements Transport with "info-get KEY".
func (c *CommandTransport) Get(ctx context.Context, key string) (string, error) {
	v, err := c.run(ctx, "info-get "+key)
	if err != nil {
		return "", fmt.Errorf("info-get %s: %w", key, err)
	}
	return v, nil
}

// Set implements Transport with "info-set KEY VALUE".
func (c *CommandTransport) Set(ctx context.Context, key, value string) error {
	if _, err := c.run(ctx, "info-set "+key+" "+value); err != nil {
		return fmt.Errorf("info-set %s: %w", key, err)
	}
	return nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// limitedBuffer keeps at most max bytes and notes when more came.
type limitedBuffer struct {
	bytes.Buffer
	max  int
	over bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.Len(); len(p) > room {
		b.over = true
		if room > 0 {
			b.Buffer.Write(p[:room])
		}
		return len(p), nil
	}
	return b.Buffer.Write(p)
}

// FindCommand resolves a tool: path when set (a name is looked up on
// PATH, a path is used as is), else name on PATH. "" when not found.
func FindCommand(path, name string) string {
	if path == "" {
		path = name
	}
	p, err := exec.LookPath(path)
	if err != nil {
		return ""
	}
	return p
}
