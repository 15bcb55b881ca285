package disk

import (
	"bytes"
	"strings"
	"testing"
)

// zeroRand makes GUIDs and signatures deterministic.
type seqRand struct{ n byte }

func (r *seqRand) Read(p []byte) (int, error) {
	for i := range p {
		r.n++
		p[i] = r.n
	}
	return len(p), nil
}

func TestWriteTableGPT(t *testing.T) {
	needTools(t, "sfdisk", "sgdisk")
	p := image(t, 64*mib)
	// A stale MBR table first: the GPT replaces it.
	run(t, "label: dos\nstart=2048, size=4096, type=83\n", "sfdisk", "-q", p)
	d, err := Open(p, true)
	if err != nil {
		t.Fatal(err)
	}
	first, last := GPTUsable(d.Size(), 512)
	if first != 34 || last != 64*mib/512-34 {
		t.Errorf("usable %d-%d", first, last)
	}
	err = WriteTable(d, NewTable{Type: "gpt", DiskID: "3B1D9C52-1E4A-4F0B-9C3E-7A5D2B8E6F10", Partitions: []NewPartition{
		{Start: 2048, Size: 20480, Name: "data", GUID: "0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0"},
		{Start: 22528, Size: 8192, Type: "8200"},
		{Start: 30720, Size: last - 30720 + 1, Type: "C12A7328-F81F-11D2-BA4B-00A0C93EC93B"},
	}}, &seqRand{})
	d.Close()
	if err != nil {
		t.Fatal(err)
	}
	checkGPT(t, p)
	dump := sfdiskDump(t, p)
	for _, w := range []string{
		"label: gpt", "label-id: 3B1D9C52-1E4A-4F0B-9C3E-7A5D2B8E6F10",
		"start=        2048, size=       20480, type=0FC63DAF-8483-4772-8E79-3D69D8477DE4, uuid=0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0, name=\"data\"",
		"start=       22528, size=        8192, type=0657FD6D-A4AB-43C4-84E5-0933C84B4F4F",
		"type=C12A7328-F81F-11D2-BA4B-00A0C93EC93B",
	} {
		if !strings.Contains(dump, w) {
			t.Errorf("sfdisk -d lacks %q:\n%s", w, dump)
		}
	}
}

func TestWriteTableMBR(t *testing.T) {
	needTools(t, "sfdisk")
	p := image(t, 64*mib)
	run(t, "label: gpt\nstart=2048, size=4096\n", "sfdisk", "-q", p)
	d, err := Open(p, true)
	if err != nil {
		t.Fatal(err)
	}
	err = WriteTable(d, NewTable{Type: "mbr", DiskID: "5eed1234", Partitions: []NewPartition{
		{Start: 2048, Size: 20480, Bootable: true},
		{Start: 22528, Size: 8192, Type: "82"},
	}}, nil)
	d.Close()
	if err != nil {
		t.Fatal(err)
	}
	dump := sfdiskDump(t, p)
	for _, w := range []string{"label: dos", "label-id: 0x5eed1234",
		"start=        2048, size=       20480, type=83, bootable", "start=       22528, size=        8192, type=82"} {
		if !strings.Contains(dump, w) {
			t.Errorf("sfdisk -d lacks %q:\n%s", w, dump)
		}
	}
	// The old GPT's headers are gone.
	b := readAll(t, p)
	if bytes.Contains(b[512:1024], []byte(gptSignature)) || bytes.Contains(b[len(b)-512:], []byte(gptSignature)) {
		t.Error("old GPT header survives")
	}
	if tab := probe(t, p); tab.Type != "dos" || len(tab.Partitions) != 2 {
		t.Errorf("bootenv: %+v", tab)
	}
}

func TestWriteTableRefusals(t *testing.T) {
	m := &memDev{b: make([]byte, 8*mib)}
	for name, tab := range map[string]NewTable{
		"overlap":      {Type: "gpt", Partitions: []NewPartition{{Start: 2048, Size: 4096}, {Start: 4096, Size: 100}}},
		"past end":     {Type: "gpt", Partitions: []NewPartition{{Start: 2048, Size: 8 * mib / 512}}},
		"five primary": {Type: "mbr", Partitions: []NewPartition{{Start: 1, Size: 1}, {Start: 2, Size: 1}, {Start: 3, Size: 1}, {Start: 4, Size: 1}, {Start: 5, Size: 1}}},
		"bad type":     {Type: "mbr", Partitions: []NewPartition{{Start: 2048, Size: 1, Type: "zz"}}},
		"bad label":    {Type: "bsd"},
	} {
		if err := WriteTable(m, tab, nil); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if !bytes.Equal(m.b, make([]byte, 8*mib)) {
		t.Error("a refused table wrote to the disk")
	}
}
