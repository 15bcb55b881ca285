//go:build !cloudroot_front

package cli

// `cloudroot seed make [--format iso|vfat] [--user-data F] [--meta-data F]
// [--network-config F] [--vendor-data F] [--instance-id ID] [--hostname H]
// OUT`
//
// The contract, after cloud-utils' cloud-localds (no external tools: the
// image is written by pkg/seed with go-diskfs):
//
//   - OUT becomes a NoCloud seed image: ISO9660 (Rock Ridge, Joliet)
//     labelled `cidata` (the default), or FAT32 labelled `CIDATA` with
//     --format vfat. It is replaced only once complete.
//   - The image holds meta-data and user-data (empty without --user-data),
//     plus network-config and vendor-data when given. A file argument of
//     `-` is stdin (for one of them at most).
//   - meta-data is the --meta-data file, else generated: instance-id from
//     --instance-id (default iid-local01) and local-hostname from
//     --hostname; giving both --meta-data and one of those is an error.
//   - exit: 0 written, 1 a file could not be read or the image written, 2
//     bad arguments.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/seed"
)

func seedCommand() Command {
	return Command{
		Name:  "seed",
		Short: "Write a NoCloud seed image, like cloud-localds (seed make [--format iso|vfat] [--user-data F] ... OUT).",
		Run:   runSeed,
	}
}

const seedUsage = "usage: cloudroot seed make [-h] [--format iso|vfat] [--user-data F] [--meta-data F] [--network-config F] [--vendor-data F] [--instance-id ID] [--hostname H] OUT\n"

func runSeed(_ context.Context, env *Env, args []string) int {
	if len(args) == 0 {
		fmt.Fprint(env.Stderr, seedUsage)
		return 2
	}
	switch args[0] {
	case "-h", "--help":
		fmt.Fprint(env.Stdout, seedUsage)
		return 0
	case "make":
	default:
		fmt.Fprintf(env.Stderr, "%serror: invalid choice: %q (choose from 'make')\n", seedUsage, args[0])
		return 2
	}
	var format, userData, metaData, netConfig, vendorData, instanceID, hostname string
	fl := flag.NewFlagSet("seed make", flag.ContinueOnError)
	fl.SetOutput(env.Stderr)
	fl.Usage = func() {
		fmt.Fprint(fl.Output(), seedUsage+"\nWrite a NoCloud seed image (what cloud-localds does) to OUT.\n\noptions:\n")
		fl.PrintDefaults()
	}
	fl.StringVar(&format, "format", "iso", "the filesystem: iso (ISO9660, label cidata) or vfat (FAT32, label CIDATA)")
	fl.StringVar(&userData, "user-data", "", "the user-data `FILE` (- for stdin; default: empty)")
	fl.StringVar(&metaData, "meta-data", "", "the meta-data `FILE` (default: generated from --instance-id and --hostname)")
	fl.StringVar(&netConfig, "network-config", "", "the network-config `FILE` (v1 or v2)")
	fl.StringVar(&vendorData, "vendor-data", "", "the vendor-data `FILE`")
	fl.StringVar(&instanceID, "instance-id", "", "the generated meta-data's instance-id (default "+seed.DefaultInstanceID+")")
	fl.StringVar(&hostname, "hostname", "", "the generated meta-data's local-hostname")
	if err := fl.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fl.SetOutput(env.Stdout)
			fl.Usage()
			return 0
		}
		return 2
	}
	if fl.NArg() != 1 {
		fmt.Fprintf(env.Stderr, "%serror: expected one output file, got %d arguments\n", seedUsage, fl.NArg())
		return 2
	}
	out := fl.Arg(0)
	f, err := seed.ParseFormat(format)
	if err != nil {
		fmt.Fprintf(env.Stderr, "error: --format: %v\n", err)
		return 2
	}
	if metaData != "" && (instanceID != "" || hostname != "") {
		fmt.Fprintln(env.Stderr, "error: --instance-id and --hostname generate meta-data: not with --meta-data")
		return 2
	}
	stdin := 0
	for _, p := range []string{userData, metaData, netConfig, vendorData} {
		if p == "-" {
			stdin++
		}
	}
	if stdin > 1 {
		fmt.Fprintln(env.Stderr, "error: only one file may be - (stdin)")
		return 2
	}
	var files seed.Files
	for _, in := range []struct {
		path string
		dst  *[]byte
	}{{userData, &files.UserData}, {metaData, &files.MetaData}, {netConfig, &files.NetworkConfig}, {vendorData, &files.VendorData}} {
		if in.path == "" {
			continue
		}
		b, err := readSeedInput(in.path)
		if err != nil {
			fmt.Fprintf(env.Stderr, "error: %v\n", err)
			return 1
		}
		*in.dst = b
	}
	if files.MetaData == nil {
		if files.MetaData, err = seed.MetaData(instanceID, hostname); err != nil {
			fmt.Fprintf(env.Stderr, "error: %v\n", err)
			return 2
		}
	}
	if err := seed.Write(out, f, files); err != nil {
		fmt.Fprintf(env.Stderr, "error: %v\n", err)
		return 1
	}
	var names []string
	for _, n := range []struct {
		name string
		b    []byte
	}{{"meta-data", files.MetaData}, {"user-data", files.UserData}, {"network-config", files.NetworkConfig}, {"vendor-data", files.VendorData}} {
		if n.b != nil || n.name == "user-data" {
			names = append(names, n.name)
		}
	}
	label := seed.LabelISO
	if f == seed.FormatVFAT {
		label = seed.LabelVFAT
	}
	fmt.Fprintf(env.Stdout, "wrote %s (%s, label %s): %s\n", out, f, label, strings.Join(names, ", "))
	return 0
}

// seedInput is stdin for `-` (a variable for tests).
var seedInput io.Reader = os.Stdin

func readSeedInput(p string) ([]byte, error) {
	if p == "-" {
		b, err := io.ReadAll(io.LimitReader(seedInput, 64<<20))
		if err != nil {
			return nil, fmt.Errorf("reading stdin: %w", err)
		}
		return b, nil
	}
	return os.ReadFile(p)
}
