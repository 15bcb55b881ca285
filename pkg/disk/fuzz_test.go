package disk

import (
	"bytes"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
)

// fuzzDisk turns fuzz input into a disk: the first bytes are the image's
// start, a trailing byte picks how far the disk grew.
func fuzzDisk(data []byte) *memDev {
	size := int64(128 << 10)
	if len(data) > 0 {
		size += int64(data[len(data)-1]%4) * (32 << 10)
	}
	b := make([]byte, size)
	copy(b, data)
	return &memDev{b: b}
}

func seedImages(f *testing.F) {
	for _, tab := range []NewTable{
		{Type: "gpt", Partitions: []NewPartition{{Start: 34, Size: 100}}},
		{Type: "gpt", Partitions: []NewPartition{{Start: 40, Size: 60}, {Start: 120, Size: 30}}},
		{Type: "mbr", Partitions: []NewPartition{{Start: 63, Size: 100}, {Start: 200, Size: 10, Type: "5"}}},
	} {
		m := &memDev{b: make([]byte, 128<<10)}
		if err := WriteTable(m, tab, &seqRand{}); err != nil {
			f.Fatal(err)
		}
		// Keep the seed small: the head of the disk plus, for GPT, the
		// entries; the backup is lost as when a disk grew.
		f.Add(append(bytes.Clone(m.b[:34*512]), 1))
	}
}

// FuzzGrow checks Grow on arbitrary tables: no panics, and when it writes,
// the result reads back (by bootenv) with only the grown partition's end
// changed, and growing again changes nothing.
func FuzzGrow(f *testing.F) {
	seedImages(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		m := fuzzDisk(data)
		before, _ := bootenv.ProbeTable(m, m.Size(), 512)
		for part := 1; part <= 2; part++ {
			dry, derr := Grow(m, part, GrowOptions{DryRun: true, Fudge: -1})
			snapshot := bytes.Clone(m.b)
			r, err := Grow(m, part, GrowOptions{Fudge: -1})
			if (err == nil) != (derr == nil) || dry != r {
				t.Fatalf("dry run %+v %v differs from the run %+v %v", dry, derr, r, err)
			}
			if err != nil || !r.Changed {
				if !bytes.Equal(snapshot, m.b) {
					t.Fatalf("partition %d: wrote without a change (%+v, %v)", part, r, err)
				}
				continue
			}
			if r.NewEnd <= r.OldEnd || r.NewEnd >= m.Size()/512 {
				t.Fatalf("bad new end: %+v", r)
			}
			after, perr := bootenv.ProbeTable(m, m.Size(), 512)
			if perr != nil {
				t.Fatalf("table unreadable after growing: %v (%+v)", perr, r)
			}
			p, ok := after.Partition(part)
			if !ok || p.FirstLBA != r.OldStart || p.LastLBA != r.NewEnd {
				t.Fatalf("partition %d reads back as %+v, want %+v", part, p, r)
			}
			if r.Table == "gpt" {
				g, err := readGPTAt(m, 512, m.Size()/512-1, m.Size()/512)
				if err != nil || !gptCRCOK(g.header, g.hsize) {
					t.Fatalf("backup GPT after grow: %v", err)
				}
			}
			for _, q := range before.Partitions {
				if q.Number == part {
					continue
				}
				if q2, ok := after.Partition(q.Number); r.Table == before.Type && (!ok || q2.FirstLBA != q.FirstLBA || q2.LastLBA != q.LastLBA) {
					t.Fatalf("partition %d changed from %+v to %+v", q.Number, q, q2)
				}
			}
			again, err := Grow(m, part, GrowOptions{Fudge: -1})
			if err != nil || again.Changed {
				t.Fatalf("second grow: %+v %v", again, err)
			}
			before = after
		}
	})
}
