package main

import (
	"strings"
	"testing"
)

func TestGuard(t *testing.T) {
	const ext4 = 0xef53
	tests := []struct {
		name string
		w    where
		want action
	}{
		{"pid1 ramfs", where{PID: 1, RootFS: ramfsMagic}, actBoot},
		{"pid1 tmpfs", where{PID: 1, RootFS: tmpfsMagic}, actBoot},
		// The kernel passes unknown command line words to init; PID 1
		// exiting would panic the kernel.
		{"pid1 initramfs with --help", where{PID: 1, RootFS: ramfsMagic, Args: []string{"--help"}}, actBoot},
		{"pid1 initramfs with single", where{PID: 1, RootFS: tmpfsMagic, Args: []string{"single"}}, actBoot},
		// The issue: run by hand on a live system.
		{"by hand --help", where{PID: 4242, RootFS: ext4, Args: []string{"--help"}}, actUsage},
		{"by hand -h", where{PID: 4242, RootFS: ext4, Args: []string{"-h"}}, actUsage},
		{"by hand --version", where{PID: 4242, RootFS: ext4, Args: []string{"--version"}}, actVersion},
		{"by hand no args", where{PID: 4242, RootFS: ext4}, actRefuse},
		{"by hand on a tmpfs root", where{PID: 4242, RootFS: tmpfsMagic}, actRefuse},
		{"pid1 on ext4 (container)", where{PID: 1, RootFS: ext4}, actRefuse},
		{"pid1 on ext4 --version", where{PID: 1, RootFS: ext4, Args: []string{"--version"}}, actVersion},
		{"test flag private ns", where{PID: 7, RootFS: ext4, Args: []string{testFlag}, OwnMntNS: "mnt:[2]", InitMntNS: "mnt:[1]"}, actBoot},
		{"test flag host ns", where{PID: 7, RootFS: ext4, Args: []string{testFlag}, OwnMntNS: "mnt:[1]", InitMntNS: "mnt:[1]"}, actRefuse},
		{"test flag ns unreadable", where{PID: 7, RootFS: ext4, Args: []string{testFlag}}, actRefuse},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, why := guard(tt.w)
			if got != tt.want {
				t.Fatalf("guard(%+v) = %v (%q), want %v", tt.w, got, why, tt.want)
			}
			if (got == actRefuse) != (why != "") {
				t.Errorf("guard(%+v): reason %q for action %v", tt.w, why, got)
			}
		})
	}
}

func TestUsageNamesTestFlag(t *testing.T) {
	if !strings.Contains(usage, testFlag) {
		t.Errorf("usage does not mention %s", testFlag)
	}
}

// TestGateByHand is issue 25 item 10: cloudroot-init --help on a live
// system printed nothing and went on to mount tmpfs over /run and /tmp.
func TestGateByHand(t *testing.T) {
	const ext4 = 0xef53
	tests := []struct {
		args     []string
		wantCode int
		wantOut  string
		wantErr  string
	}{
		{[]string{"--help"}, 0, "usage: cloudroot-init", ""},
		{[]string{"--version"}, 0, "cloudroot-init " + Version, ""},
		{nil, 1, "", "not PID 1"},
	}
	for _, tt := range tests {
		var out, errw strings.Builder
		code, ok := gate(where{PID: 4242, RootFS: ext4, Args: tt.args}, &out, &errw)
		if ok {
			t.Fatalf("gate(%q) lets the boot run on a live system", tt.args)
		}
		if code != tt.wantCode || !strings.Contains(out.String(), tt.wantOut) || !strings.Contains(errw.String(), tt.wantErr) {
			t.Errorf("gate(%q) = %d, stdout %q, stderr %q; want %d, %q, %q", tt.args, code, out.String(), errw.String(), tt.wantCode, tt.wantOut, tt.wantErr)
		}
	}
}
