package lxd

// Reading the devlxd API over its unix socket.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/cloudroot/cloudroot/pkg/datasource"
)

// client is an HTTP client that reaches every URL through the socket.
func client(socket string) *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", socket)
		},
		DisableKeepAlives: false,
	}}
}

// baseURL is the host part of the URLs sent through the socket.
const baseURL = "http://lxd/" + APIVersion

// retry500 is how long a 500 answer is retried (cloud-init: every 0.1 s
// for 3 s, working around an LXD bug).
const (
	retry500Every = 100 * time.Millisecond
	retry500Times = 30
)

// get fetches route ("meta-data", "config", "/1.0/config/x") and returns
// the status and body.
func get(ctx context.Context, c *http.Client, socket, route string) (int, []byte, error) {
	u := baseURL + "/" + route
	if strings.HasPrefix(route, "/") {
		u = "http://lxd" + route
	}
	for try := 1; ; try++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return 0, nil, fmt.Errorf("%s GET %s: %w", socket, u, err)
		}
		resp, err := c.Do(req)
		if err != nil {
			return 0, nil, fmt.Errorf("%s GET %s: %w", socket, strings.TrimPrefix(u, "http://lxd"), err)
		}
		b, err := io.ReadAll(io.LimitReader(resp.Body, datasource.MaxFileSize+1))
		resp.Body.Close()
		if err != nil {
			return 0, nil, fmt.Errorf("%s GET %s: %w", socket, strings.TrimPrefix(u, "http://lxd"), err)
		}
		if len(b) > datasource.MaxFileSize {
			return 0, nil, fmt.Errorf("%s GET %s: larger than %d bytes", socket, strings.TrimPrefix(u, "http://lxd"), datasource.MaxFileSize)
		}
		if resp.StatusCode != http.StatusInternalServerError || try >= retry500Times {
			return resp.StatusCode, b, nil
		}
		select {
		case <-ctx.Done():
			return 0, nil, fmt.Errorf("%s GET %s: HTTP 500, retrying: %w", socket, strings.TrimPrefix(u, "http://lxd"), ctx.Err())
		case <-time.After(retry500Every):
		}
	}
}

// read asks the socket what cloud-init's read_metadata asks: meta-data
// (required), config and every config key it lists (those that do not
// answer 2xx are skipped), and devices (optional).
func read(ctx context.Context, socket string) (Input, error) {
	in := Input{Socket: socket, Config: map[string]string{}}
	c := client(socket)
	defer c.CloseIdleConnections()
	code, b, err := get(ctx, c, socket, "meta-data")
	if err != nil {
		return in, err
	}
	if code/100 != 2 {
		return in, fmt.Errorf("%s GET /%s/meta-data: HTTP %d: %s", socket, APIVersion, code, snippet(b))
	}
	in.MetaData = b
	code, b, err = get(ctx, c, socket, "config")
	if err != nil {
		return in, err
	}
	if code/100 != 2 {
		return in, fmt.Errorf("%s GET /%s/config: HTTP %d: %s", socket, APIVersion, code, snippet(b))
	}
	var routes []string
	if err := json.Unmarshal(b, &routes); err != nil {
		return in, fmt.Errorf("%s GET /%s/config: expected a JSON list of strings: %w", socket, APIVersion, err)
	}
	for _, r := range routes {
		key := r[strings.LastIndex(r, "/")+1:]
		if key == "" {
			continue
		}
		code, b, err := get(ctx, c, socket, "config/"+key)
		if err != nil {
			return in, err
		}
		if code/100 != 2 {
			continue
		}
		in.Config[key] = string(b)
	}
	code, b, err = get(ctx, c, socket, "devices")
	if err != nil {
		return in, err
	}
	if code/100 == 2 {
		var devs map[string]any
		if err := json.Unmarshal(b, &devs); err != nil {
			return in, fmt.Errorf("%s GET /%s/devices: expected a JSON object: %w", socket, APIVersion, err)
		}
		if len(devs) > 0 {
			in.Devices = devs
		}
	}
	return in, nil
}

func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
