package stages

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/builtin"
	"github.com/cloudroot/cloudroot/pkg/distro"
	"github.com/cloudroot/cloudroot/pkg/identify"
	"github.com/cloudroot/cloudroot/pkg/imds"
	"github.com/cloudroot/cloudroot/pkg/state"
)

// DatasourceBudget bounds each datasource's work before the network is
// up (local media, seed directories). Network datasources follow the
// search's imds.Policy instead: a detection window each, so an absent
// metadata service costs seconds, not minutes, and one deadline for the
// whole search.
const DatasourceBudget = 5 * time.Second

// FindDatasource tries the detected datasources in order (local ones
// first need nothing; a network one gets the network on demand), after
// the previous boot's cache when it may be trusted, and the None fallback
// last.
func (b *Boot) FindDatasource(ctx context.Context, list []string) (*datasource.Data, error) {
	t := b.Target
	reg := builtin.Registry()
	// Detect has reported the names this build does not provide.
	sel, _ := reg.Select(list)
	base := b.BaseConfig()
	dsCfg, _ := base.System["datasource"].(map[string]any)
	dsCfg = CmdlineSourceConfig(b.Cmdline, dsCfg, b.Log)
	pol, perrs := datasource.CmdlinePolicy(b.Cmdline)
	for _, e := range perrs {
		b.Log.Warn("datasource search policy", "err", e)
		b.Status.Get(state.StageInitLocal).AddRecoverable("WARNING", e.Error())
	}
	b.Log.Info("datasource search", "policy", pol.String())
	env := datasource.Env{
		Devices: b.Devices,
		Cmdline: b.Cmdline,
		DMI:     b.DMI,
		Config:  dsCfg,
		System:  base.System,
		Budget:  DatasourceBudget,
		Policy:  &pol,
		Log:     b.Log,
	}
	if b.NetworkUp {
		env.NetworkUp = true
		env.HTTP = b.HTTP
	}
	// One deadline for the whole search, every network datasource
	// together; the None fallback and the cache are outside it.
	sctx, cancel := context.WithTimeoutCause(ctx, pol.Deadline, imds.ErrDeadline)
	defer cancel()
	if r, err := os.OpenRoot(t.Dir()); err == nil {
		env.Root = r.FS()
	}
	env.DefaultUser = defaultUserName(base.System, distro.Detect(t.ReadFile))

	// cloud-init's _restore_from_checked_cache: reuse the previous boot's
	// answer when manual_cache_clean trusts it or its source's local check
	// says it still describes this machine.
	mode, why := CacheModeFor(t, base.System)
	if why != "" {
		b.Log.Info(why)
	}
	cached, cerr := ReadDatasourceCache(t)
	if cerr != nil {
		b.Log.Warn("ignoring the datasource cache", "err", cerr)
	}
	restored := RestoreDatasource(cached, mode, reg, env)
	b.Log.Info(restored.Description)
	if src, ok := RefreshSource(restored, mode, reg); ok {
		// The platform may have changed this instance's metadata since
		// the last boot: ask again, keep the cache if it does not answer.
		iid := restored.Data.InstanceID()
		d, err := b.searchDatasources(sctx, datasource.Registry{src}, list, env, iid)
		switch {
		case err != nil:
			b.Log.Warn("refreshing the restored datasource failed: using the cache", "datasource", src.Name(), "err", err)
		case d.InstanceID() != iid:
			b.Log.Warn("the refreshed datasource names another instance: using the cache", "datasource", src.Name(), "cached", iid, "answered", d.InstanceID())
		default:
			b.Log.Info("refreshed the restored datasource on boot", "datasource", d.Description())
			return d, nil
		}
	}
	if restored.Data != nil {
		b.State.Restored = restored.Description
		return restored.Data, nil
	}

	// The fallback (None) is not searched with the others: when they all
	// fail, a cached answer whose source allows it comes first, as in
	// cloud-init, whose local search never includes None.
	var fallback datasource.Source
	if i := slices.IndexFunc(sel, datasource.IsFallback); i >= 0 {
		fallback, sel = sel[i], slices.Delete(slices.Clone(sel), i, i+1)
	}
	d, err := b.searchDatasources(sctx, sel, list, env, PreviousInstanceID(t))
	if err != nil && errors.Is(context.Cause(sctx), imds.ErrDeadline) {
		b.Log.Warn("the datasource search ran out of time", "deadline", pol.Deadline)
		err = fmt.Errorf("%w (%s): %w", imds.ErrDeadline, pol.Deadline, err)
	}
	if err != nil && fallback != nil {
		if fb := FallbackToCache(cached, mode, reg); fb != nil {
			b.Log.Info("restored fallback datasource from checked cache", "datasource", fb.Description())
			b.State.Restored = "restored fallback datasource from checked cache: " + fb.Description()
			return fb, nil
		}
		// Sources that failed are warnings now, as cloud-init logs them
		// (the boot goes on with the fallback): status says "degraded".
		for _, e := range unwrapJoined(err) {
			if !errors.Is(e, datasource.ErrNotFound) {
				b.Status.Get(state.StageInitLocal).AddRecoverable("WARNING", e.Error())
			}
		}
		if len(list) == 1 && list[0] == "None" {
			// datasource_list: [None] (an image build, a chroot): 26.x
			// finds DataSourceNone as asked, without a warning.
			b.Log.Info("no datasource found: using None", "tried", err)
		} else {
			b.Log.Warn("no datasource found: using the None fallback", "tried", err)
		}
		d, err = fallback.Get(ctx, env)
	}
	return d, err
}

