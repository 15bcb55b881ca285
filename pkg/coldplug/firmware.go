package coldplug

import (
	"fmt"
	"strings"
)

// FirmwareFailure is a kernel report that a driver asked for a firmware
// file the direct loader did not find ("r8169 0000:01:00.0: Direct
// firmware load for rtl_nic/rtl8168d-1.fw failed with error -2").
type FirmwareFailure struct {
	// Device is the driver and device the kernel named ("r8169
	// 0000:01:00.0"); empty when the line names none.
	Device string
	File   string
	// Error is the kernel's errno text ("-2": ENOENT).
	Error string
}

// String is the console message for f.
func (f FirmwareFailure) String() string {
	dev := f.Device
	if dev == "" {
		dev = "a device"
	}
	return fmt.Sprintf("firmware %s for %s is not in this initramfs (error %s)", f.File, dev, f.Error)
}

const (
	fwPrefix = "Direct firmware load for "
	fwFailed = " failed with error "
)

// ParseFirmwareFailure recognizes the kernel's firmware-load failure in one
// log line: a /dev/kmsg record ("6,339,5140900,-;msg"), a dmesg line
// ("[    5.14] msg") or the bare message.
func ParseFirmwareFailure(line string) (FirmwareFailure, bool) {
	line, _, _ = strings.Cut(line, "\n") // kmsg continuation lines
	i := strings.Index(line, fwPrefix)
	if i < 0 {
		return FirmwareFailure{}, false
	}
	rest := line[i+len(fwPrefix):]
	j := strings.Index(rest, fwFailed)
	if j <= 0 {
		return FirmwareFailure{}, false
	}
	f := FirmwareFailure{File: rest[:j], Error: strings.TrimSpace(rest[j+len(fwFailed):])}
	prefix := line[:i]
	if k := strings.IndexByte(prefix, ';'); k >= 0 && strings.Count(prefix[:k], ",") >= 2 {
		prefix = prefix[k+1:] // kmsg "prio,seq,usec,flags;"
	}
	if strings.HasPrefix(strings.TrimSpace(prefix), "[") {
		if k := strings.IndexByte(prefix, ']'); k >= 0 {
			prefix = prefix[k+1:]
		}
	}
	f.Device = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(prefix), ":"))
	return f, true
}
