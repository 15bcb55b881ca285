//go:build !linux

package main

import "errors"

func run() error { return errors.New("cloudroot-init runs only on Linux, as PID 1 of an initramfs") }
