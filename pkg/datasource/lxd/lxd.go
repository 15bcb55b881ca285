// Package lxd is cloud-init's LXD datasource: the devlxd API LXD serves
// to each container and VM over the unix socket /dev/lxd/sock (when
// security.devlxd is on).
//
// Contract (DataSourceLXD):
//   - Local: HTTP over the unix socket only (pkg/imds with UnixSocket),
//     never over a network; bounded by Env.Budget (default DefaultBudget).
//   - Present when the socket path (Source.SocketPath, else the
//     `socket_path` of the LXD datasource configuration, else
//     DefaultSocket) is a socket; anything else is ErrNotFound.
//   - Reads GET /1.0/meta-data (required, YAML mapping), GET /1.0/config
//     (a JSON list of routes) and each listed config key (those not
//     answering 2xx are skipped), GET /1.0/devices (optional). A 500 is
//     retried every 0.1 s for up to 3 s, as cloud-init does.
//   - Data: meta-data as given; user-data, vendor-data and network-config
//     (YAML mapping) from cloud-init.* config keys, else user.*. ds holds
//     _metadata_api_version, the other config keys and devices. Name
//     "LXD", platform and cloud_name "lxd", mode net, subplatform
//     "LXD socket API v. 1.0 (/dev/lxd/sock)".
//   - A socket that does not answer, or answers meta-data with an error
//     or invalid YAML, is an error naming the socket and route.
package lxd

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/cloudroot/cloudroot/pkg/datasource"
)

// DefaultSocket is where LXD puts the devlxd socket.
const DefaultSocket = "/dev/lxd/sock"

// DefaultBudget bounds one Get when Env.Budget is 0.
const DefaultBudget = 10 * time.Second

// Source is the LXD datasource.
type Source struct {
	// SocketPath is the devlxd socket; "" means the configured
	// socket_path, else DefaultSocket.
	SocketPath string
}

var _ datasource.Source = (*Source)(nil)

// Name implements datasource.Source.
func (*Source) Name() string { return "LXD" }

// Doc implements datasource.Documented.
func (*Source) Doc() datasource.Doc {
	return datasource.Doc{
		Reads:         "devlxd API over the unix socket `" + DefaultSocket + "` (configurable `socket_path`): `GET /1.0/meta-data`, `/1.0/config` and each listed key (`cloud-init.*` over `user.*` user-data, vendor-data, network-config), `/1.0/devices`",
		NetworkConfig: "`cloud-init.network-config` (else `user.network-config`) config key; else fallback",
		Tests:         "golden socket trees served by an httptest server on a unix socket (full, minimal); socket absent or not a socket; 500 retry; broken meta-data; fuzzed parser",
	}
}

// Socket is the socket path Get uses.
func (s *Source) Socket(env datasource.Env) string {
	if s.SocketPath != "" {
		return s.SocketPath
	}
	if p, ok := env.SourceConfig(s.Name())["socket_path"].(string); ok && p != "" {
		return p
	}
	return DefaultSocket
}

// Get implements datasource.Source.
func (s *Source) Get(ctx context.Context, env datasource.Env) (*datasource.Data, error) {
	log := env.Logger(s.Name())
	sock := s.Socket(env)
	fi, err := os.Lstat(sock)
	if err != nil {
		return nil, fmt.Errorf("lxd: no devlxd socket: %v: %w", err, datasource.ErrNotFound)
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return nil, fmt.Errorf("lxd: %s is not a socket (%s): %w", sock, fi.Mode().Type(), datasource.ErrNotFound)
	}
	ctx, cancel := env.WithBudget(ctx, DefaultBudget)
	defer cancel()
	start := time.Now()
	in, err := read(ctx, sock, log)
	if err != nil {
		return nil, fmt.Errorf("lxd: %w", err)
	}
	d, err := Parse(in)
	if err != nil {
		return nil, fmt.Errorf("lxd: %w", err)
	}
	log.Info("found", "socket", sock, "duration", time.Since(start))
	return d, nil
}
