package vmware

// The guest→host RPC ("RPCI") channel of the VMware backdoor, as pure Go
// over a Port: the message framing of open-vm-tools' lib/message
// (open, send size, send payload, receive size, receive payload, receive
// status, close) on the low-bandwidth backdoor, four bytes per call.
//
// Every backdoor call loads the registers, executes `in eax, dx` on port
// 0x5658 with eax = 0x564D5868 ("VMXh") and reads the registers back. For
// the message command (0x1e in the low half of ecx) the high half of ecx
// is the message type on the way in and the status bits on the way out;
// the high half of edx carries the channel id, esi/edi the channel's
// cookies, ebx the parameter (a length, four payload bytes, a status).
// A reply starts with "1 " on success and "0 " on failure ("0 No value
// found" for an unset guestinfo key).
//
// Only the Port is privileged; this file is exercised in tests against a
// fake host (fakeVMX) speaking the same protocol.

import (
	"context"
	"errors"
	"fmt"
)

// Backdoor constants (open-vm-tools backdoor_def.h, guest_msg_def.h).
const (
	BackdoorMagic = 0x564D5868 // "VMXh"
	BackdoorPort  = 0x5658     // low-bandwidth I/O port
	// BackdoorPortHB is the high-bandwidth port (rep insb/outsb), which is
	// not used: everything goes four bytes at a time over BackdoorPort.
	BackdoorPortHB = 0x5659

	cmdMessage = 0x1e // BDOOR_CMD_MESSAGE

	// RPCIProto opens the guest→host command channel ("RPCI").
	RPCIProto  = 0x49435052
	flagCookie = 0x80000000 // GUESTMSG_FLAG_COOKIE
)

// Message types (the high half of ecx on the way in).
const (
	msgOpen = iota
	msgSendSize
	msgSendPayload
	msgRecvSize
	msgRecvPayload
	msgRecvStatus
	msgClose
)

// Status bits (the high half of ecx on the way out).
const (
	statusSuccess    = 0x0001
	statusDoRecv     = 0x0002
	statusCheckpoint = 0x0010
)

// MaxReply bounds a reply's length (the host announces it before sending).
const MaxReply = 16 << 20

// maxRetries bounds the retries after a checkpoint (the VM was saved in
// the middle of a message) or a legacy open.
const maxRetries = 8

// Regs are the registers of one low-bandwidth backdoor call.
type Regs struct {
	AX, BX, CX, DX, SI, DI uint32
}

// Port performs one backdoor call: the registers in, `in eax, dx`, the
// registers out.
type Port interface {
	Call(in Regs) (Regs, error)
}

// ErrRPC is wrapped by every protocol failure (a status without the
// success bit, an unexpected message type, a reply too long).
var ErrRPC = errors.New("backdoor RPC failed")

func hi(v uint32) uint16 { return uint16(v >> 16) }

// channel is one open message channel.
type channel struct {
	port   Port
	id     uint16
	cookie [2]uint32
}

// call issues one message command on the channel.
func (c *channel) call(typ uint16, bx uint32) (Regs, error) {
	return c.port.Call(Regs{
		AX: BackdoorMagic,
		BX: bx,
		CX: uint32(typ)<<16 | cmdMessage,
		DX: uint32(c.id)<<16 | BackdoorPort,
		SI: c.cookie[0],
		DI: c.cookie[1],
	})
}

// openChannel opens a channel for proto, with cookies when the host knows
// them and without (an old host) otherwise.
func openChannel(p Port, proto uint32) (*channel, error) {
	for _, flags := range []uint32{flagCookie, 0} {
		c := &channel{port: p}
		out, err := c.call(msgOpen, proto|flags)
		if err != nil {
			return nil, err
		}
		if hi(out.CX)&statusSuccess == 0 {
			continue
		}
		c.id = hi(out.DX)
		c.cookie = [2]uint32{out.SI, out.DI}
		return c, nil
	}
	return nil, fmt.Errorf("opening the RPCI channel: %w", ErrRPC)
}

func (c *channel) close() error {
	out, err := c.call(msgClose, 0)
	if err != nil {
		return err
	}
	if hi(out.CX)&statusSuccess == 0 {
		return fmt.Errorf("closing channel %d: %w", c.id, ErrRPC)
	}
	return nil
}

// send sends msg: its size, then its bytes four at a time, little-endian
// (the first byte in the low byte, the last word padded with zeros). A
// checkpoint restarts the message.
func (c *channel) send(ctx context.Context, msg []byte) error {
	for attempt := 0; attempt < maxRetries; attempt++ {
		out, err := c.call(msgSendSize, uint32(len(msg)))
		if err != nil {
			return err
		}
		if hi(out.CX)&statusSuccess == 0 {
			return fmt.Errorf("channel %d: sending the size %d: %w", c.id, len(msg), ErrRPC)
		}
		retry := false
		for off := 0; off < len(msg); off += 4 {
			if err := ctx.Err(); err != nil {
				return err
			}
			out, err := c.call(msgSendPayload, packWord(msg[off:]))
			if err != nil {
				return err
			}
			if hi(out.CX)&statusSuccess == 0 {
				if hi(out.CX)&statusCheckpoint != 0 {
					retry = true
					break
				}
				return fmt.Errorf("channel %d: sending bytes %d-%d: %w", c.id, off, min(off+4, len(msg)), ErrRPC)
			}
		}
		if !retry {
			return nil
		}
	}
	return fmt.Errorf("channel %d: sending: still interrupted by checkpoints after %d attempts: %w", c.id, maxRetries, ErrRPC)
}

