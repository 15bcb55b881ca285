//go:build !linux || !amd64

package vmware

// nativeBackdoor is false: there is no native backdoor on this platform.
const nativeBackdoor = false

// openNative reports that the backdoor is not implemented here.
func openNative() (Port, func(), error) { return nil, nil, ErrBackdoorUnsupported }
