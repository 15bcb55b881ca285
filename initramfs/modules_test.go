package initramfs

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const fakeTree = "testdata/kmod"

// summary renders a closure compactly: name[flags] with R requested,
// D on demand, S softdep, B builtin.
func summary(mods []Module) []string {
	var out []string
	for _, m := range mods {
		flags := ""
		for _, f := range []struct {
			set bool
			c   string
		}{{m.Requested, "R"}, {m.OnDemand, "D"}, {m.Soft, "S"}, {m.Builtin, "B"}} {
			if f.set {
				flags += f.c
			}
		}
		if flags != "" {
			flags = "[" + flags + "]"
		}
		out = append(out, m.Name+flags)
	}
	return out
}

func mustRequests(t *testing.T, names ...string) []Request {
	t.Helper()
	var reqs []Request
	for _, n := range names {
		r, err := ParseRequest(n)
		if err != nil {
			t.Fatalf("ParseRequest(%q): %v", n, err)
		}
		reqs = append(reqs, r)
	}
	return reqs
}

func TestResolveOrder(t *testing.T) {
	tree, err := LoadTree(fakeTree)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		req       []string
		want      []string
		wantLoad  []string
		wantNotes []string
	}{
		{
			name: "ext4 softdep crc32c before dependencies",
			req:  []string{"ext4"},
			want: []string{
				"crc32c_intel[S]", "crc32c_generic[S]", "jbd2", "mbcache", "crc16", "ext4[R]",
			},
			wantLoad: []string{"crc32c_intel", "crc32c_generic", "ext4"},
		},
		{
			name: "names normalized, shared dependencies once",
			req:  []string{"virtio-rng", "virtio_pci", "virtio_blk"},
			want: []string{
				"virtio_ring", "virtio", "virtio_rng[R]",
				"virtio_pci_modern_dev", "virtio_pci_legacy_dev", "virtio_pci[R]",
				"virtio_blk[R]",
			},
			wantLoad:  []string{"virtio_rng", "virtio_pci", "virtio_blk"},
			wantNotes: []string{"virtio_blk: softdep pre: no-such-alias not in the tree, skipped"},
		},
		{
			name:     "explicit request of a softdep keeps the request order",
			req:      []string{"crc32c_generic", "?crc32c-intel", "ext4"},
			want:     []string{"crc32c_generic[RS]", "crc32c_intel[RS]", "jbd2", "mbcache", "crc16", "ext4[R]"},
			wantLoad: []string{"crc32c_generic", "crc32c_intel", "ext4"},
		},
		{
			name:      "optional missing and builtin",
			req:       []string{"?nvme", "af_packet", "nls_cp437"},
			want:      []string{"af_packet[RB]", "nls_cp437[R]"},
			wantLoad:  []string{"nls_cp437"},
			wantNotes: []string{"optional module nvme not in the tree, skipped", "af_packet is built into the kernel"},
		},
		{
			name:      "alias request, softdep without pre/post ignored",
			req:       []string{"fs-vfat"},
			want:      []string{"fat", "vfat[R]"},
			wantLoad:  []string{"vfat"},
			wantNotes: []string{"fs-vfat is an alias for vfat"},
		},
		{
			name:     "post softdep after the module",
			req:      []string{"ipmi_msghandler"},
			want:     []string{"ipmi_msghandler[R]", "ipmi_devintf[S]"},
			wantLoad: []string{"ipmi_msghandler", "ipmi_devintf"},
		},
		{
			name:     "softdep cycle terminates",
			req:      []string{"loop_a"},
			want:     []string{"loop_b[S]", "loop_a[R]"},
			wantLoad: []string{"loop_b", "loop_a"},
		},
		{
			name:     "on demand ships the module, loads only its softdeps",
			req:      []string{"?~xfs"},
			want:     []string{"crc32c_intel[S]", "crc32c_generic[S]", "libcrc32c", "xfs[RD]"},
			wantLoad: []string{"crc32c_intel", "crc32c_generic"},
		},
		{
			name:     "eager request wins over on demand",
			req:      []string{"~xfs", "xfs"},
			want:     []string{"crc32c_intel[S]", "crc32c_generic[S]", "libcrc32c", "xfs[R]"},
			wantLoad: []string{"crc32c_intel", "crc32c_generic", "xfs"},
		},
		{
			name:     "mixed dash and underscore",
			req:      []string{"nls_iso8859-1"},
			want:     []string{"nls_iso8859_1[R]"},
			wantLoad: []string{"nls_iso8859_1"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := tree.Resolve(mustRequests(t, tc.req...))
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			if d := cmp.Diff(tc.want, summary(res.Modules)); d != "" {
				t.Errorf("closure (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.wantLoad, res.LoadOrder()); d != "" {
				t.Errorf("load order (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.wantNotes, res.Notes); d != "" {
				t.Errorf("notes (-want +got):\n%s", d)
			}
		})
	}
}

func TestResolveModuleFields(t *testing.T) {
	mods, err := Resolve(fakeTree, []string{"ext4", "nls_iso8859-1"})
	if err != nil {
		t.Fatal(err)
	}
	want := []Module{
		{Name: "crc32c_intel", Path: "kernel/arch/x86/crypto/crc32c-intel.ko", Soft: true},
		{Name: "crc32c_generic", Path: "kernel/crypto/crc32c_generic.ko", Soft: true},
		{Name: "jbd2", Path: "kernel/fs/jbd2/jbd2.ko", Pre: []string{"crc32c_intel", "crc32c_generic"}},
		{Name: "mbcache", Path: "kernel/fs/mbcache.ko"},
		{Name: "crc16", Path: "kernel/lib/crc16.ko"},
		{
			Name: "ext4", Path: "kernel/fs/ext4/ext4.ko", Requested: true,
			Deps: []string{"kernel/lib/crc16.ko", "kernel/fs/mbcache.ko", "kernel/fs/jbd2/jbd2.ko"},
			Pre:  []string{"crc32c_intel", "crc32c_generic"},
		},
		{Name: "nls_iso8859_1", Path: "kernel/fs/nls/nls_iso8859-1.ko", Requested: true},
	}
	if d := cmp.Diff(want, mods); d != "" {
		t.Errorf("Resolve (-want +got):\n%s", d)
	}
	if got, want := mods[6].ImagePath(), "kernel/fs/nls/nls_iso8859_1.ko"; got != want {
		t.Errorf("ImagePath = %q, want %q", got, want)
	}
	if got, want := mods[0].ImagePath(), "kernel/arch/x86/crypto/crc32c-intel.ko"; got != want {
		t.Errorf("ImagePath = %q, want %q (unmixed names keep their path)", got, want)
	}
}

func TestResolveMissing(t *testing.T) {
	_, err := Resolve(fakeTree, []string{"ext4", "nvme", "?btrfs", "e1000"})
	var me *MissingError
	if !errors.As(err, &me) {
		t.Fatalf("Resolve error = %v, want *MissingError", err)
	}
	if d := cmp.Diff([]string{"nvme", "e1000"}, me.Names); d != "" {
		t.Errorf("missing (-want +got):\n%s", d)
	}
	if !strings.Contains(err.Error(), "nvme, e1000") {
		t.Errorf("error %q does not name the missing modules", err)
	}
}

func TestResolveNoDepmod(t *testing.T) {
	_, err := Resolve(t.TempDir(), []string{"ext4"})
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "depmod") {
		t.Errorf("Resolve on an empty dir = %v, want a not-exist error mentioning depmod", err)
	}
}

