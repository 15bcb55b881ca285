package cm

// Installer downloads for puppet (aio) and chef (omnibus): the script is
// fetched with cloud-init's retries, written 0700 into a fresh directory
// under /var/tmp/cloud-init in the target (cloud-init's executable temp
// dir), run with its arguments and removed.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"path"
	"time"

	"github.com/cloudroot/cloudroot/pkg/imds"
	"github.com/cloudroot/cloudroot/pkg/modules"
)

// FetchFunc fetches url with retries retries after the first attempt.
type FetchFunc func(ctx context.Context, url string, retries int) ([]byte, error)

// FetchOptions tune the installer downloads; the zero value is
// cloud-init's behaviour (1 s between attempts) over imds' transport.
type FetchOptions struct {
	HTTP *http.Client
	// Fetch replaces the download (tests).
	Fetch FetchFunc
}

// fetch downloads url as url_helper.readurl(url, retries=N) does.
func (o FetchOptions) fetch(ctx context.Context, c *modules.Context, url string, retries int) ([]byte, error) {
	if o.Fetch != nil {
		return o.Fetch(ctx, url, retries)
	}
	if retries <= 0 {
		retries = -1
	}
	client := &imds.Client{
		BaseURLs: []string{url},
		HTTP:     o.HTTP,
		Timeout:  60 * time.Second,
		Retries:  retries,
		Backoff:  imds.Backoff{Initial: time.Second, Max: time.Second, Jitter: 1e-9},
		Budget:   -1,
		Headers:  http.Header{"User-Agent": {"Cloud-Init/" + c.Version}},
		Logger:   c.Log,
	}
	b, err := client.Get(ctx, "")
	if err != nil {
		return nil, fmt.Errorf("fetching %s: %w", url, err)
	}
	return b, nil
}

// TmpExecDir is cloud-init's directory for temporary executables
// (temp_utils' _EXE_ROOT_TMPDIR).
const TmpExecDir = "/var/tmp/cloud-init"

// runBlob writes blob as name into a new directory under TmpExecDir and
// runs it with args, output to the console log; the directory is removed.
func runBlob(ctx context.Context, c *modules.Context, blob []byte, name string, args []string) error {
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	dir := path.Join(TmpExecDir, "tmp"+hex.EncodeToString(rnd[:]))
	if err := c.Root.MkdirAll(TmpExecDir, 0o755); err != nil {
		return err
	}
	if err := c.Root.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	defer c.Root.RemoveAll(dir)
	p := path.Join(dir, name)
	if err := c.Root.WriteFile(p, blob, 0o700); err != nil {
		return err
	}
	_, err := cmCmd{Argv: append([]string{p}, args...)}.run(ctx, c)
	return err
}
