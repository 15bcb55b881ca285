package datasource

// The contract every datasource implements.
//
//   - Get looks for the datasource on this machine and reads it. It returns
//     Data, or an error wrapping ErrNotFound (not here: the caller tries the
//     next source), ErrNeedNetwork (a network source asked while
//     Env.NetworkUp is false: the caller brings a network up and asks again),
//     or any other error (the source is here but broken: its evidence is in
//     the message, with the path or URL that failed).
//   - Get never takes much longer than its budget: Env.Budget, or the
//     source's own default, bounds every fetch through the context, and an
//     absent metadata service costs at most about that. Under Env.Policy
//     (the initramfs's search), a network source is bounded by the
//     caller's context (the search's deadline) and an absent service costs
//     at most about the Policy's detection window (imds.Policy). Waits
//     that are not an Env.IMDS client follow the same Policy: discovery
//     before the service answers has Env.Window, waits on a platform
//     known to be there Env.Bound; Env.Budget then bounds only what a
//     source does with volumes and seed directories before the network.
//   - Get reads only what Env gives it: the target root's seed directories
//     through Env.Root, volumes through Env.OpenFS, metadata services through
//     Env.HTTP at the source's default URLs or Env.Config's overrides. It
//     never contacts anything when Env.NetworkUp is false, and keeps no state
//     between calls.
//   - A Source value is configuration only (zero value works), so it is safe
//     to share.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/imds"
	"github.com/cloudroot/cloudroot/pkg/media"
)

// Source is one datasource.
type Source interface {
	// Name is cloud-init's datasource name ("ConfigDrive", "Ec2").
	Name() string
	// Get finds and reads the datasource (see the contract above).
	Get(ctx context.Context, env Env) (*Data, error)
}

// Documented is implemented by sources that describe themselves for
// docs/datasources.md.
type Documented interface {
	Doc() Doc
}

// Doc is a source's row in docs/datasources.md.
type Doc struct {
	// Network is true for sources read over the network (they answer
	// ErrNeedNetwork until Env.NetworkUp).
	Network bool
	// Reads says what the source reads, for people.
	Reads string
	// NetworkConfig says where the instance's network configuration comes
	// from.
	NetworkConfig string
	// Tests says how the source is tested; a source without tests must
	// leave it empty.
	Tests string
}

// Env is what a source may use. The zero value is valid: no root, no
// devices, no network.
type Env struct {
	// Root is the target root filesystem (seed directories such as
	// var/lib/cloud/seed/config_drive are read from it); nil means none.
	Root fs.FS
	// Devices are the block devices seen, with probed filesystems.
	Devices []bootenv.Device
	// OpenFS opens the filesystem on a device (ISO9660, FAT) for reading;
	// close releases it. Nil means OpenDevice (pkg/media on Device.Path).
	OpenFS func(dev bootenv.Device) (fsys fs.FS, close func(), err error)
	// Cmdline and DMI are the kernel command line and SMBIOS strings.
	Cmdline bootenv.Cmdline
	DMI     bootenv.DMI

	// NetworkUp is set once a network is up on which metadata services
	// may answer. Network sources return ErrNeedNetwork until then.
	NetworkUp bool
	// HTTP is the client network sources use; nil means one without
	// proxies (metadata services are link-local).
	HTTP *http.Client
	// Lease is the ephemeral network's DHCP lease once NetworkUp, when the
	// network came from DHCP (nil for a static ip= or no network).
	Lease *Lease
	// Config is the `datasource:` mapping of the system configuration,
	// keyed by datasource name: `{Ec2: {metadata_urls: [...]}}`.
	Config map[string]any
	// System is the whole system configuration (cloud.cfg, cloud.cfg.d,
	// the runtime config, cc:), read once by the boot; nil: a source that
	// needs it reads it from Root.
	System map[string]any
	// DefaultUser is the distro's default user's name (GCE gives it the
	// ssh-keys of `<user>:` entries for that name).
	DefaultUser string
	// Budget bounds one Get; 0 means the source's default. With Policy
	// set, it bounds only what a source that reads no platform service
	// does before the network is up (scanning volumes and seed
	// directories); every wait on a metadata service or platform follows
	// the Policy (Env.IMDS, Bound, Window).
	Budget time.Duration
	// Policy, when set, is the boot's one timing policy for metadata
	// services (imds.Policy: detection window, per-request timeout,
	// backoff): every client IMDS builds follows it, and a network
	// source's Get is bounded by the caller's context (which carries the
	// search's Deadline) instead of Budget or the source's default. Nil
	// keeps each source's own defaults.
	Policy *imds.Policy
	// Log receives progress; nil discards.
	Log *slog.Logger
}

// SourceConfig is the source's mapping under `datasource:` (matched
// case-insensitively, as cloud-init's names are written variously), or nil.
func (e Env) SourceConfig(name string) map[string]any {
	if m, ok := e.Config[name].(map[string]any); ok {
		return m
	}
	for k, v := range e.Config {
		if strings.EqualFold(k, name) {
			if m, ok := v.(map[string]any); ok {
				return m
			}
		}
	}
	return nil
}

// MetadataURLs are the base URLs configured for a source: its
// `metadata_urls` list, or its single `metadata_url`. Nil when neither is
// set (the source uses its defaults).
func (e Env) MetadataURLs(name string) []string {
	cfg := e.SourceConfig(name)
	var out []string
	switch v := cfg["metadata_urls"].(type) {
	case []any:
		for _, u := range v {
			if s, ok := u.(string); ok && s != "" {
				out = append(out, s)
			}
		}
	case []string:
		out = append(out, v...)
	case string:
		out = append(out, v)
	}
	if s, ok := cfg["metadata_url"].(string); ok && s != "" && len(out) == 0 {
		out = append(out, s)
	}
	return out
}

