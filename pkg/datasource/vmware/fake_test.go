package vmware

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
)

// fakeVMX is a VMware host behind the Port interface: it speaks the RPCI
// message protocol and answers info-get and info-set from Guestinfo.
type fakeVMX struct {
	mu        sync.Mutex
	Guestinfo map[string]string // "guestinfo.metadata" → value
	// Legacy refuses channels opened with cookies (an old host).
	Legacy bool
	// SendCheckpoints and RecvCheckpoints are how many payload calls are
	// answered with a checkpoint before the host goes on.
	SendCheckpoints, RecvCheckpoints int
	// Refuse, when set, fails every command with this text.
	Refuse string
	// Mangle, when set, may change each answer.
	Mangle func(in Regs, out *Regs)

	chans    map[uint16]*fakeChan
	next     uint16
	Calls    int
	Commands []string
	Open     int // channels open now
}

type fakeChan struct {
	cookie   [2]uint32
	sendSize int
	sent     []byte
	reply    []byte
	off      int
}

func ok(extra uint16) uint32 { return uint32(statusSuccess|extra) << 16 }

// Call implements Port.
func (f *fakeVMX) Call(in Regs) (Regs, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.Calls++
	out := f.answer(in)
	if f.Mangle != nil {
		f.Mangle(in, &out)
	}
	return out, nil
}

func (f *fakeVMX) answer(in Regs) Regs {
	fail := Regs{}
	if in.AX != BackdoorMagic || in.DX&0xffff != BackdoorPort || in.CX&0xffff != cmdMessage {
		return fail
	}
	typ, id := hi(in.CX), hi(in.DX)
	if typ == msgOpen {
		if in.BX&^flagCookie != RPCIProto || f.Legacy && in.BX&flagCookie != 0 {
			return fail
		}
		if f.chans == nil {
			f.chans = map[uint16]*fakeChan{}
		}
		f.next++
		c := &fakeChan{}
		if in.BX&flagCookie != 0 {
			c.cookie = [2]uint32{0xC0FFEE00 + uint32(f.next), 0xBADC0DE}
		}
		f.chans[f.next] = c
		f.Open++
		return Regs{CX: ok(0), DX: uint32(f.next) << 16, SI: c.cookie[0], DI: c.cookie[1]}
	}
	c := f.chans[id]
	if c == nil || c.cookie != [2]uint32{in.SI, in.DI} {
		return fail
	}
	switch typ {
	case msgSendSize:
		c.sendSize, c.sent = int(in.BX), nil
		if c.sendSize == 0 {
			c.reply = f.execute("")
		}
		return Regs{CX: ok(0)}
	case msgSendPayload:
		if f.SendCheckpoints > 0 {
			f.SendCheckpoints--
			return Regs{CX: uint32(statusCheckpoint) << 16}
		}
		for i := 0; i < 4 && len(c.sent) < c.sendSize; i++ {
			c.sent = append(c.sent, byte(in.BX>>(8*i)))
		}
		if len(c.sent) == c.sendSize {
			c.reply = f.execute(string(c.sent))
		}
		return Regs{CX: ok(0)}
	case msgRecvSize:
		if c.reply == nil {
			return Regs{CX: ok(0)}
		}
		c.off = 0
		return Regs{CX: ok(statusDoRecv), DX: msgSendSize << 16, BX: uint32(len(c.reply))}
	case msgRecvPayload:
		if f.RecvCheckpoints > 0 {
			f.RecvCheckpoints--
			return Regs{CX: uint32(statusCheckpoint) << 16}
		}
		if in.BX != statusSuccess || c.off >= len(c.reply) {
			return fail
		}
		w := packWord(c.reply[c.off:])
		c.off += 4
		return Regs{CX: ok(0), DX: msgSendPayload << 16, BX: w}
	case msgRecvStatus:
		if in.BX == statusSuccess {
			c.reply = nil
		}
		return Regs{CX: ok(0)}
	case msgClose:
		delete(f.chans, id)
		f.Open--
		return Regs{CX: ok(0)}
	}
	return fail
}

// execute runs one RPCI command.
func (f *fakeVMX) execute(cmd string) []byte {
	f.Commands = append(f.Commands, cmd)
	if f.Refuse != "" {
		return []byte("0 " + f.Refuse)
	}
	if key, found := strings.CutPrefix(cmd, "info-get "); found {
		if v, ok := f.Guestinfo[key]; ok {
			return []byte("1 " + v)
		}
		return []byte("0 No value found")
	}
	if rest, found := strings.CutPrefix(cmd, "info-set "); found {
		key, val, _ := strings.Cut(rest, " ")
		if f.Guestinfo == nil {
			f.Guestinfo = map[string]string{}
		}
		f.Guestinfo[key] = val
		return []byte("1 ")
	}
	return []byte("0 Unknown command")
}

// opener returns a Backdoor.open for the fake, counting opens.
func (f *fakeVMX) opener(opens *int) func() (Port, func(), error) {
	return func() (Port, func(), error) {
		f.mu.Lock()
		if opens != nil {
			*opens++
		}
		f.mu.Unlock()
		return f, func() {}, nil
	}
}

// guestinfoDir loads a directory of guestinfo files (named after the key
// without "guestinfo.") as the fake's values.
func guestinfoDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return m
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		m["guestinfo."+e.Name()] = string(b)
	}
	return m
}

// toolScript is a fake vmware-rpctool / vmtoolsd: it answers info-get
// from files in GI (named after the key without "guestinfo."), writes
// info-set values there and logs every call to GI/.calls.
const toolScript = `#!/bin/sh
gi='GI'
echo "$*" >> "$gi/.calls"
[ "$1" = "--cmd" ] && shift
case "$1" in
"info-get guestinfo."*)
	key=${1#info-get guestinfo.}
	if [ -f "$gi/$key" ]; then cat "$gi/$key"; exit 0; fi
	echo "No value found" >&2
	exit 1;;
"info-set guestinfo."*)
	rest=${1#info-set guestinfo.}
	key=${rest%% *}
	printf '%s' "${rest#* }" > "$gi/$key"
	exit 0;;
esac
echo "Unknown command" >&2
exit 1
`

// writeScript writes an executable script into dir.
func writeScript(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// fakeTool writes a fake tool answering from gi (a directory).
func fakeTool(t *testing.T, name, gi string) string {
	t.Helper()
	return writeScript(t, t.TempDir(), name, strings.ReplaceAll(toolScript, "GI", gi))
}

// calls returns the commands a fake tool logged.
func calls(t *testing.T, gi string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(gi, ".calls"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// copyDir copies src (when it exists) into a new temporary directory.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return dst
}

// testCase is testdata/<case>/case.json.
type testCase struct {
	DMI bootenv.DMI `json:"dmi"`
	// Environ is the envvar transport's environment.
	Environ map[string]string `json:"environ"`
	// Transport is "vmware-rpctool", "vmtoolsd", "backdoor" or "" (none).
	Transport string `json:"transport"`
	// Config is the datasource configuration.
	Config map[string]any `json:"config"`
}

func readCase(t *testing.T, dir string) testCase {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "case.json"))
	if err != nil {
		t.Fatal(err)
	}
	var c testCase
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatalf("%s/case.json: %v", dir, err)
	}
	return c
}

// missing is a tool path that does not exist.
const missing = "/nonexistent/tool"

// quick is a short budget for tests that must not wait.
const quick = 5 * time.Second
