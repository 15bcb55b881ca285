package main

import (
	"fmt"
	"strings"
	"time"
)

// The console's progress lines: one before each step that may wait,
// naming what it waits for and for how long at most, and one banner at
// hand-off with the outcome. They are plain messages for the console
// handler (which adds "cloudroot-init[uptime]: " and goes through the
// secret scrubber); downloads have their own lines (pkg/netboot).
// Nothing here reads the clock or the machine: the boot passes the facts.

// formatBudget spells a wait bound briefly: "500ms", "5s", "2m", "1m30s".
func formatBudget(d time.Duration) string {
	switch {
	case d <= 0:
		return "no wait"
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d%time.Second != 0:
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	s := d.String()
	for _, z := range []string{"m0s", "h0m"} {
		if strings.HasSuffix(s, z) {
			s = strings.TrimSuffix(s, z[1:])
		}
	}
	return s
}

// waitRootLine: before waiting for the root device.
func waitRootLine(root string, budget time.Duration) string {
	return fmt.Sprintf("waiting for root device %s (up to %s)", root, formatBudget(budget))
}

// dhcpBudget is the longest DHCPv4 bring-up: the carrier wait, then the
// DISCOVER and REQUEST exchanges, each sent retries times with a timeout
// doubling from first.
func dhcpBudget(carrier, first time.Duration, retries int) time.Duration {
	var exchange time.Duration
	for i := range max(retries, 1) {
		exchange += first << i
	}
	return carrier + 2*exchange
}

// dhcpLine: before bringing the ephemeral network up. ifaces empty means
// every ethernet link; static is ip= with an address.
func dhcpLine(ifaces []string, static bool, budget time.Duration) string {
	on := "every ethernet link"
	if len(ifaces) > 0 {
		on = strings.Join(ifaces, ",")
	}
	if static {
		return fmt.Sprintf("network: static ip= on %s (up to %s for carrier)", on, formatBudget(budget))
	}
	return fmt.Sprintf("network: DHCP on %s (up to %s)", on, formatBudget(budget))
}

// datasourceLine: before asking one datasource; network says it is asked
// over the ephemeral network, with its detection window (probe) and what
// is left of the search's deadline (left, 0: none), else it reads local
// media.
func datasourceLine(name string, network bool, probe, left time.Duration) string {
	if !network {
		return "datasource " + name + ": looking for local seed"
	}
	if left <= 0 {
		return fmt.Sprintf("datasource %s: asking the metadata service (up to %s to answer)", name, formatBudget(probe))
	}
	return fmt.Sprintf("datasource %s: asking the metadata service (up to %s to answer, search ends within %s)", name, formatBudget(probe), formatBudget(left.Round(time.Second)))
}

// outcome is what the banner reports.
type outcome struct {
	// Disabled: provisioning did not run (DisabledReason says why).
	Disabled       bool
	DisabledReason string
	// FailedStages are the stages that returned an error or recorded one
	// in status.json, in order.
	FailedStages []string
	// Errors counts the errors recorded in status.json (status "error").
	Errors int
	// Warnings counts recoverable errors (status "degraded").
	Warnings   int
	Datasource string
	InstanceID string
	// Uptime is the time since the kernel started, at hand-off.
	Uptime float64
}

// banner is the one line at hand-off, dracut/systemd style: a bracketed
// verdict, the result, the datasource and instance, and the time since
// boot.
func banner(o outcome) string {
	var tag, what string
	switch {
	case len(o.FailedStages) > 0:
		tag = "FAILED"
		what = "failed at stage " + strings.Join(o.FailedStages, ",")
		if o.Errors > 0 {
			what += fmt.Sprintf(" (%d error%s)", o.Errors, plural(o.Errors))
		}
	case o.Disabled:
		tag = " SKIP "
		what = "disabled"
		if o.DisabledReason != "" {
			what += " (" + o.DisabledReason + ")"
		}
	case o.Warnings > 0:
		tag = " WARN "
		what = fmt.Sprintf("provisioned, degraded with %d warning%s", o.Warnings, plural(o.Warnings))
	default:
		tag = "  OK  "
		what = "provisioned"
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "[%s] cloudroot: %s", tag, what)
	if o.Datasource != "" {
		fmt.Fprintf(&sb, "; datasource %s", o.Datasource)
	}
	if o.InstanceID != "" {
		fmt.Fprintf(&sb, "; instance-id %s", o.InstanceID)
	}
	fmt.Fprintf(&sb, "; %.2fs since boot", o.Uptime)
	return sb.String()
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