// Logger is e.Log with the datasource attribute, or a discarding logger.
func (e Env) Logger(name string) *slog.Logger {
	if e.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return e.Log.With("datasource", name)
}

// WithBudget bounds ctx by e.Budget, or def when e.Budget is 0. Once the
// network is up under a Policy, the bound is the Policy's Deadline (Bound;
// the search's own deadline is already on ctx).
func (e Env) WithBudget(ctx context.Context, def time.Duration) (context.Context, context.CancelFunc) {
	if e.Policy != nil && e.NetworkUp {
		return context.WithTimeout(ctx, e.Bound(def))
	}
	b := e.Budget
	if b <= 0 {
		b = def
	}
	return context.WithTimeout(ctx, b)
}

// Bound is how long a source may wait on its platform once it knows the
// platform is there (reading a metadata service that answered, reporting
// to Azure's wireserver, querying VMware's guest tools): under a Policy
// the Policy's Deadline (the caller's context carries what is left of the
// search's), else e.Budget, else def.
func (e Env) Bound(def time.Duration) time.Duration {
	switch {
	case e.Policy != nil:
		return e.Policy.Resolve().Deadline
	case e.Budget > 0:
		return e.Budget
	}
	return def
}

// Window is how long source name may look for its service before the
// service has answered (its detection window): the source's `max_wait`
// when configured and positive, else under a Policy the Policy's Probe,
// else e.Budget, else def. Env.IMDS gives its clients the same window;
// sources use Window for the discovery that comes before them (CloudStack's
// virtual router), and the initramfs to announce the wait.
func (e Env) Window(name string, def time.Duration) time.Duration {
	if v, ok := e.SourceConfig(name)["max_wait"]; ok {
		if d, err := Seconds(v); err == nil && d > 0 {
			return d
		}
	}
	switch {
	case e.Policy != nil:
		return e.Policy.Resolve().Probe
	case e.Budget > 0:
		return e.Budget
	}
	return def
}

// Open opens dev's filesystem with e.OpenFS, or OpenDevice.
func (e Env) Open(dev bootenv.Device) (fs.FS, func(), error) {
	if e.OpenFS != nil {
		return e.OpenFS(dev)
	}
	return OpenDevice(dev)
}

// OpenDevice reads the filesystem on dev.Path (a block device or an image
// file holding ISO9660 or FAT) with pkg/media: no kernel driver, no mount,
// and the volume's bounds (bytes, time, structure sizes) enforced there; a
// corrupt volume, or a reader's panic on one, is an error naming dev.Path.
func OpenDevice(dev bootenv.Device) (fs.FS, func(), error) {
	return media.Open(dev.Path, media.Limits{})
}

// Registry is an ordered list of sources: the order is the priority.
type Registry []Source

// Lookup finds a source by name, case-insensitively.
func (r Registry) Lookup(name string) (Source, bool) {
	for _, s := range r {
		if strings.EqualFold(s.Name(), name) {
			return s, true
		}
	}
	return nil, false
}

// Names lists the sources' names in order.
func (r Registry) Names() []string {
	out := make([]string, len(r))
	for i, s := range r {
		out[i] = s.Name()
	}
	return out
}

// Select returns the sources named (a datasource_list, as ds-identify
// decided it), in that order; names with no source here are skipped and
// returned in missing.
func (r Registry) Select(names []string) (sel Registry, missing []string) {
	for _, n := range names {
		if s, ok := r.Lookup(n); ok {
			sel = append(sel, s)
		} else {
			missing = append(missing, n)
		}
	}
	return sel, missing
}

// MaxFileSize bounds a file ReadFile reads from a seed or volume.
const MaxFileSize = 64 << 20

// ReadFile reads a file from fsys, at most the size its Stat reports (and
// at most MaxFileSize). go-diskfs's FAT files return bytes past their end
// when read beyond it, which fs.ReadFile does; this does not.
func ReadFile(fsys fs.FS, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		if IsNotExist(err) && !errors.Is(err, fs.ErrNotExist) {
			return nil, &fs.PathError{Op: "open", Path: name, Err: fmt.Errorf("%w (%v)", fs.ErrNotExist, err)}
		}
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return nil, &fs.PathError{Op: "read", Path: name, Err: errors.New("is a directory")}
	}
	size := st.Size()
	if size > MaxFileSize {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fmt.Errorf("larger than %d bytes", MaxFileSize)}
	}
	if size <= 0 {
		// Size unknown (synthetic files): read up to the limit.
		b, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
		if err == nil && len(b) > MaxFileSize {
			err = &fs.PathError{Op: "read", Path: name, Err: fmt.Errorf("larger than %d bytes", MaxFileSize)}
		}
		return b, err
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, &fs.PathError{Op: "read", Path: name, Err: err}
	}
	return b, nil
}

// IsNotExist recognises a missing file, also from go-diskfs, whose ISO9660
// and FAT filesystems answer some missing paths with plain errors ("could
// not find directory ec2/latest"). ReadFile already turns those into
// fs.ErrNotExist.
func IsNotExist(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	s := strings.ToLower(err.Error())
	for _, m := range []string{"not exist", "not found", "no such file", "could not find"} {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}
