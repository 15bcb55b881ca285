package azure

import (
	"cmp"
	"context"
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/imds"
)

const goalState = `<?xml version="1.0" encoding="utf-8"?>
<GoalState xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:noNamespaceSchemaLocation="goalstate10.xsd">
  <Version>2012-11-30</Version>
  <Incarnation>7</Incarnation>
  <Machine><ExpectedState>Started</ExpectedState></Machine>
  <Container>
    <ContainerId>c3a1e2d4-0000-4a5b-9c8d-7e6f5a4b3c2d</ContainerId>
    <RoleInstanceList>
      <RoleInstance>
        <InstanceId>a1b2&amp;c3.roleinstance._cr-vm1</InstanceId>
        <State>Started</State>
        <Configuration><Certificates>http://wire/certs</Certificates></Configuration>
      </RoleInstance>
    </RoleInstanceList>
  </Container>
</GoalState>`

// wireserver is a fake wireserver: the goal state, and health reports
// recorded. fail[path] answers that many requests with status before
// answering right, or (hang[path]) not answering at all.
type wireserver struct {
	t      *testing.T
	srv    *httptest.Server
	mu     sync.Mutex
	fail   map[string]int
	hang   map[string]bool
	status int
	gs     string
	health [][]byte
	gets   int
}

func newWireserver(t *testing.T) *wireserver {
	w := &wireserver{t: t, fail: map[string]int{}, hang: map[string]bool{}, status: http.StatusServiceUnavailable, gs: goalState}
	w.srv = httptest.NewServer(http.HandlerFunc(w.serve))
	t.Cleanup(w.srv.Close)
	return w
}

func (w *wireserver) serve(rw http.ResponseWriter, r *http.Request) {
	if r.Header.Get(VersionHeader) != WireserverVersion || r.Header.Get(AgentHeader) != AgentName {
		w.t.Errorf("%s %s: headers %v", r.Method, r.URL, r.Header)
	}
	key := r.Method + " " + r.URL.RequestURI()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fail[key] > 0 {
		w.fail[key]--
		http.Error(rw, "busy", w.status)
		return
	}
	if w.hang[key] {
		w.mu.Unlock()
		<-r.Context().Done()
		w.mu.Lock()
		return
	}
	switch key {
	case "GET " + GoalStatePath:
		w.gets++
		io.WriteString(rw, w.gs)
	case "POST " + HealthPath:
		if ct := r.Header.Get("Content-Type"); ct != "text/xml; charset=utf-8" {
			w.t.Errorf("health report Content-Type %q", ct)
		}
		b, _ := io.ReadAll(r.Body)
		w.health = append(w.health, b)
	default:
		w.t.Errorf("unexpected %s", key)
		http.NotFound(rw, r)
	}
}

func wireEnv(url string) datasource.Env {
	return datasource.Env{NetworkUp: true, DMI: onAzure, Budget: 5 * time.Second,
		Config: map[string]any{"Azure": map[string]any{"wireserver_address": url}}}
}

var azureData = &datasource.Data{Name: "Azure"}

// health is the parsed health report.
type health struct {
	Incarnation string `xml:"GoalStateIncarnation"`
	Container   string `xml:"Container>ContainerId"`
	Instance    string `xml:"Container>RoleInstanceList>Role>InstanceId"`
	State       string `xml:"Container>RoleInstanceList>Role>Health>State"`
	Substatus   string `xml:"Container>RoleInstanceList>Role>Health>Details>SubStatus"`
	Description string `xml:"Container>RoleInstanceList>Role>Health>Details>Description"`
}

func parseHealth(t *testing.T, b []byte) health {
	t.Helper()
	var h health
	if err := xml.Unmarshal(b, &h); err != nil {
		t.Fatalf("health report: %v\n%s", err, b)
	}
	return h
}

func TestReportReady(t *testing.T) {
	w := newWireserver(t)
	s := &Source{RetryDelay: 10 * time.Millisecond}
	if err := s.ReportReady(context.Background(), wireEnv(w.srv.URL), azureData); err != nil {
		t.Fatal(err)
	}
	if len(w.health) != 1 {
		t.Fatalf("%d health reports", len(w.health))
	}
	got := parseHealth(t, w.health[0])
	want := health{Incarnation: "7", Container: "c3a1e2d4-0000-4a5b-9c8d-7e6f5a4b3c2d", Instance: "a1b2&c3.roleinstance._cr-vm1", State: "Ready"}
	if got != want {
		t.Errorf("health report %+v, want %+v\n%s", got, want, w.health[0])
	}
	if !strings.HasPrefix(string(w.health[0]), `<?xml version="1.0" encoding="utf-8"?>`+"\n<Health ") {
		t.Errorf("health report:\n%s", w.health[0])
	}
}

