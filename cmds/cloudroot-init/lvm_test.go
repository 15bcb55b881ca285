package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
)

func TestParseLVMArgs(t *testing.T) {
	const cfg = "CFG"
	vg := func(vgs ...string) []string {
		return append([]string{"vgchange", "-ay", "--sysinit", "--config", cfg}, vgs...)
	}
	lv := func(lvs ...string) []string {
		return append([]string{"lvchange", "-ay", "-K", "--sysinit", "--config", cfg}, lvs...)
	}
	for _, tc := range []struct {
		cmdline string
		want    lvmRequest
		cmds    [][]string
		desc    string
	}{
		{"root=/dev/mapper/vg0-root", lvmRequest{}, [][]string{vg()}, "all volume groups"},
		{"rd.lvm.vg=vg0", lvmRequest{VGs: []string{"vg0"}}, [][]string{vg("vg0")}, "volume groups vg0"},
		{"rd.lvm.vg=vg0 rd.lvm.vg=vg1,vg2 rd.lvm.vg=vg0", lvmRequest{VGs: []string{"vg0", "vg1", "vg2"}},
			[][]string{vg("vg0", "vg1", "vg2")}, "volume groups vg0,vg1,vg2"},
		{"rd.lvm.lv=vg0/root", lvmRequest{LVs: []string{"vg0/root"}}, [][]string{lv("vg0/root")}, "logical volumes vg0/root"},
		{"rd.lvm.lv=vg0/root rd.lvm.lv=/dev/vg1/swap", lvmRequest{LVs: []string{"vg0/root", "vg1/swap"}},
			[][]string{lv("vg0/root", "vg1/swap")}, "logical volumes vg0/root,vg1/swap"},
		// Both: the listed LVs, and the listed VGs whole (dracut's order).
		{"rd.lvm.lv=vg0/root rd.lvm.vg=data", lvmRequest{VGs: []string{"data"}, LVs: []string{"vg0/root"}},
			[][]string{lv("vg0/root"), vg("data")}, "volume groups data and logical volumes vg0/root"},
		// dracut's old spellings.
		{"rd_LVM_VG=vg0 rd_LVM_LV=vg0/root", lvmRequest{VGs: []string{"vg0"}, LVs: []string{"vg0/root"}},
			[][]string{lv("vg0/root"), vg("vg0")}, "volume groups vg0 and logical volumes vg0/root"},
		// Not VG/LV: reported, left out; with none left all VGs are activated.
		{"rd.lvm.lv=root rd.lvm.lv=vg0/ rd.lvm.lv=a/b/c", lvmRequest{Bad: []string{"root", "vg0/", "a/b/c"}},
			[][]string{vg()}, "all volume groups"},
		{"rd.lvm=0 rd.lvm.lv=vg0/root", lvmRequest{Off: true, LVs: []string{"vg0/root"}}, nil, "rd.lvm=0: not activated"},
		{"rd.lvm=0 rd.lvm=1", lvmRequest{}, [][]string{vg()}, "all volume groups"},
	} {
		t.Run(tc.cmdline, func(t *testing.T) {
			got := parseLVMArgs(bootenv.ParseCmdline(tc.cmdline).All)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("parse = %+v, want %+v", got, tc.want)
			}
			if cmds := got.commands(cfg); !reflect.DeepEqual(cmds, tc.cmds) {
				t.Errorf("commands = %q, want %q", cmds, tc.cmds)
			}
			if d := got.String(); d != tc.desc {
				t.Errorf("String = %q, want %q", d, tc.desc)
			}
		})
	}
	if err := badLVError([]string{"root"}); !strings.Contains(err.Error(), "rd.lvm.lv=root: not of the form VG/LV") {
		t.Errorf("badLVError = %v", err)
	}
}

func TestDMNames(t *testing.T) {
	dir := t.TempDir()
	for n, name := range map[string]string{"dm-1": "vg1-root\n", "dm-0": "vg1-data\n"} {
		writeFile(t, dir+"/"+n+"/dm/name", name)
	}
	writeFile(t, dir+"/vda/size", "1\n")
	if got, want := dmNames(dir), []string{"vg1-data", "vg1-root"}; !reflect.DeepEqual(got, want) {
		t.Errorf("dmNames = %q, want %q", got, want)
	}
}

func FuzzParseLVMArgs(f *testing.F) {
	for _, s := range []string{"rd.lvm.vg=vg0", "rd.lvm.lv=vg0/root rd.lvm.vg=a,b", "rd.lvm=0", "rd_LVM_LV=/dev/x/y rd.lvm.lv=//"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r := parseLVMArgs(bootenv.ParseCmdline(s).All)
		for _, lv := range r.LVs {
			if vg, name, ok := strings.Cut(lv, "/"); !ok || vg == "" || name == "" || strings.Contains(name, "/") {
				t.Fatalf("accepted LV %q from %q", lv, s)
			}
		}
		for _, c := range r.commands("c") {
			if len(c) < 5 {
				t.Fatalf("short command %q", c)
			}
		}
	})
}

func writeFile(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}
