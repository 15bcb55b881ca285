package netup

import (
	"encoding/json"
	"github.com/cloudroot/cloudroot/pkg/internal/golden"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Each testdata/klibc/<case>/ holds lease.json (a Lease as JSON) and
// want.conf (what klibc ipconfig would have written). -update rewrites want.conf.
func TestFormatKlibcGolden(t *testing.T) {
	dirs, err := filepath.Glob("testdata/klibc/*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no golden cases: %v", err)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			in, err := os.ReadFile(filepath.Join(dir, "lease.json"))
			if err != nil {
				t.Fatal(err)
			}
			var l Lease
			if err := json.Unmarshal(in, &l); err != nil {
				t.Fatalf("lease.json: %v", err)
			}
			got := FormatKlibc(&l)
			wantPath := filepath.Join(dir, "want.conf")
			if golden.Update() {
				if err := os.WriteFile(wantPath, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(wantPath)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("FormatKlibc (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWriteKlibcState(t *testing.T) {
	dir := t.TempDir()
	l := &Lease{Iface: "eth0", Proto: ProtoDHCP}
	p, err := l.WriteKlibcState(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "net-eth0.conf"); p != want {
		t.Errorf("path %s, want %s", p, want)
	}
	got, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(FormatKlibc(l)), string(got)); diff != "" {
		t.Errorf("file (-want +got):\n%s", diff)
	}
	if _, err := (&Lease{Iface: "../x"}).WriteKlibcState(dir); err == nil {
		t.Error("interface name with a slash accepted")
	}
}
