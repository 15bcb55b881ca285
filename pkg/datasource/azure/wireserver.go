package azure

// Reporting to Azure's fabric through the wireserver (cloud-init's
// helpers/azure.py WALinuxAgentShim and GoalStateHealthReporter): fetch
// the goal state, then POST a health report naming its incarnation,
// container and role instance.

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/netip"
	"strings"
	"syscall"
	"time"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/imds"
)

// DefaultWireserver is the wireserver's address when DHCP option 245 does
// not give one.
const DefaultWireserver = "168.63.129.16"

// WireserverOption is the DHCP option carrying the wireserver's address.
const WireserverOption = 245

// Wireserver protocol constants.
const (
	WireserverVersion = "2012-11-30"
	AgentName         = "WALinuxAgent"
	VersionHeader     = "x-ms-version"
	AgentHeader       = "x-ms-agent-name"
	GoalStatePath     = "/machine/?comp=goalstate"
	HealthPath        = "/machine?comp=health"
)

// Health states and the failure substatus.
const (
	HealthReady              = "Ready"
	HealthNotReady           = "NotReady"
	SubstatusProvisionFailed = "ProvisioningFailed"
	// maxDescription is how much of a failure description is sent.
	maxDescription = 512
)

// DefaultReportBudget bounds ReportReady (goal state and health report
// together) when neither Env.Policy nor Env.Budget does; cloud-init
// retries each request for up to 20 minutes.
const DefaultReportBudget = 2 * time.Minute

// DefaultWireserverRetry is the pause between attempts (cloud-init: 5 s).
const DefaultWireserverRetry = 5 * time.Second

// maxWireserverBody bounds a goal state.
const maxWireserverBody = 1 << 20

// GoalState is what report-ready needs from the goal state.
type GoalState struct {
	Incarnation string
	ContainerID string
	InstanceID  string
}

// ParseGoalState reads the goal state XML: ./Incarnation,
// ./Container/ContainerId and
// ./Container/RoleInstanceList/RoleInstance/InstanceId, all required.
func ParseGoalState(b []byte) (*GoalState, error) {
	root, err := parseXML(b)
	if err != nil {
		return nil, err
	}
	first := func(e *element, names ...string) *element {
		for _, n := range names {
			var next *element
			for _, k := range e.kids {
				if k.name.Local == n {
					next = k
					break
				}
			}
			if next == nil {
				return nil
			}
			e = next
		}
		return e
	}
	gs := &GoalState{}
	for _, f := range []struct {
		dst  *string
		name string
		path []string
	}{
		{&gs.ContainerID, "container_id", []string{"Container", "ContainerId"}},
		{&gs.InstanceID, "instance_id", []string{"Container", "RoleInstanceList", "RoleInstance", "InstanceId"}},
		{&gs.Incarnation, "incarnation", []string{"Incarnation"}},
	} {
		e := first(root, f.path...)
		if e == nil {
			return nil, fmt.Errorf("missing %s in GoalState XML", f.name)
		}
		*f.dst = e.text.String()
	}
	return gs, nil
}

// HealthReport is the health document for a goal state: Ready, or
// NotReady with the ProvisioningFailed substatus and a description (cut
// at 512 characters).
func HealthReport(gs *GoalState, state, substatus, description string) []byte {
	esc := func(s string) string {
		var b bytes.Buffer
		_ = xml.EscapeText(&b, []byte(s))
		return b.String()
	}
	detail := ""
	if substatus != "" {
		if r := []rune(description); len(r) > maxDescription {
			description = string(r[:maxDescription])
		}
		detail = fmt.Sprintf(`<Details>
  <SubStatus>%s</SubStatus>
  <Description>%s</Description>
</Details>
`, esc(substatus), esc(description))
	}
	return fmt.Appendf(nil, `<?xml version="1.0" encoding="utf-8"?>
<Health xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
 xmlns:xsd="http://www.w3.org/2001/XMLSchema">
  <GoalStateIncarnation>%s</GoalStateIncarnation>
  <Container>
    <ContainerId>%s</ContainerId>
    <RoleInstanceList>
      <Role>
        <InstanceId>%s</InstanceId>
        <Health>
          <State>%s</State>
          %s
        </Health>
      </Role>
    </RoleInstanceList>
  </Container>
</Health>
`, esc(gs.Incarnation), esc(gs.ContainerID), esc(gs.InstanceID), esc(state), detail)
}

// ErrNotOnAzure is returned by ReportReady and ReportFailure off Azure
// (no Azure chassis asset tag) when no wireserver address is configured:
// the default address is never contacted elsewhere.
var ErrNotOnAzure = errors.New("not on Azure and no wireserver_address configured: not reporting")

// configuredWireserver is the `wireserver_address` configuration, else
// Source.Wireserver.
func (s *Source) configuredWireserver(env datasource.Env) string {
	if addr, _ := env.SourceConfig(s.Name())["wireserver_address"].(string); addr != "" {
		return addr
	}
	return s.Wireserver
}

// WireserverURL is the wireserver's base URL: the `wireserver_address`
// configuration (a host, host:port or http:// URL), else
// Source.Wireserver, else the address in the lease's option 245, else
// DefaultWireserver.
func (s *Source) WireserverURL(env datasource.Env) string {
	addr := s.configuredWireserver(env)
	if addr == "" && env.Lease != nil {
		if b := env.Lease.Options[WireserverOption]; len(b) == 4 {
			addr = netip.AddrFrom4([4]byte(b)).String()
		} else if len(b) > 0 {
			env.Logger(s.Name()).Warn("ignoring DHCP option 245 that is not an IPv4 address", "bytes", len(b))
		}
	}
	if addr == "" {
		addr = DefaultWireserver
	}
	if !strings.Contains(addr, "://") {
		addr = "http://" + addr
	}
	return strings.TrimRight(addr, "/")
}

