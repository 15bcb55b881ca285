package harness

import (
	"encoding/json"
	"fmt"
	"sort"
)

// Paths cloud-init (and cloudroot) leave in the root filesystem. They are
// spelled out here rather than imported, so the tests check the layout
// cloud-init users rely on, not whatever the implementation says.
const (
	StatusPath           = "/var/lib/cloud/data/status.json"
	ResultPath           = "/var/lib/cloud/data/result.json"
	InstanceLinkPath     = "/var/lib/cloud/instance"
	InstanceIDPath       = "/var/lib/cloud/data/instance-id"
	PrevInstanceIDPath   = "/var/lib/cloud/data/previous-instance-id"
	StatePath            = "/var/lib/cloud/instance/cloudroot-state.json"
	BootFinishedPath     = "/var/lib/cloud/instance/boot-finished"
	NoPreviousInstanceID = "NO_PREVIOUS_INSTANCE_ID"
)

// Stages are status.json's stages in boot order.
var Stages = []string{"init-local", "init", "modules-config", "modules-final"}

// StageStatus is one stage of status.json (times are seconds since boot).
type StageStatus struct {
	Start             *float64            `json:"start"`
	Finished          *float64            `json:"finished"`
	Errors            []string            `json:"errors"`
	RecoverableErrors map[string][]string `json:"recoverable_errors"`
}

// Duration is Finished-Start, or -1 when either is missing.
func (s StageStatus) Duration() float64 {
	if s.Start == nil || s.Finished == nil {
		return -1
	}
	return *s.Finished - *s.Start
}

// Status is cloud-init's status.json ({"v1": {...}}).
type Status struct {
	Datasource     string
	Stage          string
	BootStatusCode string
	Stages         map[string]StageStatus
}

// ParseStatus reads status.json.
func ParseStatus(b []byte) (*Status, error) {
	var raw struct {
		V1 map[string]json.RawMessage `json:"v1"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("parsing status.json: %w", err)
	}
	if raw.V1 == nil {
		return nil, fmt.Errorf("parsing status.json: no \"v1\" object")
	}
	s := &Status{Stages: map[string]StageStatus{}}
	for k, v := range raw.V1 {
		switch k {
		case "datasource":
			_ = json.Unmarshal(v, &s.Datasource)
		case "stage":
			_ = json.Unmarshal(v, &s.Stage)
		case "boot_status_code":
			_ = json.Unmarshal(v, &s.BootStatusCode)
		default:
			var st StageStatus
			if err := json.Unmarshal(v, &st); err == nil {
				s.Stages[k] = st
			}
		}
	}
	return s, nil
}

// AllErrors lists every stage's errors and recoverable errors as
// "stage: [LEVEL] message", in stage order.
func (s *Status) AllErrors() []string {
	var out []string
	names := append([]string(nil), Stages...)
	var extra []string
	for k := range s.Stages {
		known := false
		for _, n := range Stages {
			known = known || n == k
		}
		if !known {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	for _, n := range append(names, extra...) {
		st, ok := s.Stages[n]
		if !ok {
			continue
		}
		for _, e := range st.Errors {
			out = append(out, n+": "+e)
		}
		levels := make([]string, 0, len(st.RecoverableErrors))
		for l := range st.RecoverableErrors {
			levels = append(levels, l)
		}
		sort.Strings(levels)
		for _, l := range levels {
			for _, e := range st.RecoverableErrors[l] {
				out = append(out, n+": ["+l+"] "+e)
			}
		}
	}
	return out
}

// Result is cloud-init's result.json.
type Result struct {
	Datasource        string              `json:"datasource"`
	Errors            []string            `json:"errors"`
	RecoverableErrors map[string][]string `json:"recoverable_errors"`
}

// ParseResult reads result.json.
func ParseResult(b []byte) (*Result, error) {
	var raw struct {
		V1 *Result `json:"v1"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("parsing result.json: %w", err)
	}
	if raw.V1 == nil {
		return nil, fmt.Errorf("parsing result.json: no \"v1\" object")
	}
	return raw.V1, nil
}

// Timing is one entry of the state file's timings: stage start (seconds
// since boot) and duration.
type Timing struct {
	Stage    string  `json:"stage"`
	Start    float64 `json:"start"`
	Duration float64 `json:"duration"`
	Error    string  `json:"error,omitempty"`
}

// State is the part of cloudroot's state file the harness reads.
type State struct {
	Version     int      `json:"version"`
	InstanceID  string   `json:"instance_id"`
	Disabled    bool     `json:"disabled"`
	NewInstance bool     `json:"new_instance"`
	Restored    string   `json:"restored"`
	Timings     []Timing `json:"timings"`
	Errors      []string `json:"errors"`
	Warnings    []string `json:"warnings"`
	Datasource  struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		Subplatform string `json:"subplatform"`
	} `json:"datasource"`
}

// ParseState reads cloudroot-state.json.
func ParseState(b []byte) (*State, error) {
	var s State
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("parsing the cloudroot state: %w", err)
	}
	return &s, nil
}

// Status reads and parses status.json from the image.
func (im *Image) Status() (*Status, error) {
	b, err := im.ReadFile(StatusPath)
	if err != nil {
		return nil, err
	}
	return ParseStatus(b)
}

// Result reads and parses result.json from the image.
func (im *Image) Result() (*Result, error) {
	b, err := im.ReadFile(ResultPath)
	if err != nil {
		return nil, err
	}
	return ParseResult(b)
}

// State reads and parses the current instance's cloudroot state file.
func (im *Image) State() (*State, error) {
	b, err := im.ReadFile(StatePath)
	if err != nil {
		return nil, err
	}
	return ParseState(b)
}