// A tree whose depmod recorded no softdeps still gets crc32c before ext4.
func TestExtraSoftdeps(t *testing.T) {
	dir := t.TempDir()
	dep, err := os.ReadFile(filepath.Join(fakeTree, "modules.dep"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "modules.dep"), dep, 0o644); err != nil {
		t.Fatal(err)
	}
	mods, err := Resolve(dir, []string{"ext4"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"crc32c_generic[S]", "jbd2", "mbcache", "crc16", "ext4[R]"}
	if d := cmp.Diff(want, summary(mods)); d != "" {
		t.Errorf("closure (-want +got):\n%s", d)
	}
}

func TestParseDriverList(t *testing.T) {
	in := `# comment
virtio_pci   # trailing comment

?crc32c-intel
~?btrfs
ext4
virtio-pci
`
	got, err := ParseDriverList(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []Request{
		{Name: "virtio_pci"},
		{Name: "crc32c-intel", Optional: true},
		{Name: "btrfs", Optional: true, OnDemand: true},
		{Name: "ext4"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("ParseDriverList (-want +got):\n%s", d)
	}
	if got, want := want[2].String(), "?~btrfs"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}

	_, err = ParseDriverList(strings.NewReader("ext4\nvfat isofs\n?\nfoo$bar\n"))
	for _, frag := range []string{"line 2: one module per line", "line 3: empty module name", "line 4: invalid character"} {
		if err == nil || !strings.Contains(err.Error(), frag) {
			t.Errorf("error %v does not contain %q", err, frag)
		}
	}
}

func TestParsePathRequest(t *testing.T) {
	for in, want := range map[string]Request{
		"kernel/drivers/net/ethernet/intel/": {Name: "kernel/drivers/net/ethernet/intel", Optional: true, OnDemand: true},
		"kernel/drivers/scsi/mpt*/*.ko":      {Name: "kernel/drivers/scsi/mpt*/*.ko", Optional: true, OnDemand: true},
	} {
		got, err := ParseRequest(in)
		if err != nil || got != want {
			t.Errorf("ParseRequest(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"/abs/path", "kernel/../x", "kernel/[x"} {
		if _, err := ParseRequest(in); err == nil {
			t.Errorf("ParseRequest(%q): no error", in)
		}
	}
}

func TestReadDriverListInclude(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("floor.txt", "virtio_pci\next4\n")
	write("a.txt", "include floor\n~ena\nkernel/drivers/net/\n")
	write("b.txt", "include floor.txt\nvirtio_pci\n~megaraid_sas\n")
	write("all.txt", "include a\ninclude b\n\nbad$name\n")
	got, err := ReadDriverList(filepath.Join(dir, "all.txt"))
	if err == nil || !strings.Contains(err.Error(), "line 4: invalid character") {
		t.Errorf("error = %v, want one for line 4", err)
	}
	want := []Request{
		{Name: "virtio_pci"}, {Name: "ext4"},
		{Name: "ena", OnDemand: true},
		{Name: "kernel/drivers/net", Optional: true, OnDemand: true},
		{Name: "megaraid_sas", OnDemand: true},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("ReadDriverList (-want +got):\n%s", d)
	}
	write("loop.txt", "include loop\n")
	if _, err := ReadDriverList(filepath.Join(dir, "loop.txt")); err == nil || !strings.Contains(err.Error(), "cycle") {
		t.Errorf("include cycle: error = %v", err)
	}
}

// The shipped driver list parses and resolves against the fake tree's
// vocabulary well enough to catch typos in its syntax.
func TestDriverListFile(t *testing.T) {
	reqs, err := ReadDriverList("drivers.txt")
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, r := range reqs {
		names[Normalize(r.Name)] = true
	}
	for _, n := range []string{"virtio_pci", "virtio_blk", "virtio_scsi", "virtio_net", "virtio_rng", "crc32c_generic", "ext4", "vfat", "isofs", "nls_cp437", "nls_ascii", "sr_mod", "ahci"} {
		if !names[n] {
			t.Errorf("drivers.txt lacks %s", n)
		}
	}
	pos := map[string]int{}
	for i, r := range reqs {
		pos[Normalize(r.Name)] = i
	}
	if pos["crc32c_generic"] > pos["ext4"] {
		t.Errorf("drivers.txt lists crc32c_generic after ext4")
	}
}

func TestStage(t *testing.T) {
	mods, err := Resolve(fakeTree, []string{"virtio_blk", "ext4", "?nls_iso8859-1", "af_packet", "?~xfs"})
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	const ver = "6.1.0-test"
	if err := Stage(fakeTree, root, mods, ver); err != nil {
		t.Fatal(err)
	}
	kdir := filepath.Join(root, "lib/modules", ver)

	wantDep := `kernel/arch/x86/crypto/crc32c-intel.ko:
kernel/crypto/crc32c_generic.ko:
kernel/drivers/virtio/virtio.ko:
kernel/drivers/virtio/virtio_ring.ko:
kernel/drivers/block/virtio_blk.ko: kernel/drivers/virtio/virtio.ko kernel/drivers/virtio/virtio_ring.ko
kernel/lib/crc16.ko:
kernel/fs/mbcache.ko:
kernel/fs/jbd2/jbd2.ko:
kernel/fs/ext4/ext4.ko: kernel/lib/crc16.ko kernel/fs/mbcache.ko kernel/fs/jbd2/jbd2.ko
kernel/lib/libcrc32c.ko:
kernel/fs/xfs/xfs.ko: kernel/lib/libcrc32c.ko
kernel/fs/nls/nls_iso8859_1.ko:
`
	wantSoftdep := `# Soft dependencies resolved by cloudroot-mkinitramfs.
softdep jbd2 pre: crc32c_intel crc32c_generic
softdep ext4 pre: crc32c_intel crc32c_generic
softdep libcrc32c pre: crc32c_intel crc32c_generic
`
	wantLoad := "virtio_blk\ncrc32c_intel\ncrc32c_generic\next4\nnls_iso8859_1\n"
	// modules.order is the dep file's first column.
	var wantOrder strings.Builder
	for _, l := range strings.Split(strings.TrimSpace(wantDep), "\n") {
		p, _, _ := strings.Cut(l, ":")
		wantOrder.WriteString(p + "\n")
	}
	for _, f := range []struct{ path, want string }{
		{filepath.Join(kdir, "modules.dep"), wantDep},
		{filepath.Join(kdir, "modules.order"), wantOrder.String()},
		{filepath.Join(kdir, "modules.softdep"), wantSoftdep},
		{filepath.Join(root, ModulesLoadPath), wantLoad},
		{filepath.Join(kdir, "modules.builtin"), "kernel/net/packet/af_packet.ko\nkernel/net/unix/unix.ko\n"},
		{filepath.Join(kdir, "kernel/fs/nls/nls_iso8859_1.ko"), "fake kernel module nls_iso8859-1\n"},
		{filepath.Join(kdir, "kernel/arch/x86/crypto/crc32c-intel.ko"), "fake kernel module crc32c-intel\n"},
	} {
		got, err := os.ReadFile(f.path)
		if err != nil {
			t.Errorf("reading staged file: %v", err)
			continue
		}
		if d := cmp.Diff(f.want, string(got)); d != "" {
			t.Errorf("%s (-want +got):\n%s", f.path, d)
		}
	}
	if _, err := os.Stat(filepath.Join(kdir, "modules.builtin.modinfo")); err != nil {
		t.Errorf("modules.builtin.modinfo not staged: %v", err)
	}
	if _, err := os.Stat(filepath.Join(kdir, "kernel/fs/fat/vfat.ko")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("unrequested vfat.ko staged (stat err %v)", err)
	}

	// Round trip: the staged tree resolves to the same modules and order,
	// without modules.alias.
	again, err := Resolve(kdir, []string{"virtio_blk", "ext4", "?nls_iso8859-1", "af_packet", "?~xfs"})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(summary(mods), summary(again)); d != "" {
		t.Errorf("staged tree resolves differently (-orig +staged):\n%s", d)
	}
}

func TestStageRejectsBadInput(t *testing.T) {
	if err := Stage(fakeTree, t.TempDir(), nil, "../x"); err == nil {
		t.Error("Stage accepted version ../x")
	}
	bad := []Module{{Name: "evil", Path: "../../etc/passwd"}}
	if err := Stage(fakeTree, t.TempDir(), bad, "v"); err == nil {
		t.Error("Stage accepted a path outside the tree")
	}
	incomplete := []Module{{Name: "ext4", Path: "kernel/fs/ext4/ext4.ko", Deps: []string{"kernel/lib/crc16.ko"}}}
	if err := Stage(fakeTree, t.TempDir(), incomplete, "v"); err == nil || !strings.Contains(err.Error(), "crc16") {
		t.Errorf("Stage with a missing dependency = %v, want an error naming it", err)
	}
}

func FuzzParseDriverList(f *testing.F) {
	if b, err := os.ReadFile("drivers.txt"); err == nil {
		f.Add(string(b))
	}
	f.Add("?~x\n# c\n\ny z\n")
	f.Fuzz(func(t *testing.T, s string) {
		reqs, err := ParseDriverList(strings.NewReader(s))
		if err != nil {
			return
		}
		for _, r := range reqs {
			back, err := ParseRequest(r.String())
			if err != nil || back != r {
				t.Errorf("ParseRequest(%q) = %+v, %v; want %+v", r.String(), back, err, r)
			}
		}
	})
}

func FuzzTree(f *testing.F) {
	read := func(name string) string {
		b, _ := os.ReadFile(filepath.Join(fakeTree, name))
		return string(b)
	}
	f.Add(read("modules.dep"), read("modules.softdep"), read("modules.alias"), "ext4")
	f.Add("a.ko: b.ko\nb.ko: a.ko\n", "softdep a pre: b post: a\n", "alias x* a\n", "xy")
	f.Fuzz(func(t *testing.T, dep, softdep, alias, name string) {
		tree := &Tree{
			paths: map[string]string{}, deps: map[string][]string{}, builtin: map[string]bool{},
			pre: map[string][]string{}, post: map[string][]string{},
		}
		if tree.parseDep(strings.NewReader(dep)) != nil ||
			tree.parseSoftdep(strings.NewReader(softdep)) != nil ||
			tree.parseAlias(strings.NewReader(alias)) != nil {
			return
		}
		res, _ := tree.Resolve([]Request{{Name: name, Optional: true}})
		seen := map[string]bool{}
		for _, m := range res.Modules {
			if seen[m.Name] {
				t.Fatalf("module %s twice in %v", m.Name, summary(res.Modules))
			}
			seen[m.Name] = true
		}
	})
}

func TestResolvePathRequest(t *testing.T) {
	tree, err := LoadTree(fakeTree)
	if err != nil {
		t.Fatal(err)
	}
	reqs := []Request{{Name: "virtio_blk"}}
	for _, s := range []string{"kernel/drivers/virtio", "kernel/fs/n*", "kernel/nothing/here"} {
		r, err := ParseRequest(s)
		if err != nil {
			t.Fatal(err)
		}
		reqs = append(reqs, r)
	}
	res, err := tree.Resolve(reqs)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range res.Modules {
		names = append(names, m.Name)
	}
	slices.Sort(names)
	want := []string{"nls_cp437", "nls_iso8859_1", "virtio", "virtio_blk", "virtio_pci", "virtio_pci_legacy_dev", "virtio_pci_modern_dev", "virtio_ring"}
	if d := cmp.Diff(want, names); d != "" {
		t.Errorf("modules (-want +got):\n%s", d)
	}
	// Path entries are shipped for coldplug, never in modules.load.
	if d := cmp.Diff([]string{"virtio_blk"}, res.LoadOrder()); d != "" {
		t.Errorf("load order (-want +got):\n%s", d)
	}
	if !slices.Contains(res.Notes, "no module under kernel/nothing/here, skipped") {
		t.Errorf("notes = %q", res.Notes)
	}
}
