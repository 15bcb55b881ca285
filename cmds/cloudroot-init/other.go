//go:build !linux

package main

import (
	"errors"
	"os"
)

// Version is stamped at build time (-ldflags -X main.Version=...).
var Version = "26.2-cloudroot"

func here() where { return where{PID: os.Getpid(), Args: os.Args[1:]} }

func run() error { return errors.New("cloudroot-init runs only on Linux, as PID 1 of an initramfs") }
