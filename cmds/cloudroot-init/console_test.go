package main

import (
	"bytes"
	"context"
	"log/slog"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/cilog"
)

// TestConsoleLevels: warnings and cloud-init's DEPRECATED level are named
// on the console, INFO lines are not.
func TestConsoleLevels(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(newConsoleHandler(&buf, slog.LevelInfo, func() float64 { return 1.5 }))
	log.Info("plain")
	log.Warn("careful")
	log.Log(context.Background(), cilog.LevelDeprecated, "old key")
	want := "cloudroot-init[   1.500]: plain\n" +
		"cloudroot-init[   1.500]: WARN: careful\n" +
		"cloudroot-init[   1.500]: DEPRECATED: old key\n"
	if buf.String() != want {
		t.Errorf("console:\n%s\nwant:\n%s", buf.String(), want)
	}
}
