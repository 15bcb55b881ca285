package cloudsigma

import "io"

// serve reads requests from rw and writes answer's replies.
func serve(rw io.ReadWriter, answer func(req string) []byte, reqs chan<- string) {
	var buf []byte
	one := make([]byte, 1)
	for {
		if _, err := rw.Read(one); err != nil {
			return
		}
		buf = append(buf, one[0])
		if len(buf) < 4 || one[0] != '>' || buf[len(buf)-2] != '\n' {
			continue
		}
		req := string(buf)
		buf = nil
		select {
		case reqs <- req:
		default:
		}
		if b := answer(req); len(b) > 0 {
			if _, err := rw.Write(b); err != nil {
				return
			}
		}
	}
}
