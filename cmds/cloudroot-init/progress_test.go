package main

import (
	"bytes"
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/cloudroot/cloudroot/pkg/secret"
)

func TestFormatBudget(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{0, "no wait"},
		{-time.Second, "no wait"},
		{250 * time.Millisecond, "250ms"},
		{time.Second, "1s"},
		{1500 * time.Millisecond, "1.5s"},
		{5 * time.Second, "5s"},
		{90 * time.Second, "1m30s"},
		{120 * time.Second, "2m"},
		{time.Hour, "1h"},
		{time.Hour + 30*time.Second, "1h0m30s"},
	} {
		if got := formatBudget(tc.d); got != tc.want {
			t.Errorf("formatBudget(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}

func TestDHCPBudget(t *testing.T) {
	for _, tc := range []struct {
		carrier, first time.Duration
		retries        int
		want           time.Duration
	}{
		// 5s carrier, then DISCOVER and REQUEST each 2+4+8s.
		{5 * time.Second, 2 * time.Second, 3, 33 * time.Second},
		{0, time.Second, 1, 2 * time.Second},
		{0, time.Second, 0, 2 * time.Second}, // at least one transmission
	} {
		if got := dhcpBudget(tc.carrier, tc.first, tc.retries); got != tc.want {
			t.Errorf("dhcpBudget(%v, %v, %d) = %v, want %v", tc.carrier, tc.first, tc.retries, got, tc.want)
		}
	}
}

func TestProgressLines(t *testing.T) {
	for _, tc := range []struct {
		name, got, want string
	}{
		{"root", waitRootLine("LABEL=cloudimg-rootfs", 10*time.Second), "waiting for root device LABEL=cloudimg-rootfs (up to 10s)"},
		{"rootwait", waitRootLine("/dev/vda1", 2*time.Minute), "waiting for root device /dev/vda1 (up to 2m)"},
		{"dhcp any", dhcpLine(nil, false, 33*time.Second), "network: DHCP on every ethernet link (up to 33s)"},
		{"dhcp BOOTIF", dhcpLine([]string{"eth1"}, false, 33*time.Second), "network: DHCP on eth1 (up to 33s)"},
		{"static", dhcpLine([]string{"eth0"}, true, 5*time.Second), "network: static ip= on eth0 (up to 5s for carrier)"},
		{"local ds", datasourceLine("NoCloud", false, 5*time.Second, 0), "datasource NoCloud: looking for local seed"},
		{"network ds", datasourceLine("Ec2", true, 5*time.Second, 0), "datasource Ec2: asking the metadata service (up to 5s to answer)"},
		{"network ds in a search", datasourceLine("Ec2", true, 5*time.Second, 117400*time.Millisecond), "datasource Ec2: asking the metadata service (up to 5s to answer, search ends within 1m57s)"},
		{"network ds max_wait", datasourceLine("OpenStack", true, 90*time.Second, 0), "datasource OpenStack: asking the metadata service (up to 1m30s to answer)"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, tc.got, tc.want)
		}
	}
}

func TestBanner(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    outcome
		want string
	}{
		{"provisioned", outcome{Datasource: "DataSourceNoCloud [seed=/dev/sr0]", InstanceID: "iid-1", Uptime: 8.0219},
			"[  OK  ] cloudroot: provisioned; datasource DataSourceNoCloud [seed=/dev/sr0]; instance-id iid-1; 8.02s since boot"},
		{"degraded one", outcome{Warnings: 1, Datasource: "DataSourceNone", InstanceID: "iid-datasource-none", Uptime: 12.5},
			"[ WARN ] cloudroot: provisioned, degraded with 1 warning; datasource DataSourceNone; instance-id iid-datasource-none; 12.50s since boot"},
		{"degraded many", outcome{Warnings: 3, Datasource: "DataSourceEc2Local", InstanceID: "i-0aa", Uptime: 9},
			"[ WARN ] cloudroot: provisioned, degraded with 3 warnings; datasource DataSourceEc2Local; instance-id i-0aa; 9.00s since boot"},
		{"disabled", outcome{Disabled: true, DisabledReason: "no datasource found", Uptime: 6.1},
			"[ SKIP ] cloudroot: disabled (no datasource found); 6.10s since boot"},
		{"disabled no reason", outcome{Disabled: true, Uptime: 6.1},
			"[ SKIP ] cloudroot: disabled; 6.10s since boot"},
		{"failed", outcome{FailedStages: []string{"init"}, Warnings: 2, Datasource: "DataSourceNoCloud", InstanceID: "iid-1", Uptime: 7.25},
			"[FAILED] cloudroot: failed at stage init; datasource DataSourceNoCloud; instance-id iid-1; 7.25s since boot"},
		{"module errors", outcome{FailedStages: []string{"init"}, Errors: 2, Datasource: "DataSourceNoCloud", InstanceID: "iid-1", Uptime: 7.25},
			"[FAILED] cloudroot: failed at stage init (2 errors); datasource DataSourceNoCloud; instance-id iid-1; 7.25s since boot"},
		{"one error", outcome{FailedStages: []string{"init-local"}, Errors: 1, Uptime: 4},
			"[FAILED] cloudroot: failed at stage init-local (1 error); 4.00s since boot"},
		{"failed and disabled", outcome{FailedStages: []string{"local", "handoff"}, Disabled: true, DisabledReason: "datasource could not be read", Uptime: 5},
			"[FAILED] cloudroot: failed at stage local,handoff; 5.00s since boot"},
	} {
		if got := banner(tc.o); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

// The progress lines reach the console through the handler and the
// secret scrubber like every other line.
func TestProgressScrubbed(t *testing.T) {
	var out bytes.Buffer
	known := &secret.Known{}
	known.Set([]string{"hunter2-token"})
	h := newConsoleHandler(&secret.Writer{W: &out, Known: known}, slog.LevelInfo, func() float64 { return 1.5 })
	log := slog.New(h)
	log.InfoContext(context.Background(), banner(outcome{Disabled: true, DisabledReason: "seed said hunter2-token", Uptime: 2}))
	got := out.String()
	want := "cloudroot-init[   1.500]: [ SKIP ] cloudroot: disabled (seed said "
	if !bytes.HasPrefix([]byte(got), []byte(want)) {
		t.Fatalf("console line = %q, want prefix %q", got, want)
	}
	if bytes.Contains(out.Bytes(), []byte("hunter2-token")) {
		t.Errorf("secret reached the console: %q", got)
	}
}
