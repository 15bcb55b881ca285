package dstest

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/cloudroot/cloudroot/pkg/datasource"
)

// MaxGet bounds each Get of NotFound: far beyond the budgets the cases
// set, far below the minute Hang holds a request.
const MaxGet = 10 * time.Second

// SlowBudget is the budget of NetworkCases' "slow" case.
const SlowBudget = 300 * time.Millisecond

// NotFoundCase is a Get that must fail with an error wrapping Want.
type NotFoundCase struct {
	Name string
	Env  datasource.Env
	Want error
	// Quiet, when not nil, is a server the Get must not ask anything
	// (the network is down, the platform is not the source's).
	Quiet *Server
}

// NotFound runs each case's Get on src in a subtest: the error wraps
// Want, the Get returns within MaxGet, and Quiet sees no request.
func NotFound(t *testing.T, src datasource.Source, cases []NotFoundCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			before := 0
			if tc.Quiet != nil {
				before = len(tc.Quiet.Requests())
			}
			start := time.Now()
			_, err := src.Get(context.Background(), tc.Env)
			el := time.Since(start)
			if tc.Quiet != nil {
				if n := len(tc.Quiet.Requests()) - before; n != 0 {
					t.Errorf("%d requests made", n)
				}
			}
			if !errors.Is(err, tc.Want) {
				t.Fatalf("err = %v, want %v", err, tc.Want)
			}
			if el > MaxGet {
				t.Errorf("took %v", el)
			}
		})
	}
}

// Network is a network source's metadata service, for NetworkCases.
type Network struct {
	// Env is the source's Env, the network up, for a service at base (a
	// server's URL).
	Env func(base string) datasource.Env
	// Up is a service that answers; with the network down it must not be
	// asked.
	Up *Server
	// AbsentBudget, when not 0, is the "absent" case's budget (for a
	// source that retries refused connections until the budget ends).
	AbsentBudget time.Duration
	// Hook, when not nil, is the protocol the "404" service speaks (the
	// headers of its replies, the checks of requests), as Metadata.Hook.
	Hook func(w http.ResponseWriter, r *http.Request) bool
}

// NetworkCases are the negative cases every network source shares, for
// NotFound:
//   - "network down": Env(Up.URL) without NetworkUp is ErrNeedNetwork, and
//     Up is not asked;
//   - "absent": connections are refused: ErrNotFound;
//   - "404": a service that has nothing (every path 404): ErrNotFound;
//   - "slow": a service that never answers: ErrNotFound within
//     SlowBudget.
func NetworkCases(t testing.TB, n Network) []NotFoundCase {
	t.Helper()
	down := n.Env(n.Up.URL)
	down.NetworkUp = false
	absent := n.Env(ClosedURL(t))
	if n.AbsentBudget != 0 {
		absent.Budget = n.AbsentBudget
	}
	slow := n.Env(Serve(t, "", Hang).URL)
	slow.Budget = SlowBudget
	return []NotFoundCase{
		{Name: "network down", Env: down, Want: datasource.ErrNeedNetwork, Quiet: n.Up},
		{Name: "absent", Env: absent, Want: datasource.ErrNotFound},
		{Name: "404", Env: n.Env(Serve(t, "", n.Hook).URL), Want: datasource.ErrNotFound},
		{Name: "slow", Env: slow, Want: datasource.ErrNotFound},
	}
}
