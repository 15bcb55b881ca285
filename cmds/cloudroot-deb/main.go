// Command cloudroot-deb builds cloudroot's Debian package from the static
// binaries (pkg/debpkg says what goes in):
//
//	cloudroot-deb -front build/cloudroot -agent build/cloudroot-agent -init build/cloudroot-init -mkinitramfs build/cloudroot-mkinitramfs -o build
//
// It prints the .deb's path. Needs dpkg-deb; no root.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/cloudroot/cloudroot/pkg/debpkg"
)

type config struct {
	debpkg.Config
	lists  string
	outDir string
}

func main() {
	var cfg config
	var epoch string
	fl := flag.NewFlagSet("cloudroot-deb", flag.ExitOnError)
	fl.StringVar(&cfg.Front, "front", "build/cloudroot", "the static front binary (/usr/bin/cloudroot)")
	fl.StringVar(&cfg.Agent, "agent", "build/cloudroot-agent", "the static full agent (/usr/lib/cloudroot/cloudroot-agent)")
	fl.StringVar(&cfg.Init, "init", "build/cloudroot-init", "the static initramfs /init")
	fl.StringVar(&cfg.Mkinitramfs, "mkinitramfs", "build/cloudroot-mkinitramfs", "the static initramfs builder")
	fl.StringVar(&cfg.lists, "lists", "initramfs", "directory of drivers.txt and profiles/")
	fl.StringVar(&cfg.Version, "version", "", "package version (default: the agent's, "+"\"-\" as \"+\")")
	fl.StringVar(&cfg.Arch, "arch", debpkg.DefaultArch, "package architecture")
	fl.StringVar(&epoch, "date", os.Getenv("SOURCE_DATE_EPOCH"), "changelog date and file times, Unix seconds (default $SOURCE_DATE_EPOCH, else now)")
	fl.StringVar(&cfg.outDir, "o", "build", "output directory")
	fl.Parse(os.Args[1:])
	if epoch != "" {
		n, err := strconv.ParseInt(epoch, 10, 64)
		if err != nil {
			fmt.Fprintf(os.Stderr, "cloudroot-deb: -date %q: %v\n", epoch, err)
			os.Exit(2)
		}
		cfg.Date = time.Unix(n, 0).UTC()
	} else {
		cfg.Date = time.Now().UTC().Truncate(time.Second)
	}
	if err := run(context.Background(), cfg, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "cloudroot-deb: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, cfg config, stdout io.Writer) error {
	cfg.Lists = os.DirFS(cfg.lists)
	p, err := debpkg.Tree(cfg.Config)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(cfg.outDir, 0o755); err != nil {
		return err
	}
	out, err := p.Build(ctx, cfg.outDir)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, out)
	return nil
}
