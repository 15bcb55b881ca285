package cli

import "golang.org/x/sys/unix"

func bootTime() (float64, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		return 0, false
	}
	return float64(ts.Sec) + float64(ts.Nsec)/1e9, true
}

func stdinIsTerminal() bool {
	_, err := unix.IoctlGetTermios(0, unix.TCGETS)
	return err == nil
}