// ReportReady tells Azure's fabric that the VM is provisioned: it fetches
// the goal state from the wireserver and posts a Ready health report for
// it (cloud-init does this once per new instance, at the end of its
// crawl, with the ephemeral network up). d must be this source's Data.
//
// Call it with the Env Get succeeded with (NetworkUp, HTTP and Lease of
// the network still up), on the first boot of an instance only. Off Azure
// (no chassis asset tag) it only reports to a configured
// `wireserver_address`, else fails with ErrNotOnAzure. The requests go
// through pkg/imds; each is retried on transport errors (but an
// unreachable network), 404/408/410/429 and 5xx, every Source.RetryDelay
// (DefaultWireserverRetry), each bounded by cloud-init's 60 s, all within
// Env.Bound: under the boot's Policy its Deadline (and what the caller's
// context, the search's, has left), else Env.Budget, else
// DefaultReportBudget. A failure is returned for the caller to log: it is
// not fatal to the boot.
func (s *Source) ReportReady(ctx context.Context, env datasource.Env, d *datasource.Data) error {
	if d == nil || d.Name != s.Name() {
		return errors.New("azure: report ready: the data is not from the Azure datasource")
	}
	return s.report(ctx, env, HealthReady, "", "")
}

// ReportFailure reports provisioning failed (NotReady, ProvisioningFailed,
// with description) to the fabric, as cloud-init's report_failure_to_fabric
// does when its crawl fails on Azure.
func (s *Source) ReportFailure(ctx context.Context, env datasource.Env, description string) error {
	return s.report(ctx, env, HealthNotReady, SubstatusProvisionFailed, description)
}

func (s *Source) report(ctx context.Context, env datasource.Env, state, substatus, description string) error {
	if !env.NetworkUp {
		return fmt.Errorf("azure: report %s: %w", state, datasource.ErrNeedNetwork)
	}
	if !OnAzure(env.DMI) && s.configuredWireserver(env) == "" {
		return fmt.Errorf("azure: report %s: %w", state, ErrNotOnAzure)
	}
	log := env.Logger(s.Name())
	b := env.Bound(DefaultReportBudget)
	start := time.Now()
	base := s.WireserverURL(env)
	c := s.wireClient(env.HTTP, base, b, log)
	defer c.CloseIdleConnections()
	ctx, cancel := c.WithBudget(ctx)
	defer cancel()
	body, err := c.Get(ctx, GoalStatePath)
	if err != nil {
		return wireError("fetching the goal state", b, err)
	}
	gs, err := ParseGoalState(body)
	if err != nil {
		return fmt.Errorf("azure: goal state from %s: %w", base+GoalStatePath, err)
	}
	log.Debug("goal state", "url", base+GoalStatePath, "container", gs.ContainerID, "instance", gs.InstanceID, "incarnation", gs.Incarnation)
	doc := HealthReport(gs, state, substatus, description)
	if _, err := c.Do(ctx, imds.Request{Method: http.MethodPost, Path: HealthPath, Body: doc,
		Header: http.Header{"Content-Type": {"text/xml; charset=utf-8"}}}); err != nil {
		return wireError("reporting "+state, b, err)
	}
	log.Info("reported to the Azure fabric", "state", state, "url", base+HealthPath, "duration", time.Since(start))
	return nil
}

// wireTimeout bounds one wireserver request (cloud-init: 60 s).
const wireTimeout = 60 * time.Second

// wireClient is the metadata client for the wireserver at base, with
// cloud-init's headers and retries: transport failures (but an
// unreachable network) and 404, 408, 410, 429 and 5xx answers are retried
// every RetryDelay, within budget for the whole report.
func (s *Source) wireClient(hc *http.Client, base string, budget time.Duration, log *slog.Logger) *imds.Client {
	delay := s.RetryDelay
	if delay <= 0 {
		delay = DefaultWireserverRetry
	}
	h := http.Header{}
	h.Set(AgentHeader, AgentName)
	h.Set(VersionHeader, WireserverVersion)
	return &imds.Client{
		BaseURLs: []string{base},
		HTTP:     hc,
		Timeout:  wireTimeout,
		Budget:   budget,
		// A fixed pause between attempts: no jitter.
		Backoff:  imds.Backoff{Initial: delay, Max: delay, Jitter: math.SmallestNonzeroFloat64},
		MaxBytes: maxWireserverBody,
		Headers:  h,
		Retry:    wireRetry,
		Logger:   log,
	}
}

// wireRetry is the wireserver's retry rule (cloud-init's
// http_with_retries).
func wireRetry(e *imds.Error) bool {
	switch s := e.Status; {
	case s == 0:
		return !errors.Is(e.Err, syscall.ENETUNREACH)
	case s >= 500, s == http.StatusNotFound, s == http.StatusGone, s == http.StatusTooManyRequests, s == http.StatusRequestTimeout:
		return true
	}
	return false
}

// wireError says what failed, and that the budget ended it when it did;
// err keeps the server's last answer (status 500, attempt n) even when
// the budget cut a later attempt short.
func wireError(what string, budget time.Duration, err error) error {
	if errors.Is(err, imds.ErrBudget) {
		return fmt.Errorf("azure: %s: gave up after the %s budget: %w", what, budget, err)
	}
	return fmt.Errorf("azure: %s: %w", what, err)
}

var _ datasource.Reporter = (*Source)(nil)