// unwrapJoined splits an errors.Join into its errors.
func unwrapJoined(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// probeLine is the console line before asking a datasource.
func (b *Boot) probeLine(name string, network bool, probe, left time.Duration) string {
	if b.ProbeLine != nil {
		return b.ProbeLine(name, network, probe, left)
	}
	if network {
		return "datasource " + name + ": asking the metadata service"
	}
	return "datasource " + name + ": looking for local seed"
}

// searchDatasources tries sel in order, bringing the network up for the
// first source that asks for it.
func (b *Boot) searchDatasources(ctx context.Context, sel datasource.Registry, list []string, env datasource.Env, prevIID string) (*datasource.Data, error) {
	var errs []error
	var tried []string
	for _, src := range sel {
		if ctx.Err() != nil {
			errs = append(errs, fmt.Errorf("%s: not asked: %w", src.Name(), context.Cause(ctx)))
			continue
		}
		tried = append(tried, src.Name())
		ev := b.LocalEvent.StartSearch("local", src.Name())
		// A network source asked before the network is up answers at
		// once (ErrNeedNetwork): its line comes after the DHCP line.
		doc, documented := src.(datasource.Documented)
		switch {
		case env.NetworkUp:
			b.Log.Info(b.probeLine(src.Name(), true, env.Window(src.Name(), 0), timeLeft(ctx)))
		case !documented || !doc.Doc().Network:
			b.Log.Info(b.probeLine(src.Name(), false, 0, 0))
		}
		d, err := src.Get(ctx, env)
		if errors.Is(err, datasource.ErrNeedNetwork) && b.Net == nil {
			// cloud-init's local stage does not search network sources:
			// not found here, asked in the network stage.
			err = fmt.Errorf("%s: %w: %w", src.Name(), ErrNoNetwork, datasource.ErrNotFound)
		} else if errors.Is(err, datasource.ErrNeedNetwork) {
			if nerr := b.Net.Up(ctx); nerr != nil {
				errs = append(errs, fmt.Errorf("%s: %w", src.Name(), nerr))
				continue
			}
			env.NetworkUp = true
			env.HTTP = b.Net.Client()
			env.Lease = b.Net.Lease()
			b.Log.Info(b.probeLine(src.Name(), true, env.Window(src.Name(), 0), timeLeft(ctx)))
			d, err = src.Get(ctx, env)
		}
		switch {
		case err == nil:
			ev.Found("local", src.Name())
		case !errors.Is(err, datasource.ErrNotFound):
			ev.Fail()
		}
		ev.Finish()
		rep, reports := src.(datasource.Reporter)
		switch {
		case err == nil && reports && d.InstanceID() != prevIID:
			// First boot of this instance: tell the platform (Azure's
			// wireserver), over the network the answer came on.
			if rerr := rep.ReportReady(ctx, env, d); rerr != nil {
				b.Log.Warn("report ready failed", "datasource", src.Name(), "err", rerr)
				b.Status.Get(state.StageInitLocal).AddRecoverable("WARNING", fmt.Sprintf("%s: report ready: %v", src.Name(), rerr))
			} else {
				b.Log.Info("reported ready", "datasource", src.Name())
			}
		case err != nil && reports && env.NetworkUp && !errors.Is(err, datasource.ErrNotFound):
			if rerr := rep.ReportFailure(ctx, env, err.Error()); rerr != nil {
				b.Log.Warn("report failure failed", "datasource", src.Name(), "err", rerr)
			}
		}
		switch {
		case err == nil:
			// Sources that failed before this one are warnings now, as
			// cloud-init logs them: status says "degraded done".
			for _, e := range errs {
				b.Status.Get(state.StageInitLocal).AddRecoverable("WARNING", e.Error())
			}
			return d, nil
		case errors.Is(err, datasource.ErrNotFound):
			b.Log.Info("datasource not found", "datasource", src.Name(), "err", err)
		default:
			b.Log.Warn("datasource failed", "datasource", src.Name(), "err", err)
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if len(sel) == 0 {
		return nil, fmt.Errorf("none of datasource_list [%s] is provided by this build: %w", strings.Join(list, ", "), datasource.ErrNotFound)
	}
	return nil, fmt.Errorf("tried %s: %w", strings.Join(tried, ", "), datasource.ErrNotFound)
}

// ErrNoNetwork: a network datasource was asked in a stage that has no
// network (the in-root local stage, before the system's network is up).
var ErrNoNetwork = errors.New("no network in this stage (the network stage asks again)")

// timeLeft is what is left before ctx's deadline (0: none).
func timeLeft(ctx context.Context) time.Duration {
	if dl, ok := ctx.Deadline(); ok {
		return max(time.Until(dl), time.Millisecond)
	}
	return 0
}

// defaultUserName is system_info.default_user.name, else the distro's.
func defaultUserName(cfg map[string]any, d distro.Info) string {
	if si, ok := cfg["system_info"].(map[string]any); ok {
		if du, ok := si["default_user"].(map[string]any); ok {
			if n, ok := du["name"].(string); ok && n != "" {
				return n
			}
		}
	}
	return d.DefaultUserName()
}

// CmdlineSourceConfig merges what ds=NAME;key=value… carries beyond
// NoCloud's keys (ds=ec2;metadata_urls=…) into the datasource config.
func CmdlineSourceConfig(cmdline bootenv.Cmdline, dsCfg map[string]any, log interface{ Info(string, ...any) }) map[string]any {
	arg, ok := cmdline.DS()
	if !ok || arg.NoCloud() {
		return dsCfg
	}
	extra := arg.SourceConfig()
	if extra == nil {
		return dsCfg
	}
	name := identify.NormalizeName(arg.Name)
	out := map[string]any{}
	for k, v := range dsCfg {
		out[k] = v
	}
	key := name
	for k := range out {
		if strings.EqualFold(k, name) {
			key = k
		}
	}
	merged := map[string]any{}
	if m, ok := out[key].(map[string]any); ok {
		for k, v := range m {
			merged[k] = v
		}
	}
	for k, v := range extra {
		merged[k] = v
	}
	out[key] = merged
	log.Info("datasource configuration from the kernel command line", "datasource", key, "keys", len(extra))
	return out
}