func TestReportRetries(t *testing.T) {
	w := newWireserver(t)
	w.fail["GET "+GoalStatePath] = 2
	w.fail["POST "+HealthPath] = 1
	w.status = http.StatusInternalServerError
	s := &Source{RetryDelay: 10 * time.Millisecond}
	if err := s.ReportReady(context.Background(), wireEnv(w.srv.URL), azureData); err != nil {
		t.Fatal(err)
	}
	if w.gets != 1 || len(w.health) != 1 || w.fail["GET "+GoalStatePath] != 0 || w.fail["POST "+HealthPath] != 0 {
		t.Errorf("gets %d, reports %d, fail left %v", w.gets, len(w.health), w.fail)
	}
}

func TestReportFailures(t *testing.T) {
	// budgets replace 300ms where the first answer must arrive before the
	// budget ends, even on a loaded machine.
	budgets := map[string]time.Duration{"goal state 500 then no answer": 3 * time.Second}
	for _, tc := range []struct {
		name  string
		setup func(w *wireserver)
		want  []string
	}{
		{"goal state always 500", func(w *wireserver) {
			w.fail["GET "+GoalStatePath] = 1 << 20
			w.status = 500
		}, []string{"fetching the goal state", "status 500", GoalStatePath, "gave up after"}},
		// The budget cuts the last attempt short: the error still says
		// what the server answered before.
		{"goal state 500 then no answer", func(w *wireserver) {
			w.fail["GET "+GoalStatePath] = 1
			w.hang["GET "+GoalStatePath] = true
			w.status = 500
		}, []string{"fetching the goal state", "status 500", GoalStatePath, "gave up after"}},
		{"goal state 404 until the end", func(w *wireserver) {
			w.fail["GET "+GoalStatePath] = 1 << 20
			w.status = http.StatusNotFound
		}, []string{"fetching the goal state", "status 404", "gave up after"}},
		{"health refused", func(w *wireserver) {
			w.fail["POST "+HealthPath] = 1 << 20
			w.status = http.StatusForbidden
		}, []string{"reporting Ready", "status 403", HealthPath}},
		{"goal state without instance", func(w *wireserver) {
			w.gs = strings.Replace(goalState, "<InstanceId>a1b2&amp;c3.roleinstance._cr-vm1</InstanceId>", "", 1)
		}, []string{"missing instance_id in GoalState XML"}},
		{"goal state not XML", func(w *wireserver) { w.gs = "<html" }, []string{"XML syntax error"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWireserver(t)
			tc.setup(w)
			e := wireEnv(w.srv.URL)
			e.Budget = cmp.Or(budgets[tc.name], 300*time.Millisecond)
			start := time.Now()
			err := (&Source{RetryDelay: 20 * time.Millisecond}).ReportReady(context.Background(), e, azureData)
			if err == nil {
				t.Fatal("no error")
			}
			t.Log(err)
			for _, s := range tc.want {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("err = %v, want it to contain %q", err, s)
				}
			}
			if el := time.Since(start); el > 5*time.Second {
				t.Errorf("took %v", el)
			}
		})
	}
}

func TestReportAbsentWireserver(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	e := wireEnv(url)
	e.Budget = 200 * time.Millisecond
	err := (&Source{RetryDelay: 20 * time.Millisecond}).ReportReady(context.Background(), e, azureData)
	if err == nil || !strings.Contains(err.Error(), url) {
		t.Fatalf("err = %v", err)
	}
}

func TestReportPreconditions(t *testing.T) {
	s := &Source{}
	e := wireEnv("http://127.0.0.1:9")
	e.NetworkUp = false
	if err := s.ReportReady(context.Background(), e, azureData); !errors.Is(err, datasource.ErrNeedNetwork) {
		t.Errorf("network down: %v", err)
	}
	if err := s.ReportReady(context.Background(), wireEnv("http://127.0.0.1:9"), &datasource.Data{Name: "Ec2"}); err == nil {
		t.Error("no error for another source's data")
	}
	// Off Azure, the default (or leased) wireserver is never contacted.
	off := datasource.Env{NetworkUp: true, Lease: &datasource.Lease{Options: map[uint8][]byte{WireserverOption: {127, 0, 0, 1}}}}
	if err := s.ReportReady(context.Background(), off, azureData); !errors.Is(err, ErrNotOnAzure) {
		t.Errorf("off Azure: %v", err)
	}
	// ...but a configured one is (a QEMU test's simulator).
	w := newWireserver(t)
	off.Config = map[string]any{"Azure": map[string]any{"wireserver_address": w.srv.URL}}
	if err := s.ReportReady(context.Background(), off, azureData); err != nil || len(w.health) != 1 {
		t.Errorf("configured wireserver off Azure: %v, %d reports", err, len(w.health))
	}
}

func TestReportFailure(t *testing.T) {
	w := newWireserver(t)
	desc := strings.Repeat("<bad> & ", 100)
	if err := (&Source{}).ReportFailure(context.Background(), wireEnv(w.srv.URL), desc); err != nil {
		t.Fatal(err)
	}
	h := parseHealth(t, w.health[0])
	if h.State != HealthNotReady || h.Substatus != SubstatusProvisionFailed || h.Description != desc[:maxDescription] {
		t.Errorf("%+v", h)
	}
}

