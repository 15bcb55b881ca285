package maas

// Reading a seed: from the seed directory in the target root, or from the
// metadata service with OAuth-signed requests (cloud-init's
// read_maas_seed_dir, read_maas_seed_url and OauthUrlHelper).

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/imds"
)

// readSeedDir reads the seed directory from root. ok is false when there
// is none (missing, not a directory, or empty: cloud-init's
// MAASSeedDirNone); files missing from a seed that is there are left for
// Build to judge.
func readSeedDir(root fs.FS) (in Input, ok bool, err error) {
	dir := strings.TrimPrefix(SeedDir, "/")
	ents, err := fs.ReadDir(root, dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || !isDir(root, dir) {
			return in, false, nil
		}
		return in, false, fmt.Errorf("reading %s: %w", SeedDir, err)
	}
	if len(ents) == 0 {
		return in, false, nil
	}
	in = Input{Source: SeedDir, Files: map[string][]byte{}}
	for _, f := range Fields() {
		b, err := datasource.ReadFile(root, dir+"/"+f.Path)
		switch {
		case err == nil:
			in.Files[f.Path] = b
		case errors.Is(err, fs.ErrNotExist):
		default:
			return in, false, fmt.Errorf("reading %s/%s: %w", SeedDir, f.Path, err)
		}
	}
	return in, true, nil
}

func isDir(fsys fs.FS, name string) bool {
	fi, err := fs.Stat(fsys, name)
	return err == nil && fi.IsDir()
}

// signer signs every request (a fresh nonce and timestamp each time) and
// learns the server's clock from the Date header of a 401 or 403 answer,
// as OauthUrlHelper's exception_cb does: later timestamps are the local
// clock plus that skew.
type signer struct {
	creds Credentials
	now   func() time.Time
	nonce func(now time.Time) string
	log   *slog.Logger

	mu   sync.Mutex
	skew int64 // seconds
}

// skewChangeLimit is OauthUrlHelper's skew_change_limit: a larger change
// is logged as a warning.
const skewChangeLimit = 5

func (s *signer) Skew() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.skew
}

// token is the imds.Client Token hook: the Authorization header value.
func (s *signer) token(context.Context) (string, error) {
	now := s.now()
	ts := strconv.FormatInt(now.Unix()+s.Skew(), 10)
	return Header(s.creds, s.nonce(now), ts), nil
}

// observe is the imds.Client Check hook: it never fails a reply, it only
// reads the clock of one that refused our signature.
func (s *signer) observe(resp *http.Response) error {
	if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden {
		return nil
	}
	host := ""
	if resp.Request != nil && resp.Request.URL != nil {
		host = resp.Request.URL.Host
	}
	date := resp.Header.Get("Date")
	if date == "" {
		s.log.Warn("missing header 'date' in response", "status", resp.StatusCode, "host", host)
		return nil
	}
	remote, err := http.ParseTime(date)
	if err != nil {
		s.log.Warn("cannot read the server's date", "status", resp.StatusCode, "host", host, "date", date, "error", err)
		return nil
	}
	skew := int64(remote.Sub(s.now()) / time.Second)
	s.mu.Lock()
	old := s.skew
	s.skew = skew
	s.mu.Unlock()
	if d := old - skew; d > skewChangeLimit || d < -skewChangeLimit {
		s.log.Warn("setting oauth clock skew", "host", host, "skew", skew)
	}
	return nil
}

// randomNonce is oauthlib's generate_nonce: a random 64-bit number
// followed by the timestamp.
func randomNonce(now time.Time) string {
	return strconv.FormatUint(rand.Uint64(), 10) + strconv.FormatInt(now.Unix(), 10)
}

// reader reads one metadata service.
type reader struct {
	c      *imds.Client
	signer *signer // nil: requests are not signed
	log    *slog.Logger
}

// get fetches path. A 401 or 403 that taught the signer a new clock skew
// is retried once with the corrected timestamp.
func (r *reader) get(ctx context.Context, path string) ([]byte, error) {
	for retried := false; ; retried = true {
		var before int64
		if r.signer != nil {
			before = r.signer.Skew()
		}
		b, err := r.c.Get(ctx, path)
		if err == nil || retried || r.signer == nil || !refused(err) || r.signer.Skew() == before {
			return b, err
		}
		r.log.Info("retrying with the server's clock", "url", fullURL(r.c, path), "skew", r.signer.Skew())
	}
}

func fullURL(c *imds.Client, path string) string {
	return strings.TrimRight(c.BaseURLs[0], "/") + "/" + path
}

func status(err error) int {
	var e *imds.Error
	if errors.As(err, &e) {
		return e.Status
	}
	return 0
}

func refused(err error) bool {
	s := status(err)
	return s == http.StatusUnauthorized || s == http.StatusForbidden
}

// absent: the service did not answer (refused, timed out, 5xx until the
// budget ran out).
func absent(err error) bool {
	return errors.Is(err, imds.ErrBudget) || errors.Is(err, context.DeadlineExceeded) || status(err) == 0
}

// readURL reads the seed at base/version: first the version check (its
// instance-id, as wait_for_metadata_service does), then the other files
// (404 means missing; read_maas_seed_url).
func readURL(ctx context.Context, r *reader, base, version string) (Input, error) {
	in := Input{Source: base, Files: map[string][]byte{}}
	check := version + "/" + PathInstanceID
	iid, err := r.get(ctx, check)
	switch {
	case err == nil && len(iid) == 0:
		return in, fmt.Errorf("%s: empty instance-id: %w", fullURL(r.c, check), datasource.ErrNotFound)
	case err == nil:
	case errors.Is(err, imds.ErrNotFound):
		return in, fmt.Errorf("no MAAS metadata (%w): %w", datasource.ErrNotFound, err)
	case refused(err):
		return in, fmt.Errorf("the MAAS metadata service refused the credentials: %w", err)
	case absent(err):
		return in, fmt.Errorf("no MAAS metadata service (%w): %w", datasource.ErrNotFound, err)
	default:
		return in, err
	}
	in.Files[PathInstanceID] = iid
	for _, f := range Fields() {
		if f.Path == PathInstanceID {
			continue
		}
		b, err := r.get(ctx, version+"/"+f.Path)
		switch {
		case err == nil:
			in.Files[f.Path] = b
		case errors.Is(err, imds.ErrNotFound):
		default:
			return in, err
		}
	}
	return in, nil
}
