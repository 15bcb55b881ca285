package imdsserve

// Azure: the instance metadata service and the wireserver, on one
// address (a test points the datasource's metadata_url and
// wireserver_address at it).
//
//   - IMDS (/metadata/...): every request must carry Metadata: true and
//     no X-Forwarded-For (else 400), and an api-version the service knows
//     (Options.APIVersions, default AzureAPIVersions; else 400 naming the
//     newest versions), as IMDS answers. /metadata/instance is the tree's
//     metadata/instance file (the datasource's golden layout), a JSON
//     document; a path below it (/metadata/instance/compute/userData)
//     walks that document: a string leaf answers as text with
//     format=text, any other value as JSON. Other /metadata paths are
//     files of the tree.
//   - Wireserver (/machine...): requests must carry x-ms-version (else
//     400). GET /machine/?comp=goalstate answers the tree's
//     machine/goalstate file, else a goal state (incarnation 1, a fixed
//     container id, the role instance named after the instance document's
//     vmId). POST /machine?comp=health records the health report
//     (HealthReports) and logs its state.

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"slices"
	"strings"
	"time"
)

// CloudAzure is the --cloud value of the Azure simulator.
const CloudAzure = "azure"

// Azure's wire names.
const (
	AzureMetadataHeader = "Metadata"
	AzureVersionHeader  = "x-ms-version"
	// AzureContainerID is the container id of the generated goal state.
	AzureContainerID = "7e5f2a1c-0c0d-4e1f-9a2b-3c4d5e6f7a8b"
)

// AzureAPIVersions are the IMDS api-version values the simulator accepts
// unless Options.APIVersions says otherwise, oldest first.
var AzureAPIVersions = []string{
	"2017-03-01", "2017-04-02", "2017-08-01", "2017-10-01", "2017-12-01",
	"2018-02-01", "2018-04-02", "2018-10-01", "2019-02-01", "2019-03-11",
	"2019-04-30", "2019-06-01", "2019-06-04", "2019-08-01", "2019-08-15",
	"2019-11-01", "2020-06-01", "2020-07-15", "2020-09-01", "2020-10-01",
	"2020-12-01", "2021-01-01", "2021-02-01", "2021-03-01", "2021-05-01",
	"2021-08-01", "2021-10-01", "2021-11-01", "2021-11-15", "2021-12-13",
	"2023-07-01",
}

// maxHealthReport bounds a health report body.
const maxHealthReport = 1 << 20

// HealthReport is one health report POSTed to the wireserver.
type HealthReport struct {
	Time time.Time
	// State is Health/.../State (Ready, NotReady); Substatus and
	// Description the failure details when given.
	State, Substatus, Description string
	// Incarnation, ContainerID and InstanceID are what the report names.
	Incarnation, ContainerID, InstanceID string
	// Body is the document as sent.
	Body []byte
}

// HealthReports returns the health reports received so far (with
// PerClient, every client's, in no particular order across clients).
func (s *Server) HealthReports() []HealthReport {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := slices.Clone(s.health)
	for _, c := range s.children {
		if c != nil {
			c.mu.Lock()
			out = append(out, c.health...)
			c.mu.Unlock()
		}
	}
	return out
}

func jsonError(w http.ResponseWriter, code int, v map[string]any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write(b)
}

func (s *Server) serveAzure(w http.ResponseWriter, r *http.Request) {
	switch p := r.URL.Path; {
	case p == "/metadata" || strings.HasPrefix(p, "/metadata/"):
		s.serveAzureIMDS(w, r)
	case p == "/machine" || strings.HasPrefix(p, "/machine/"):
		s.serveWireserver(w, r)
	default:
		notFound(w)
	}
}

func (s *Server) apiVersions() []string {
	if len(s.opts.APIVersions) > 0 {
		return s.opts.APIVersions
	}
	return AzureAPIVersions
}

func (s *Server) serveAzureIMDS(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Server", "Microsoft-IIS/10.0")
	if !readOnly(w, r) {
		return
	}
	if r.Header.Get("X-Forwarded-For") != "" {
		jsonError(w, http.StatusBadRequest, map[string]any{"error": "Bad request. Request contains an X-Forwarded-For header"})
		return
	}
	if !strings.EqualFold(r.Header.Get(AzureMetadataHeader), "true") {
		jsonError(w, http.StatusBadRequest, map[string]any{"error": "Bad request. Required metadata header not specified"})
		return
	}
	q := r.URL.Query()
	versions := s.apiVersions()
	newest := versions[max(0, len(versions)-3):]
	switch v := q.Get("api-version"); {
	case v == "":
		jsonError(w, http.StatusBadRequest, map[string]any{"error": "Bad request. api-version was not specified in the request", "newest-versions": newest})
		return
	case !slices.Contains(versions, v):
		jsonError(w, http.StatusBadRequest, map[string]any{"error": "Bad request. api-version is invalid", "newest-versions": newest})
		return
	}
	segs, ok := segments(r.URL.Path)
	if !ok {
		jsonError(w, http.StatusNotFound, map[string]any{"error": "Not found"})
		return
	}
	if len(segs) >= 2 && segs[1] == "instance" {
		s.serveAzureInstance(w, segs[2:], q.Get("format") == "text")
		return
	}
	s.serveTree(w, r.URL.Path, segs)
}

