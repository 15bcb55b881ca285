package lxd

// Reading the devlxd API over its unix socket.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"time"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/imds"
)

// baseURL names the devlxd API in the URLs sent through the socket.
const baseURL = "http://lxd"

// retry500 is how a 500 answer is retried (cloud-init: every 0.1 s for
// 3 s, working around an LXD bug). Nothing else is retried: the socket
// is local, and one that refuses is not coming back within the budget.
const (
	retry500Every = 100 * time.Millisecond
	retry500Times = 30
)

// client is the metadata client that reaches devlxd through socket; the
// context (Env.Budget) bounds every call.
func client(socket string, log *slog.Logger) *imds.Client {
	return &imds.Client{
		BaseURLs:   []string{baseURL},
		UnixSocket: socket,
		Budget:     -1,
		Timeout:    DefaultBudget,
		Retries:    retry500Times - 1,
		// A fixed delay: no jitter.
		Backoff:  imds.Backoff{Initial: retry500Every, Max: retry500Every, Jitter: math.SmallestNonzeroFloat64},
		Retry:    func(e *imds.Error) bool { return e.Status == 500 },
		MaxBytes: datasource.MaxFileSize,
		Logger:   log,
	}
}

// get fetches route ("meta-data", "config", "config/x") under /1.0 and
// returns the status and body of the answer, whatever its status; err is
// for no whole answer (none, one too large, a 2xx whose body broke off).
func get(ctx context.Context, c *imds.Client, socket, route string) (int, []byte, error) {
	b, err := c.Get(ctx, APIVersion+"/"+route)
	if err == nil {
		return 200, b, nil
	}
	var e *imds.Error
	if errors.As(err, &e) && e.Status != 0 && e.Status/100 != 2 && !errors.Is(err, imds.ErrTooLarge) {
		return e.Status, e.Body, nil
	}
	return 0, nil, fmt.Errorf("%s: %w", socket, err)
}

// read asks the socket what cloud-init's read_metadata asks: meta-data
// (required), config and every config key it lists (those that do not
// answer 2xx are skipped), and devices (optional).
func read(ctx context.Context, socket string, log *slog.Logger) (Input, error) {
	in := Input{Socket: socket, Config: map[string]string{}}
	c := client(socket, log)
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