func TestWireserverURL(t *testing.T) {
	lease := &datasource.Lease{Options: map[uint8][]byte{WireserverOption: {10, 1, 2, 3}}}
	for _, tc := range []struct {
		name string
		s    Source
		env  datasource.Env
		want string
	}{
		{"default", Source{}, datasource.Env{}, "http://" + DefaultWireserver},
		{"lease", Source{}, datasource.Env{Lease: lease}, "http://10.1.2.3"},
		{"bad option", Source{}, datasource.Env{Lease: &datasource.Lease{Options: map[uint8][]byte{245: {1, 2}}}}, "http://" + DefaultWireserver},
		{"field beats lease", Source{Wireserver: "127.0.0.1:8080"}, datasource.Env{Lease: lease}, "http://127.0.0.1:8080"},
		{"config beats all", Source{Wireserver: "x"}, datasource.Env{Lease: lease, Config: map[string]any{"azure": map[string]any{"wireserver_address": "http://127.0.0.1:1/"}}}, "http://127.0.0.1:1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.s.WireserverURL(tc.env); got != tc.want {
				t.Errorf("WireserverURL = %q, want %q", got, tc.want)
			}
		})
	}
	if a := netip.MustParseAddr(DefaultWireserver); !a.Is4() {
		t.Error("DefaultWireserver is not IPv4")
	}
}

func FuzzParseGoalState(f *testing.F) {
	f.Add([]byte(goalState))
	f.Add([]byte(`<GoalState><Incarnation/><Container><ContainerId/></Container></GoalState>`))
	f.Fuzz(func(t *testing.T, b []byte) {
		gs, err := ParseGoalState(b)
		if err != nil {
			return
		}
		h := HealthReport(gs, HealthReady, SubstatusProvisionFailed, string(b))
		var v health
		if err := xml.Unmarshal(h, &v); err != nil {
			t.Fatalf("health report does not parse: %v\n%s", err, h)
		}
		if v.Incarnation != gs.Incarnation || v.Instance != gs.InstanceID || v.Container != gs.ContainerID {
			t.Fatalf("goal state %+v came back as %+v", gs, v)
		}
	})
}

// TestReportFollowsPolicy: under the boot's Policy the report is bounded
// by its Deadline, not Env.Budget (which the initramfs keeps short for
// local sources): a wireserver that needs retries is reported to; one
// that hangs ends at the Deadline, and at the caller's context when that
// ends first.
func TestReportFollowsPolicy(t *testing.T) {
	short := 50 * time.Millisecond // shorter than the retries below take
	t.Run("busy wireserver reported to", func(t *testing.T) {
		w := newWireserver(t)
		w.fail["GET "+GoalStatePath] = 3
		w.status = http.StatusServiceUnavailable
		e := wireEnv(w.srv.URL)
		e.Budget = short
		e.Policy = &imds.Policy{Deadline: time.Minute}
		if err := (&Source{RetryDelay: 100 * time.Millisecond}).ReportReady(context.Background(), e, azureData); err != nil {
			t.Fatal(err)
		}
		if len(w.health) != 1 || parseHealth(t, w.health[0]).State != HealthReady {
			t.Fatalf("health reports %q", w.health)
		}
	})
	t.Run("busy wireserver without policy cut by the budget", func(t *testing.T) {
		w := newWireserver(t)
		w.fail["GET "+GoalStatePath] = 3
		w.status = http.StatusServiceUnavailable
		e := wireEnv(w.srv.URL)
		e.Budget = short
		err := (&Source{RetryDelay: 100 * time.Millisecond}).ReportReady(context.Background(), e, azureData)
		if !errors.Is(err, imds.ErrBudget) {
			t.Fatalf("err = %v, want ErrBudget", err)
		}
	})
	for _, tc := range []struct {
		name     string
		deadline time.Duration
		ctx      func() (context.Context, context.CancelFunc)
		want     error
	}{
		{"hang: policy deadline", 300 * time.Millisecond, func() (context.Context, context.CancelFunc) {
			return context.WithCancel(context.Background())
		}, imds.ErrBudget},
		{"hang: search deadline", time.Hour, func() (context.Context, context.CancelFunc) {
			return context.WithTimeoutCause(context.Background(), 300*time.Millisecond, imds.ErrDeadline)
		}, context.DeadlineExceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWireserver(t)
			w.hang["GET "+GoalStatePath] = true
			e := wireEnv(w.srv.URL)
			e.Budget = time.Hour
			e.Policy = &imds.Policy{Deadline: tc.deadline}
			ctx, cancel := tc.ctx()
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- (&Source{RetryDelay: 20 * time.Millisecond}).ReportReady(ctx, e, azureData) }()
			select {
			case err := <-done:
				if !errors.Is(err, tc.want) {
					t.Fatalf("err = %v, want %v", err, tc.want)
				}
				t.Log(err)
			case <-time.After(30 * time.Second):
				t.Fatal("ReportReady did not end with the deadline")
			}
			if len(w.health) != 0 {
				t.Errorf("health reported without a goal state: %q", w.health)
			}
		})
	}
}
