package main

import (
	"testing"
	"time"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
)

func TestIncludeBudget(t *testing.T) {
	if got := includeBudget(bootenv.ParseCmdline("cloudroot.ds-include=30")); got != 30*time.Second {
		t.Errorf("includeBudget = %v", got)
	}
}
