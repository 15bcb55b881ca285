package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// initTraceChild makes the test binary exit as soon as package
// initialisation is over: the parent test re-runs it with
// GODEBUG=inittrace=1 to read what every package linked into the agent
// (the same imports as main) allocates before main.
const initTraceChild = "CLOUDROOT_INITTRACE_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(initTraceChild) == "1" {
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// Bounds on what package initialisation may allocate. They guard the
// start-up cost (`cloudroot --version` should answer in a few ms) by
// behaviour, not by time: a package-level regexp.MustCompile, template
// parse or schema compile shows up as tens to thousands of KiB here. Before
// the lazy regexps and the lazy jsonschema meta-schemas, jsonschema/v6
// allocated 1.7 MB, pkg/yaml11 216 KiB and pkg/modules 109 KiB at init;
// before the lazy map literals, pkg/distro 30 KiB and ours 58 KiB in all.
// A package-level map literal is built at init: wrap it in sync.OnceValue.
const (
	maxInitBytesPerPackage = 4 << 10
	maxInitBytesOurs       = 24 << 10
)

// initBytesExceptions are packages allowed more than maxInitBytesPerPackage
// for now, with their own bound. pkg/modules' tables (doc_tested.go,
// runner.go) are left to the typed-config refactoring of that package.
var initBytesExceptions = map[string]int{
	"github.com/cloudroot/cloudroot/pkg/modules": 16 << 10,
	"github.com/santhosh-tekuri/jsonschema/v6":   16 << 10,
}

// watched are the module paths whose init allocations are bounded: ours,
// and the dependencies whose init once compiled things.
var watched = []string{
	"github.com/cloudroot/cloudroot/",
	"github.com/santhosh-tekuri/jsonschema/",
}

// initTrace runs the test binary's package initialisation alone under
// GODEBUG=inittrace=1 and returns the trace.
func initTrace(t *testing.T) []byte {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), initTraceChild+"=1", "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("running the init trace: %v\n%s", err, stderr.String())
	}
	return stderr.Bytes()
}

// notAtStartup are packages whose init must not run in the agent, with
// why: each was linked once through an import that did not need it. Every
// linked package's init runs before main in every process, `--version`
// included, so a package linked for one rarely used path costs them all.
var notAtStartup = map[string]string{
	// pkg/seed wrote its images through go-diskfs's diskfs and disk
	// packages, which import every filesystem go-diskfs has; it needs
	// only iso9660 and fat32 (pkg/media reads iso9660 and fat12).
	"github.com/diskfs/go-diskfs":                     "the diskfs package imports every go-diskfs filesystem: use the filesystem packages directly",
	"github.com/diskfs/go-diskfs/filesystem/ext4":     "ext4 (via go-diskfs/disk)",
	"github.com/diskfs/go-diskfs/filesystem/ext4/crc": "ext4's CRC32C tables (via go-diskfs/disk)",
	"github.com/diskfs/go-diskfs/partition/gpt":       "gpt (via go-diskfs/disk)",
	"github.com/ulikunitz/xz":                         "xz's CRC64 tables (squashfs via go-diskfs/disk)",
	"github.com/klauspost/compress/zstd":              "zstd (squashfs via go-diskfs/disk)",
	"github.com/klauspost/compress/internal/cpuinfo":  "zstd's CPU probe (squashfs via go-diskfs/disk)",
}

// TestNotInitialisedAtStartup fails when a package of notAtStartup is
// linked into the agent again (its init shows in the trace).
func TestNotInitialisedAtStartup(t *testing.T) {
	sc := bufio.NewScanner(bytes.NewReader(initTrace(t)))
	n := 0
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 || f[0] != "init" {
			continue
		}
		n++
		if why, ok := notAtStartup[f[1]]; ok {
			t.Errorf("package %s is initialised at the agent's start-up: %s", f[1], why)
		}
	}
	if n == 0 {
		t.Fatal("no init trace lines")
	}
}

func TestInitAllocations(t *testing.T) {
	stderr := bytes.NewBuffer(initTrace(t))
	total, seen := 0, 0
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		// init github.com/x/y @1.2 ms, 0.1 ms clock, 1560 bytes, 20 allocs
		f := strings.Fields(sc.Text())
		if len(f) < 10 || f[0] != "init" || f[8] != "bytes," {
			continue
		}
		pkg := f[1]
		if !hasAnyPrefix(pkg, watched) {
			continue
		}
		n, err := strconv.Atoi(f[7])
		if err != nil {
			t.Fatalf("parsing %q: %v", sc.Text(), err)
		}
		seen++
		bound := maxInitBytesPerPackage
		if b, ok := initBytesExceptions[pkg]; ok {
			bound = b
		}
		if n > bound {
			t.Errorf("package %s allocates %d bytes at init (bound %d): make its package-level regexps, maps, templates or schemas lazy (sync.OnceValue)", pkg, n, bound)
		}
		if strings.HasPrefix(pkg, watched[0]) {
			total += n
		}
	}
	if seen == 0 {
		t.Fatalf("no init trace lines for our packages in:\n%s", stderr.String())
	}
	if total > maxInitBytesOurs {
		t.Errorf("our packages allocate %d bytes at init in all (bound %d)", total, maxInitBytesOurs)
	}
	t.Logf("%d watched packages, ours allocate %d bytes at init", seen, total)
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
