package modules

// landscape, as cloud-init 26.x's cc_landscape: a non-empty `landscape`
// mapping installs landscape-client, merges cloud-init's built-in client
// settings, the target's /etc/landscape/client.conf and the config's
// `landscape.client` (later wins), and hands the [client] keys, sorted, to
// `landscape-config --silent --KEY VALUE...` (underscores become dashes),
// which writes client.conf and registers. It asks `landscape-config
// --silent --is-registered` first: exit 5 means not registered; exit 0 is
// "already registered" (a warning, nothing done); anything else fails.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
	"github.com/cloudroot/cloudroot/pkg/state"
	"github.com/cloudroot/cloudroot/pkg/target"
)

// LandscapeClientConf is landscape-client's configuration file.
const LandscapeClientConf = "/etc/landscape/client.conf"

// landscapeBuiltin is cloud-init's LSC_BUILTIN_CFG client section.
var landscapeBuiltin = map[string]string{
	"log_level": "info",
	"url":       "https://landscape.canonical.com/message-system",
	"ping_url":  "http://landscape.canonical.com/ping",
	"data_path": "/var/lib/landscape/client",
}

// Landscape is cc_landscape.
var Landscape = Module{
	Name:       "landscape",
	Frequency:  state.PerInstance,
	Keys:       []string{"landscape"},
	Distros:    []string{"ubuntu"},
	ActivateBy: []string{"landscape"},
	Run:        Typed(runLandscape),
}

// parseConfigObjSection reads section's key = value pairs from a ConfigObj
// (INI-like) file; quotes around values are removed.
func parseConfigObjSection(b []byte, section string) map[string]string {
	out := map[string]string{}
	cur := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if strings.HasPrefix(l, "[") && strings.HasSuffix(l, "]") {
			cur = strings.TrimSpace(strings.Trim(l, "[]"))
			continue
		}
		k, v, ok := strings.Cut(l, "=")
		if !ok || cur != section {
			continue
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		out[strings.TrimSpace(k)] = v
	}
	return out
}

// landscapeConfig is the module's configuration: landscape as given, its shape
// checked by the module with the module's own message.
type landscapeConfig struct {
	HasLandscape bool `cfg:"landscape,present"`
	Landscape    any  `cfg:"landscape"`
	Section      struct {
		// All is the whole mapping: only its size is read.
		All map[string]any `cfg:",all"`
		// Client is landscape.client (a non-mapping is none), passed
		// through: each key becomes a landscape-config flag.
		Client map[string]any `cfg:"client,loose"`
	} `cfg:"landscape,loose"`
}

func runLandscape(ctx context.Context, c *Context, cfg landscapeConfig) error {
	raw, ok := cfg.Landscape, cfg.HasLandscape
	if !ok {
		return nil
	}
	if !isMapping(raw) && raw != nil {
		return fmt.Errorf("'landscape' key existed in config, but not a dictionary type, is a %s instead", pyval.TypeName(raw))
	}
	ls := cfg.Section
	if len(ls.All) == 0 {
		return nil
	}
	if err := c.InstallPackages(ctx, c.Facts(), []string{"landscape-client"}); err != nil {
		return err
	}
	client := map[string]string{}
	for k, v := range landscapeBuiltin {
		client[k] = v
	}
	if b, err := c.Root.ReadFile(LandscapeClientConf); err == nil {
		for k, v := range parseConfigObjSection(b, "client") {
			client[k] = v
		}
	}
	for k, v := range ls.Client {
		client[k] = scalarString(v)
	}
	keys := make([]string, 0, len(client))
	for k := range client {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	argv := []string{"landscape-config", "--silent"}
	for _, k := range keys {
		argv = append(argv, "--"+strings.ReplaceAll(k, "_", "-"), client[k])
	}
	_, err := c.RunCapture(ctx, "landscape-config", "--silent", "--is-registered")
	var xe *target.ExitError
	switch {
	case err == nil:
		c.Warnf("Client already registered to Landscape")
		return nil
	case errors.As(err, &xe) && xe.Code == 5:
	default:
		return fmt.Errorf("Failure registering client:\n%w", err)
	}
	if _, err := c.RunCapture(ctx, argv...); err != nil {
		err = fmt.Errorf("Failure registering client:\n%w", err)
		c.Logexc("%v", err)
		return err
	}
	return nil
}
