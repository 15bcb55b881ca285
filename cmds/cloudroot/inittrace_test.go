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

func TestInitAllocations(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), initTraceChild+"=1", "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("running the init trace: %v\n%s", err, stderr.String())
	}
	total, seen := 0, 0
	sc := bufio.NewScanner(&stderr)
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