// serveAzureInstance answers /metadata/instance[/key...] from the
// instance document.
func (s *Server) serveAzureInstance(w http.ResponseWriter, keys []string, asText bool) {
	b, err := fs.ReadFile(s.fsys, "metadata/instance")
	if err != nil {
		jsonError(w, http.StatusNotFound, map[string]any{"error": "Not found"})
		return
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		text(w, http.StatusInternalServerError, "metadata/instance: "+err.Error()+"\n")
		return
	}
	for _, k := range keys {
		switch t := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = t[k]; !ok {
				jsonError(w, http.StatusNotFound, map[string]any{"error": "Not found"})
				return
			}
		case []any:
			var i int
			if _, err := fmt.Sscanf(k, "%d", &i); err != nil || i < 0 || i >= len(t) || fmt.Sprint(i) != k {
				jsonError(w, http.StatusNotFound, map[string]any{"error": "Not found"})
				return
			}
			v = t[i]
		default:
			jsonError(w, http.StatusNotFound, map[string]any{"error": "Not found"})
			return
		}
	}
	if str, ok := v.(string); ok && asText {
		text(w, http.StatusOK, str)
		return
	}
	if len(keys) == 0 {
		// The document as written in the tree.
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(b)
		return
	}
	writeJSON(w, v)
}

func (s *Server) serveWireserver(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get(AzureVersionHeader) == "" {
		text(w, http.StatusBadRequest, "Bad request: missing "+AzureVersionHeader+" header\n")
		return
	}
	comp := r.URL.Query().Get("comp")
	switch {
	case comp == "goalstate" && (r.Method == http.MethodGet || r.Method == http.MethodHead):
		b, err := fs.ReadFile(s.fsys, "machine/goalstate")
		if err != nil {
			b = s.goalState()
		}
		w.Header().Set("Content-Type", "text/xml; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(b)
	case comp == "health" && r.Method == http.MethodPost:
		s.recordHealth(w, r)
	case comp == "goalstate" || comp == "health":
		w.Header().Set("Allow", map[string]string{"goalstate": "GET, HEAD", "health": "POST"}[comp])
		text(w, http.StatusMethodNotAllowed, "Method Not Allowed\n")
	default:
		notFound(w)
	}
}

// goalState is the generated goal state.
func (s *Server) goalState() []byte {
	instance := "cloudroot-vm"
	if b, err := fs.ReadFile(s.fsys, "metadata/instance"); err == nil {
		var doc struct {
			Compute struct {
				VMID string `json:"vmId"`
				Name string `json:"name"`
			} `json:"compute"`
		}
		if json.Unmarshal(b, &doc) == nil && doc.Compute.VMID != "" {
			instance = doc.Compute.VMID + "._" + doc.Compute.Name
		}
	}
	var esc bytes.Buffer
	_ = xml.EscapeText(&esc, []byte(instance))
	return fmt.Appendf(nil, `<?xml version="1.0" encoding="utf-8"?>
<GoalState xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:noNamespaceSchemaLocation="goalstate10.xsd">
  <Version>2012-11-30</Version>
  <Incarnation>1</Incarnation>
  <Machine>
    <ExpectedState>Started</ExpectedState>
    <StopRolesDeadlineHint>300000</StopRolesDeadlineHint>
    <ExpectHealthReport>FALSE</ExpectHealthReport>
  </Machine>
  <Container>
    <ContainerId>%s</ContainerId>
    <RoleInstanceList>
      <RoleInstance>
        <InstanceId>%s</InstanceId>
        <State>Started</State>
      </RoleInstance>
    </RoleInstanceList>
  </Container>
</GoalState>
`, AzureContainerID, esc.String())
}

func (s *Server) recordHealth(w http.ResponseWriter, r *http.Request) {
	b, err := io.ReadAll(io.LimitReader(r.Body, maxHealthReport+1))
	if err != nil || len(b) > maxHealthReport {
		text(w, http.StatusBadRequest, "Bad request: unreadable health report\n")
		return
	}
	var doc struct {
		Incarnation string `xml:"GoalStateIncarnation"`
		Container   string `xml:"Container>ContainerId"`
		Instance    string `xml:"Container>RoleInstanceList>Role>InstanceId"`
		State       string `xml:"Container>RoleInstanceList>Role>Health>State"`
		Substatus   string `xml:"Container>RoleInstanceList>Role>Health>Details>SubStatus"`
		Description string `xml:"Container>RoleInstanceList>Role>Health>Details>Description"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil || doc.State == "" {
		text(w, http.StatusBadRequest, "Bad request: not a health report\n")
		return
	}
	h := HealthReport{Time: s.opts.Now(), State: doc.State, Substatus: doc.Substatus, Description: doc.Description,
		Incarnation: doc.Incarnation, ContainerID: doc.Container, InstanceID: doc.Instance, Body: b}
	s.mu.Lock()
	s.health = append(s.health, h)
	s.mu.Unlock()
	if s.opts.Log != nil {
		line := fmt.Sprintf("%s imds: wireserver health report: %s", h.Time.Format("15:04:05.000"), h.State)
		if h.Substatus != "" {
			line += " (" + h.Substatus + ")"
		}
		fmt.Fprintln(s.opts.Log, line)
	}
	w.WriteHeader(http.StatusOK)
}
