package aliyun

// Fetching: the token, the meta-data tree, user-data and vendor-data.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/ec2"
	"github.com/cloudroot/cloudroot/pkg/imds"
)

// connect gives c (pinned to one base URL) the security-enhanced mode's
// token hook and fetches the first token. A 4xx answer means normal mode:
// a session without token.
func connect(ctx context.Context, c *imds.Client) (*ec2.Session, error) {
	tok := &imds.EC2Token{Client: c, AllowV1: true, TokenPath: TokenPath, TTLHeader: TokenTTLHeader, TTL: tokenTTL}
	c.Token, c.TokenHeader = tok.Token, TokenHeader
	t, err := tok.Token(ctx)
	if err != nil {
		return nil, fmt.Errorf("token: %w", err)
	}
	return &ec2.Session{Client: c, Base: c.BaseURLs[0], IMDSv2: t != ""}, nil
}

// tokenTTL is TokenTTL as a duration.
const tokenTTL = 21600 * time.Second

// errAnswered marks a failure after the meta-data tree was served: the
// service is there.
var errAnswered = errors.New("after the meta-data tree")

// read races c's base URLs (imds.Race) for everything: the token, the
// meta-data tree, then user-data and vendor-data in parallel. A service
// that does not answer, or answers 404 for the tree, is ErrNotFound.
func read(ctx context.Context, c *imds.Client) (Input, error) {
	_, in, err := imds.Race(ctx, c, func(ctx context.Context, pc *imds.Client) (Input, error) {
		in := Input{URL: imds.Join(pc.BaseURLs[0], APIVersion+"/meta-data/"), Base: pc.BaseURLs[0]}
		s, err := connect(ctx, pc)
		if err != nil {
			return in, err
		}
		in.Token = s.IMDSv2
		if in.MetaData, err = s.Crawl(ctx, APIVersion+"/meta-data/"); err != nil {
			return in, err
		}
		ud, vd := APIVersion+"/user-data", APIVersion+"/vendor-data"
		res := pc.GetMany(ctx, []string{ud, vd})
		if in.UserData, err = datasource.Optional(res[ud]); err != nil {
			return in, fmt.Errorf("%w: %w", errAnswered, err)
		}
		if in.VendorData, err = datasource.Optional(res[vd]); err != nil {
			return in, fmt.Errorf("%w: %w", errAnswered, err)
		}
		if in.VendorData != nil && len(in.VendorData) == 0 {
			in.VendorData = nil
		}
		return in, nil
	})
	if err != nil {
		var re *imds.RaceError
		if errors.As(err, &re) && re.Every(func(err error) bool { return !errors.Is(err, errAnswered) && imds.Absent(err) }) {
			return in, fmt.Errorf("no metadata service (%w): %w", datasource.ErrNotFound, err)
		}
		return in, err
	}
	return in, nil
}
