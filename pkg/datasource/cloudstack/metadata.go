package cloudstack

// Fetching: the instance-id probe, the meta-data tree and user-data, over
// pkg/imds.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/ec2"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/pwserver"
	"github.com/cloudroot/cloudroot/pkg/imds"
)

// Crawl limits: a hostile or broken router cannot make a crawl endless.
const (
	maxDepth   = 12
	maxEntries = 4096
)

// read waits for <base>/latest/meta-data/instance-id, keeps the base that
// answered, crawls the meta-data tree and fetches user-data. A router that
// does not answer, or answers 404 for instance-id, is ErrNotFound.
func read(ctx context.Context, c *imds.Client) (Input, error) {
	probe := APIVersion + "/meta-data/instance-id"
	var answered string
	c.Check = func(r *http.Response) error {
		if r.StatusCode/100 == 2 && r.Request != nil {
			answered = r.Request.URL.String()
		}
		return nil
	}
	_, err := c.Get(ctx, probe)
	c.Check = nil
	if err != nil {
		if absent(err) || errors.Is(err, imds.ErrNotFound) {
			return Input{}, fmt.Errorf("no metadata service at %s (%w): %w", strings.Join(c.BaseURLs, ", "), datasource.ErrNotFound, err)
		}
		return Input{}, err
	}
	base := c.BaseURLs[0]
	for _, b := range c.BaseURLs {
		if join(b, probe) == answered {
			base = b
			break
		}
	}
	c.BaseURLs = []string{base}
	in := Input{Base: base, URL: join(base, APIVersion+"/meta-data/")}
	n := 0
	if in.MetaData, err = crawl(ctx, c, APIVersion+"/meta-data/", 0, &n); err != nil {
		return in, err
	}
	in.UserData, err = c.Get(ctx, APIVersion+"/user-data")
	switch {
	case errors.Is(err, imds.ErrNotFound):
		in.UserData, err = nil, nil
	case err == nil && in.UserData == nil:
		in.UserData = []byte{}
	}
	return in, err
}

// crawl materialises the tree under dir as cloud-init's ec2 helper
// (MetadataMaterializer) does; any failure fails the crawl.
func crawl(ctx context.Context, c *imds.Client, dir string, depth int, n *int) (map[string]any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("%s: deeper than %d levels", join(c.BaseURLs[0], dir), maxDepth)
	}
	b, err := c.Get(ctx, dir)
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	for _, e := range ec2.ParseListing(b) {
		if *n++; *n > maxEntries {
			return nil, fmt.Errorf("%s: more than %d entries", join(c.BaseURLs[0], dir), maxEntries)
		}
		if e.Dir {
			sub, err := crawl(ctx, c, dir+e.Name+"/", depth+1, n)
			if err != nil {
				return nil, err
			}
			out[e.Name] = sub
			continue
		}
		leaf, err := c.Get(ctx, dir+e.Resource)
		if err != nil {
			return nil, err
		}
		out[e.Name] = ec2.DecodeLeaf(leaf)
	}
	return out, nil
}

// join is how pkg/imds joins a base URL and a path.
func join(base, path string) string {
	return strings.TrimRight(base, "/") + "/" + strings.TrimLeft(path, "/")
}

// PasswordURL is the password server's URL: base's host on port, path /
// (cloud-init's wget of <vr_addr>:8080).
func PasswordURL(base string, port int) (string, error) {
	return pwserver.URL(base, port, "/")
}

// ParsePassword is the password server's reply: the password, or ok false
// when there is none ("", "saved_password" or "bad_request").
func ParsePassword(b []byte) (pw string, ok bool) {
	return pwserver.Parse(b)
}
