package harness

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// QEMU is the emulator binary.
const QEMU = "qemu-system-x86_64"

// lookPath finds a program on PATH, then in the sbin directories (debugfs,
// mkfs.* and sfdisk live there and a user's PATH often lacks them).
func lookPath(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, d := range []string{"/usr/sbin", "/sbin", "/usr/local/sbin"} {
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: not found on PATH or in /usr/sbin, /sbin", name)
}

// HaveTools reports which of names cannot be found.
func HaveTools(names ...string) []string {
	var miss []string
	for _, n := range names {
		if _, err := lookPath(n); err != nil {
			miss = append(miss, n)
		}
	}
	return miss
}

// runTool runs a host program and returns its stdout and stderr; a non-zero
// exit is an error that quotes stderr.
func runTool(ctx context.Context, stdin []byte, env []string, name string, args ...string) (stdout, stderr []byte, err error) {
	p, err := lookPath(name)
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.CommandContext(ctx, p, args...)
	var out, errb bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &errb
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	if err := cmd.Run(); err != nil {
		return out.Bytes(), errb.Bytes(), fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.Bytes(), errb.Bytes(), nil
}
