package media_test

import (
	"encoding/binary"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"

	diskfs "github.com/diskfs/go-diskfs"
	"github.com/diskfs/go-diskfs/disk"
	"github.com/diskfs/go-diskfs/filesystem"
	"github.com/diskfs/go-diskfs/filesystem/iso9660"

	"github.com/cloudroot/cloudroot/pkg/media"
	"github.com/cloudroot/cloudroot/pkg/seed"
)

// TestPeakPerShape measures, for each input shape at its bound, the peak
// heap and the time of opening the volume and reading the seed files as
// NoCloud does. It only reports (docs/security.md quotes it):
//
//	CLOUDROOT_MEDIA_PEAK=1 go test -run TestPeakPerShape -v ./pkg/media/
func TestPeakPerShape(t *testing.T) {
	if os.Getenv("CLOUDROOT_MEDIA_PEAK") != "1" {
		t.Skip("CLOUDROOT_MEDIA_PEAK=1 measures")
	}
	shapes := []struct {
		name string
		make func(t *testing.T) string
	}{
		{"iso seed (cloudroot seed make)", func(t *testing.T) string { return writeSeed(t, seed.FormatISO) }},
		{"vfat seed (cloudroot seed make, FAT32 34 MiB)", func(t *testing.T) string { return writeSeed(t, seed.FormatVFAT) }},
		{"vfat root directory of 1 MiB (32 K entries)", bigFATDir},
		{"vfat 8 GiB, 2 Mi clusters (the cluster bound)", bigFAT},
		{"iso root directory near 1 MiB", bigISODir},
		{"vfat root chained to itself (refused)", func(t *testing.T) string {
			p := writeSeed(t, seed.FormatVFAT)
			g := readFAT32(t, p)
			setFAT(t, p, g.root, g.root)
			return p
		}},
	}
	for _, s := range shapes {
		p := s.make(t)
		peak, d, err := measure(func() error { return readAll(p) })
		t.Logf("| %s | %.1f MiB | %v | %v |", s.name, float64(peak)/(1<<20), d.Round(time.Millisecond), err)
	}
}

// measure runs fn and samples the live heap every 100 µs; peak is the
// highest live heap over the one before.
func measure(fn func() error) (peak uint64, d time.Duration, err error) {
	runtime.GC()
	sample := func() uint64 {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	base := sample()
	var hi atomic.Uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			if v := sample(); v > hi.Load() {
				hi.Store(v)
			}
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Microsecond):
			}
		}
	}()
	start := time.Now()
	err = fn()
	d = time.Since(start)
	close(stop)
	<-done
	if h := hi.Load(); h > base {
		peak = h - base
	}
	return peak, d, err
}

// bigFATDir: the FAT32 seed's root directory grown to just under 1 MiB
// (2047 clusters of 512 bytes) of file entries.
func bigFATDir(t *testing.T) string {
	p := writeSeed(t, seed.FormatVFAT)
	g := readFAT32(t, p)
	const first, n = 20000, 2046 // plus the root's own cluster
	setFAT(t, p, g.root, first)
	for c := uint32(first); c < first+n-1; c++ {
		setFAT(t, p, c, c+1)
	}
	setFAT(t, p, first+n-1, 0x0FFFFFFF)
	dataStart := (g.reserved + g.fats*g.fatSectors) * g.sector
	ent := make([]byte, 0, n*int(g.cluster))
	for i := range int(g.cluster) / 32 * n {
		e := make([]byte, 32)
		copy(e, fmt.Sprintf("F%07dTXT", i))
		e[11] = 0x20
		ent = append(ent, e...)
	}
	patch(t, p, dataStart+int64(first-2)*g.cluster, ent...)
	return p
}

// bigFAT: an 8 GiB sparse FAT32 volume (4 KiB clusters, just under 2 Mi)
// holding the seed files.
func bigFAT(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "big.img")
	d, err := diskfs.Create(p, 8<<30-(1<<20), diskfs.SectorSizeDefault)
	if err != nil {
		t.Fatal(err)
	}
	fsys, err := d.CreateFilesystem(disk.FilesystemSpec{Partition: 0, FSType: filesystem.TypeFat32, VolumeLabel: "CIDATA"})
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"/meta-data": seedFiles.MetaData, "/user-data": seedFiles.UserData} {
		f, err := fsys.OpenFile(name, os.O_CREATE|os.O_RDWR)
		if err != nil {
			t.Fatal(err)
		}
		f.Write(data)
		f.Close()
	}
	d.Close()
	b := make([]byte, 512)
	f, _ := os.Open(p)
	f.ReadAt(b, 0)
	f.Close()
	t.Logf("big FAT: %d sectors a cluster, FAT of %d sectors", b[13], binary.LittleEndian.Uint32(b[36:]))
	return p
}

// bigISODir: an ISO9660 (Rock Ridge, Joliet) seed whose root holds
// enough files for a directory near the 1 MiB bound.
func bigISODir(t *testing.T) string {
	work := t.TempDir()
	for name, data := range map[string][]byte{"meta-data": seedFiles.MetaData, "user-data": seedFiles.UserData} {
		if err := os.WriteFile(filepath.Join(work, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 7000 {
		if err := os.WriteFile(filepath.Join(work, fmt.Sprintf("f%07d", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := filepath.Join(t.TempDir(), "big.iso")
	d, err := diskfs.Create(p, 64<<20, diskfs.SectorSizeDefault)
	if err != nil {
		t.Fatal(err)
	}
	d.LogicalBlocksize = 2048
	fsys, err := d.CreateFilesystem(disk.FilesystemSpec{Partition: 0, FSType: filesystem.TypeISO9660, VolumeLabel: "cidata", WorkDir: work})
	if err != nil {
		t.Fatal(err)
	}
	if err := fsys.(*iso9660.FileSystem).Finalize(iso9660.FinalizeOptions{RockRidge: true, Joliet: true, VolumeIdentifier: "cidata"}); err != nil {
		t.Fatal(err)
	}
	d.Close()
	rd, closeFS, err := media.Open(p, media.Limits{})
	if err == nil {
		ents, _ := fs.ReadDir(rd, ".")
		closeFS()
		t.Logf("big ISO: %d root entries", len(ents))
	}
	return p
}
