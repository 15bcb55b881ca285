package modules

// seed_random (cloud-init cc_seed_random, init stage, per-instance, all
// distros) adds entropy and optionally runs a seeding command:
//
//  1. random_seed.data (decoded per encoding: raw, base64/b64, gzip/gz)
//     followed by the meta-data's random_seed (Azure, OpenStack) is
//     appended to random_seed.file (default /dev/urandom).
//  2. random_seed.command runs in the target with RANDOM_SEED_FILE set;
//     a missing command is an error only with command_required.
//
// The file is the target's when it exists there (the agent's /dev, or a
// file). A /dev path the target does not have — the initramfs, before its
// /dev is mounted — is the running kernel's device of that name: the
// entropy pool is the machine's, not the root's. Nothing else outside the
// target is written.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/distro"
	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
	"github.com/cloudroot/cloudroot/pkg/state"
	"github.com/cloudroot/cloudroot/pkg/target"
)

// SeedRandom is cc_seed_random.
var SeedRandom = Module{
	Name:      "seed_random",
	Frequency: state.PerInstance,
	Keys:      []string{"random_seed"},
	Run:       Typed(runSeedRandom),
}

// seedConfig is the module's configuration.
type seedConfig struct {
	File            string
	Data            []byte
	Command         []string
	CommandRequired bool
}

// randomSeedConfig is the module's configuration: random_seed, nil when
// absent or not a mapping (all defaults).
type randomSeedConfig struct {
	RandomSeed *randomSeedSection `cfg:"random_seed,loose"`
}

// randomSeedSection is the random_seed mapping.
type randomSeedSection struct {
	File            string   `cfg:"file,scalar,default=/dev/urandom"`
	Data            string   `cfg:"data,scalar"`
	Encoding        string   `cfg:"encoding,scalar"`
	Command         []string `cfg:"command,scalar"`
	CommandRequired any      `cfg:"command_required"`
}

func decodeSeedRandom(c *Context, cfg randomSeedConfig) (seedConfig, error) {
	m := randomSeedSection{File: "/dev/urandom"}
	if cfg.RandomSeed != nil {
		m = *cfg.RandomSeed
	}
	sc := seedConfig{File: m.File}
	if d := m.Data; d != "" {
		var err error
		switch enc := strings.ToLower(m.Encoding); enc {
		case "", "raw":
			sc.Data = []byte(d)
		case "base64", "b64":
			sc.Data, err = b64([]byte(d))
		case "gzip", "gz":
			sc.Data, err = gunzip([]byte(d))
		default:
			err = fmt.Errorf("Unknown random_seed encoding: %s", m.Encoding)
		}
		if err != nil {
			return sc, err
		}
	}
	if rs := c.Metadata().RandomSeed; rs != "" {
		sc.Data = append(sc.Data, rs...)
	}
	sc.Command = m.Command
	sc.CommandRequired = pyval.IsTrue(m.CommandRequired)
	return sc, nil
}

func runSeedRandom(ctx context.Context, c *Context, cfg randomSeedConfig) error {
	sc, err := decodeSeedRandom(c, cfg)
	if err != nil {
		return err
	}
	if len(sc.Data) > 0 {
		c.Log.Debug(fmt.Sprintf("seed_random: adding %d bytes of random seed entropy to %s", len(sc.Data), sc.File), "module", "seed_random")
		if err := appendSeed(c, sc.File, sc.Data); err != nil {
			return fmt.Errorf("seed_random: %w", err)
		}
	}
	switch {
	case len(sc.Command) == 0 && sc.CommandRequired:
		err = errors.New("no command found but required=true")
	case len(sc.Command) == 0:
		return nil
	case !c.Which(sc.Command[0]):
		if !sc.CommandRequired {
			c.Log.Debug(fmt.Sprintf("command '%s' not found for seed_command", sc.Command[0]), "module", "seed_random")
			return nil
		}
		err = fmt.Errorf("command '%s' not found but required=true", sc.Command[0])
	default:
		err = c.RunCmd(ctx, distro.Cmd{Argv: sc.Command, Env: []string{"RANDOM_SEED_FILE=" + sc.File}})
	}
	if err != nil {
		c.Warnf("handling random command [%s] failed: %v", pyList(sc.Command), err)
	}
	return err
}

// appendSeed appends data to p in the target (a device there is written
// in place; a file is rewritten atomically with data appended), or to the
// running kernel's device when p is a /dev path the target lacks.
func appendSeed(c *Context, p string, data []byte) error {
	fi, err := c.Root.Stat(p)
	switch {
	case err == nil && fi.Mode()&fs.ModeCharDevice != 0:
		hp, err := c.Root.Resolve(p)
		if err != nil {
			return err
		}
		return writeDevice(hp, data)
	case err == nil || (errors.Is(err, fs.ErrNotExist) && !strings.HasPrefix(p, "/dev/")):
		return c.Root.WriteFileOpts(p, data, target.WriteOpts{Perm: 0o644, UID: -1, GID: -1, Append: true})
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	if fi, err := os.Stat(p); err != nil || fi.Mode()&fs.ModeCharDevice == 0 {
		return fmt.Errorf("%s is neither in the target nor a device of this machine", p)
	}
	return writeDevice(p, data)
}

// writeDevice writes data to the character device at host path hp.
func writeDevice(hp string, data []byte) error {
	f, err := os.OpenFile(hp, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	return errors.Join(werr, f.Close())
}

// pyList prints a string list as Python's repr does (['a', 'b']), for
// messages that quote cloud-init's.
func pyList(l []string) string {
	q := make([]string, 0, len(l))
	for _, s := range l {
		q = append(q, "'"+strings.ReplaceAll(s, "'", "\\'")+"'")
	}
	return "[" + strings.Join(q, ", ") + "]"
}
