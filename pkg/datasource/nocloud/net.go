package nocloud

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"

	"github.com/cloudroot/cloudroot/pkg/datasource"
)

// seedNames are the files of a seed, in the order they are reported.
var seedNames = []string{"meta-data", "user-data", "vendor-data", "network-config"}

// SeedURLs maps each seed file to its URL under seedfrom, as cloud-init's
// read_seeded does: a "%s" in seedfrom is replaced by the file name;
// otherwise the name is appended, after a "/" when seedfrom ends in neither
// "/" nor has a query string.
func SeedURLs(seedfrom string) map[string]string {
	out := make(map[string]string, len(seedNames))
	base := seedfrom
	if !strings.Contains(base, "%s") {
		if u, err := url.Parse(base); !strings.HasSuffix(base, "/") && (err != nil || u.RawQuery == "") {
			base += "/"
		}
		base += "%s"
	}
	for _, f := range seedNames {
		out[f] = strings.ReplaceAll(base, "%s", f)
	}
	return out
}

// IsNetworkSeed reports whether seedfrom is fetched over the network
// (NoCloud-net: http, https).
func IsNetworkSeed(seedfrom string) bool {
	s := strings.ToLower(seedfrom)
	return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://")
}

// readURL fetches a seed over HTTP(S), in parallel, within the budget.
// meta-data and user-data must answer 200; vendor-data and network-config
// are optional (a 404 or a failure is logged and skipped), as in
// cloud-init's read_seeded.
func readURL(ctx context.Context, env datasource.Env, seedfrom string, ov Overrides) (*datasource.Data, error) {
	urls := SeedURLs(seedfrom)
	log := env.Logger("NoCloud")
	type result struct {
		b   []byte
		err error
	}
	res := make(map[string]result, len(urls))
	c, err := env.IMDS("NoCloud", datasource.IMDSDefaults{BaseURLs: []string{seedfrom}, Budget: DefaultBudget, Timeout: DefaultTimeout})
	if err != nil {
		return nil, fmt.Errorf("nocloud: %w", err)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for name, u := range urls {
		// Each file is its own URL (seedfrom may hold "%s"): a client
		// pinned to it, with the same budget, transport and timeouts.
		fc := c.WithBaseURL(u)
		wg.Go(func() {
			b, err := fc.Get(ctx, "")
			mu.Lock()
			res[name] = result{b, err}
			mu.Unlock()
		})
	}
	wg.Wait()
	files := map[string][]byte{}
	var errs []error
	for _, name := range seedNames {
		r := res[name]
		switch {
		case r.err == nil:
			files[name] = r.b
		case name == "vendor-data" || name == "network-config":
			log.Debug("optional seed file not read", "url", urls[name], "err", r.err)
		default:
			errs = append(errs, fmt.Errorf("nocloud: seedfrom %s: %w", urls[name], r.err))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	d, err := Parse(files, "seed-dir ("+seedfrom+")", ov)
	if err != nil {
		return nil, err
	}
	// A seed over the network is NoCloudNet's, found in cloud-init's
	// network stage (NoCloud in init-local reads only / and file://).
	d.NetworkStage = true
	return d, nil
}

// followSeedfrom implements `seedfrom` inside a local seed's meta-data:
// the seed it names is read (a path in the root, or a URL once the network
// is up) and merged as cloud-init's _merge_new_seed does: the local
// meta-data wins key by key, user-data, vendor-data and network-config come
// from the named seed when it has them.
func followSeedfrom(ctx context.Context, env datasource.Env, d *datasource.Data, ov Overrides) (*datasource.Data, error) {
	sf, _ := d.MetaData["seedfrom"].(string)
	if sf == "" {
		return d, nil
	}
	var seeded *datasource.Data
	var err error
	switch {
	case IsNetworkSeed(sf):
		if !env.NetworkUp {
			return nil, fmt.Errorf("nocloud: meta-data seedfrom %s: %w", sf, datasource.ErrNeedNetwork)
		}
		seeded, err = readURL(ctx, env, sf, Overrides{})
	case strings.HasPrefix(sf, "file://") || strings.HasPrefix(sf, "/"):
		seeded, err = readRootDir(env.Root, strings.TrimPrefix(sf, "file://"), Overrides{})
	default:
		return nil, fmt.Errorf("nocloud: meta-data seedfrom %q: only file:// and http(s):// seeds are supported", sf)
	}
	if err != nil {
		return nil, fmt.Errorf("nocloud: meta-data seedfrom %s: %w", sf, err)
	}
	out := *d
	out.MetaData = mergeFirstWins(d.MetaData, seeded.MetaData)
	out.NetworkStage = d.NetworkStage || seeded.NetworkStage
	out.UserData = seeded.UserData
	if seeded.VendorData != nil {
		out.VendorData = seeded.VendorData
	}
	if seeded.NetworkConfig != nil {
		out.NetworkConfig = seeded.NetworkConfig
	}
	if ov.InstanceID != "" {
		out.MetaData["instance-id"] = ov.InstanceID
	}
	if ov.Hostname != "" {
		out.MetaData["local-hostname"] = ov.Hostname
	}
	return &out, nil
}

// mergeFirstWins is cloud-init's mergemanydict([a, b]): a's values win,
// mappings are merged recursively, b fills what a lacks.
func mergeFirstWins(a, b map[string]any) map[string]any {
	out := make(map[string]any, len(a)+len(b))
	for k, v := range b {
		out[k] = v
	}
	for k, v := range a {
		am, aok := v.(map[string]any)
		bm, bok := out[k].(map[string]any)
		if aok && bok {
			out[k] = mergeFirstWins(am, bm)
			continue
		}
		out[k] = v
	}
	return out
}
