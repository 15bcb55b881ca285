package main

import (
	"testing"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
)

func TestFloorParams(t *testing.T) {
	for _, tc := range []struct {
		cmdline, want string
	}{
		{"root=/dev/vda1 console=ttyS0", ""},
		{"cloudroot.async_probe=1", "async_probe"},
		{"cloudroot.async_probe", "async_probe"},
		{"cloudroot.async_probe=0", ""},
		{"cloudroot.async_probe=off quiet", ""},
		{"cloudroot.async_probe=false", ""},
	} {
		t.Run(tc.cmdline, func(t *testing.T) {
			if got := floorParams(bootenv.ParseCmdline(tc.cmdline)); got != tc.want {
				t.Errorf("floorParams(%q) = %q, want %q", tc.cmdline, got, tc.want)
			}
		})
	}
}