// packWord packs up to four bytes of b into a word, first byte lowest.
func packWord(b []byte) uint32 {
	var w uint32
	for i := 0; i < 4 && i < len(b); i++ {
		w |= uint32(b[i]) << (8 * i)
	}
	return w
}

// receive reads the host's reply: its size, then its words, then
// acknowledges it. No pending reply is an empty one.
func (c *channel) receive(ctx context.Context) ([]byte, error) {
	for attempt := 0; attempt < maxRetries; attempt++ {
		out, err := c.call(msgRecvSize, 0)
		if err != nil {
			return nil, err
		}
		if hi(out.CX)&statusSuccess == 0 {
			return nil, fmt.Errorf("channel %d: receiving the reply size: %w", c.id, ErrRPC)
		}
		if hi(out.CX)&statusDoRecv == 0 {
			return nil, nil
		}
		if hi(out.DX) != msgSendSize {
			return nil, fmt.Errorf("channel %d: expected a reply size, got message type %d: %w", c.id, hi(out.DX), ErrRPC)
		}
		size := out.BX
		if size > MaxReply {
			c.ack(statusFail)
			return nil, fmt.Errorf("channel %d: reply of %d bytes is larger than %d: %w", c.id, size, MaxReply, ErrRPC)
		}
		buf := make([]byte, 0, size)
		retry := false
		for uint32(len(buf)) < size {
			if err := ctx.Err(); err != nil {
				c.ack(statusFail)
				return nil, err
			}
			out, err := c.call(msgRecvPayload, statusSuccess)
			if err != nil {
				return nil, err
			}
			if hi(out.CX)&statusSuccess == 0 {
				if hi(out.CX)&statusCheckpoint != 0 {
					retry = true
					break
				}
				c.ack(statusFail)
				return nil, fmt.Errorf("channel %d: receiving byte %d of %d: %w", c.id, len(buf), size, ErrRPC)
			}
			if hi(out.DX) != msgSendPayload {
				c.ack(statusFail)
				return nil, fmt.Errorf("channel %d: expected reply bytes, got message type %d: %w", c.id, hi(out.DX), ErrRPC)
			}
			for i := 0; i < 4 && uint32(len(buf)) < size; i++ {
				buf = append(buf, byte(out.BX>>(8*i)))
			}
		}
		if retry {
			continue
		}
		if err := c.ack(statusSuccess); err != nil {
			return nil, err
		}
		return buf, nil
	}
	return nil, fmt.Errorf("channel %d: receiving: still interrupted by checkpoints after %d attempts: %w", c.id, maxRetries, ErrRPC)
}

const statusFail = 0

// ack tells the host whether the reply arrived.
func (c *channel) ack(status uint32) error {
	out, err := c.call(msgRecvStatus, status)
	if err != nil {
		return err
	}
	if status == statusSuccess && hi(out.CX)&statusSuccess == 0 {
		return fmt.Errorf("channel %d: acknowledging the reply: %w", c.id, ErrRPC)
	}
	return nil
}

// RPCReply is the host's answer to one RPCI command.
type RPCReply struct {
	// OK is true for a reply starting with "1".
	OK bool
	// Text is the reply after its status ("1 " or "0 ").
	Text []byte
}

// ParseRPCReply splits a raw reply into its status and text: "1 value"
// is success, anything else failure (the text after "0 " is the reason).
func ParseRPCReply(b []byte) RPCReply {
	if len(b) == 0 {
		return RPCReply{}
	}
	r := RPCReply{OK: b[0] == '1'}
	if len(b) >= 2 && b[1] == ' ' && (b[0] == '0' || b[0] == '1') {
		r.Text = b[2:]
	} else if b[0] == '0' || b[0] == '1' {
		r.Text = b[1:]
	} else {
		r.Text = b
	}
	return r
}

// RPCI sends one command over a fresh RPCI channel and returns the reply:
// open, send, receive, close. The channel is closed on every path once
// opened.
func RPCI(ctx context.Context, p Port, cmd []byte) (reply RPCReply, err error) {
	c, err := openChannel(p, RPCIProto)
	if err != nil {
		return RPCReply{}, err
	}
	defer func() {
		if cerr := c.close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	if err := c.send(ctx, cmd); err != nil {
		return RPCReply{}, err
	}
	raw, err := c.receive(ctx)
	if err != nil {
		return RPCReply{}, err
	}
	return ParseRPCReply(raw), nil
}
