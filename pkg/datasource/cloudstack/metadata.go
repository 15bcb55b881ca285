package cloudstack

// Fetching: the meta-data tree, user-data and the password server.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/ec2"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/fetch"
)

// read crawls the meta-data tree and fetches user-data. A router that
// does not answer (refused, timed out) or answers 404 for the tree is
// ErrNotFound.
func read(ctx context.Context, c *fetch.Client, base string) (Input, error) {
	s := &ec2.Session{Client: c, Base: base}
	in := Input{URL: fetch.Join(base, APIVersion, "meta-data/")}
	var err error
	in.MetaData, err = s.Crawl(ctx, APIVersion+"/meta-data/")
	if err != nil {
		if absent(err) || fetch.Status(err) == http.StatusNotFound {
			return in, fmt.Errorf("no virtual router metadata (%w): %w", datasource.ErrNotFound, err)
		}
		return in, err
	}
	if in.UserData, err = s.UserData(ctx, APIVersion); err != nil {
		return in, err
	}
	return in, nil
}

// PasswordURL is the password server's URL: base's host on port, path /
// (cloud-init's HTTPConnection(vr_addr, 8080) GET).
func PasswordURL(base string, port int) (string, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", err
	}
	if u.Host == "" {
		return "", fmt.Errorf("metadata URL %q has no host", base)
	}
	u.Host = net.JoinHostPort(u.Hostname(), strconv.Itoa(port))
	u.Path, u.RawPath, u.RawQuery, u.Fragment = "/", "", "", ""
	return u.String(), nil
}

// password asks the password server for the instance's password and, when
// there is a new one, tells it the password is saved.
func password(ctx context.Context, c *fetch.Client, u string) (string, error) {
	b, err := c.Do(ctx, http.MethodGet, u, http.Header{RequestHeader: {SendPassword}})
	if err != nil {
		return "", err
	}
	pw, ok := ParsePassword(b)
	if !ok {
		return "", nil
	}
	if _, err := c.Do(ctx, http.MethodGet, u, http.Header{RequestHeader: {SavedPassword}}); err != nil {
		return "", fmt.Errorf("acknowledging the password: %w", err)
	}
	return pw, nil
}

// ParsePassword is the password server's reply: the password, or ok false
// when there is none ("" or "saved_password": already set).
func ParsePassword(b []byte) (pw string, ok bool) {
	pw = strings.TrimSpace(string(b))
	if pw == "" || pw == SavedPassword {
		return "", false
	}
	return pw, true
}

// absent: nothing answered (a transport error or the budget ran out), as
// opposed to a service that answered badly.
func absent(err error) bool {
	if fetch.Status(err) != 0 {
		return false
	}
	var ue *url.Error
	return errors.As(err, &ue) || errors.Is(err, context.DeadlineExceeded)
}
