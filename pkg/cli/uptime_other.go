//go:build !linux

package cli

func bootTime() (float64, bool) { return 0, false }
func stdinIsTerminal() bool     { return false }
