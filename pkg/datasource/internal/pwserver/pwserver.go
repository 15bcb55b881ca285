// Package pwserver is the CloudStack-style password server that CloudStack
// and Exoscale run beside their metadata service: GET with
// `DomU_Request: send_my_password` returns the instance's new password
// ("" or "saved_password" when there is none, "bad_request" when the
// server refuses), and a second GET with `DomU_Request: saved_password`
// tells the server it was stored.
//
// Contract:
//   - Requests go through pkg/imds (Password takes the datasource's
//     metadata client for its transport, timeouts and logger). Each request
//     is tried Tries times (wget --tries 3 in cloud-init), bounded by the
//     context.
//   - The reply is trimmed; "bad_request" is an error (cloud-init raises),
//     never a password.
//   - The password is never logged and never part of an error.
package pwserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/imds"
)

// Protocol strings.
const (
	RequestHeader = "DomU_Request"
	SendPassword  = "send_my_password"
	SavedPassword = "saved_password"
	// BadRequest is the server's refusal.
	BadRequest = "bad_request"
)

// Tries is how many times each request is made at most.
const Tries = 3

// ErrBadRequest: the server answered bad_request.
var ErrBadRequest = errors.New("password server answered " + BadRequest)

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

// Password asks the server at u for the instance's password and, when
// there is a new one, acknowledges it. c is the datasource's metadata
// client: its transport, per-request timeout, size limit and logger are
// used (not its base URLs, headers or token); the context bounds the
// whole exchange.
func Password(ctx context.Context, c *imds.Client, u string) (string, error) {
	pc := &imds.Client{BaseURLs: []string{u}, Retries: Tries - 1, Budget: -1}
	if c != nil {
		pc.HTTP, pc.Timeout, pc.MaxBytes, pc.Backoff, pc.Logger = c.HTTP, c.Timeout, c.MaxBytes, c.Backoff, c.Logger
	}
	return ask(ctx, pc)
}

func ask(ctx context.Context, c *imds.Client) (string, error) {
	b, err := c.Do(ctx, imds.Request{Header: http.Header{RequestHeader: {SendPassword}}})
	if err != nil {
		return "", fmt.Errorf("asking for the password: %w", err)
	}
	if strings.TrimSpace(string(b)) == BadRequest {
		return "", fmt.Errorf("%s: %w", c.BaseURLs[0], ErrBadRequest)
	}
	pw, ok := Parse(b)
	if !ok {
		return "", nil
	}
	if _, err := c.Do(ctx, imds.Request{Header: http.Header{RequestHeader: {SavedPassword}}}); err != nil {
		return "", fmt.Errorf("acknowledging the password: %w", err)
	}
	return pw, nil
}

// Parse is the server's reply: the password, or ok false when there is
// none ("" or "saved_password": already set; "bad_request": refused).
func Parse(b []byte) (pw string, ok bool) {
	pw = strings.TrimSpace(string(b))
	if pw == "" || pw == SavedPassword || pw == BadRequest {
		return "", false
	}
	return pw, true
}
