// Package pwserver is the CloudStack-style password server that CloudStack
// and Exoscale run beside their metadata service: GET with
// `DomU_Request: send_my_password` returns the instance's new password
// ("" or "saved_password" when there is none), and a second GET with
// `DomU_Request: saved_password` tells the server it was stored.
package pwserver

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/datasource/internal/fetch"
)

// Protocol strings.
const (
	RequestHeader = "DomU_Request"
	SendPassword  = "send_my_password"
	SavedPassword = "saved_password"
)

// URL is the password server's URL: base's host on port, with path.
func URL(base string, port int, path string) (string, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", err
	}
	if u.Host == "" {
		return "", fmt.Errorf("metadata URL %q has no host", base)
	}
	u.Host = net.JoinHostPort(u.Hostname(), strconv.Itoa(port))
	u.Path, u.RawPath, u.RawQuery, u.Fragment = path, "", "", ""
	return u.String(), nil
}

// Port is `password_server_port` from a datasource's config, else
// override, else def.
func Port(cfg map[string]any, override, def int) int {
	var port int
	switch v := cfg["password_server_port"].(type) {
	case int:
		port = v
	case float64:
		port = int(v)
	case string:
		port, _ = strconv.Atoi(v)
	}
	if port <= 0 || port > 65535 {
		port = override
	}
	if port <= 0 || port > 65535 {
		port = def
	}
	return port
}

// Fetch asks the server at u for the instance's password and, when there
// is a new one, acknowledges it.
func Fetch(ctx context.Context, c *fetch.Client, u string) (string, error) {
	b, err := c.Do(ctx, http.MethodGet, u, http.Header{RequestHeader: {SendPassword}})
	if err != nil {
		return "", err
	}
	pw, ok := Parse(b)
	if !ok {
		return "", nil
	}
	if _, err := c.Do(ctx, http.MethodGet, u, http.Header{RequestHeader: {SavedPassword}}); err != nil {
		return "", fmt.Errorf("acknowledging the password: %w", err)
	}
	return pw, nil
}

// Parse is the server's reply: the password, or ok false when there is
// none ("" or "saved_password": already set).
func Parse(b []byte) (pw string, ok bool) {
	pw = strings.TrimSpace(string(b))
	if pw == "" || pw == SavedPassword {
		return "", false
	}
	return pw, true
}
