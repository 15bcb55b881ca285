// Package serial opens the serial ports that metadata services answer on
// (CloudSigma's server context, SmartOS's metadata protocol in KVM guests)
// the way pyserial opens them for cloud-init.
//
// Contract:
//   - Open: non-blocking, no controlling terminal, raw 8N1 at 9600 baud
//     without flow control, modem control lines ignored, pending input
//     discarded, DTR and RTS raised where supported. The file supports read
//     and write deadlines, so every read can be bounded by a context.
//   - OpenLocked also takes the exclusive lock mdata-get takes, retrying
//     while another process holds it, at most until the context ends.
//   - A path that is not a terminal is an error "<path>: setting raw
//     mode: ..."; the open error itself is returned as is (*os.PathError).
//   - Only Linux is supported: elsewhere both return an *os.PathError
//     wrapping errors.ErrUnsupported.
package serial
