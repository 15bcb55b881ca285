package datasource

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cloudroot/cloudroot/pkg/imds"
)

// Patient: no answer is retried `absent` times, an answer worth retrying
// up to `read` times; a configured `retries` (or max_wait ≤ 0) is left
// alone.
func TestPatient(t *testing.T) {
	c := &imds.Client{Retries: 2}
	if !(Env{}).Patient("Ec2", c, 2, 5) || c.Retries != 5 || c.Retry == nil {
		t.Fatalf("not made patient: %+v", c)
	}
	for _, tc := range []struct {
		status, attempt int
		want            bool
	}{
		{0, 1, true}, {0, 2, true}, {0, 3, false},
		{503, 3, true}, {502, 5, true}, {429, 4, true},
		{403, 1, false}, {404, 1, false},
	} {
		if got := c.Retry(&imds.Error{Status: tc.status, Attempts: tc.attempt}); got != tc.want {
			t.Errorf("status %d attempt %d: retry %v, want %v", tc.status, tc.attempt, got, tc.want)
		}
	}
	cfg := Env{Config: map[string]any{"Ec2": map[string]any{"retries": 2}}}
	if c := (&imds.Client{Retries: 2}); cfg.Patient("Ec2", c, 2, 5) || c.Retries != 2 || c.Retry != nil {
		t.Errorf("configured retries overridden: %+v", c)
	}
	if c := (&imds.Client{Retries: -1}); (Env{}).Patient("Ec2", c, 2, 5) || c.Retries != -1 {
		t.Errorf("max_wait 0 (one try) overridden: %+v", c)
	}
}

// TestService: the start of a metadata-service Get: ErrNeedNetwork while
// the network is down, configuration errors prefixed with the tag, and a
// cancel that is never nil.
func TestService(t *testing.T) {
	def := IMDSDefaults{BaseURLs: []string{"http://127.0.0.1:1/"}, Budget: time.Second}
	_, cancel, _, err := Env{}.Service(context.Background(), "X", "x", def)
	cancel()
	if !errors.Is(err, ErrNeedNetwork) || !strings.HasPrefix(err.Error(), "x: ") {
		t.Errorf("network down: %v", err)
	}
	bad := Env{NetworkUp: true, Config: map[string]any{"X": map[string]any{"timeout": "soon"}}}
	_, cancel, _, err = bad.Service(context.Background(), "X", "x", def)
	cancel()
	if err == nil || !strings.HasPrefix(err.Error(), "x: ") || !strings.Contains(err.Error(), "timeout") {
		t.Errorf("bad timeout: %v", err)
	}
	ctx, cancel, c, err := Env{NetworkUp: true}.Service(context.Background(), "X", "x", def)
	defer cancel()
	if err != nil || c == nil {
		t.Fatal(err)
	}
	if _, ok := ctx.Deadline(); !ok {
		t.Error("no budget on the context")
	}
}
