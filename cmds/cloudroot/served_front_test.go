//go:build cloudroot_front

package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/cli"
)

// TestServedMatchesCommands: the front's argv dispatch (served) and its
// pkg/cli command table (commands_front.go) name the same commands. A
// command served hands to Run must really run here, not be the agent's
// stand-in; one Run only stands in for must be handed to the agent.
func TestServedMatchesCommands(t *testing.T) {
	for _, c := range cli.Commands() {
		var out bytes.Buffer
		env := testEnv(&out)()
		c.Run(context.Background(), env, []string{"--help"})
		standIn := strings.Contains(out.String(), "this command runs in the full agent")
		if got := served([]string{"cloud-init", c.Name, "--help"}); got == standIn {
			t.Errorf("%s: served %v, but the front's Run %s", c.Name, got, map[bool]string{true: "only stands in for the agent", false: "answers it"}[standIn])
		}
	}
}
