package state

import (
	"encoding/json"
	"fmt"
)

// Stage names as they appear in status.json.
const (
	StageInitLocal     = "init-local"
	StageInit          = "init"
	StageModulesConfig = "modules-config"
	StageModulesFinal  = "modules-final"
)

// Stages lists the status.json stages in boot order.
var Stages = []string{StageInitLocal, StageInit, StageModulesConfig, StageModulesFinal}

// StageStatus is one stage entry of status.json. Start and Finished are
// seconds since boot (cloud-init writes uptime), nil while unknown.
type StageStatus struct {
	Start             *float64            `json:"start"`
	Finished          *float64            `json:"finished"`
	Errors            []string            `json:"errors"`
	RecoverableErrors map[string][]string `json:"recoverable_errors"`
}

// AddRecoverable records a message under level (WARNING, ERROR, DEPRECATED).
func (s *StageStatus) AddRecoverable(level, msg string) {
	if s.RecoverableErrors == nil {
		s.RecoverableErrors = map[string][]string{}
	}
	s.RecoverableErrors[level] = append(s.RecoverableErrors[level], msg)
}

// Status is status.json: {"v1": {...}}.
type Status struct {
	Datasource string
	// Stage is the stage running now, "" when none.
	Stage  string
	Stages map[string]*StageStatus
	// BootStatusCode is cloudroot's record of how it was enabled
	// (enabled-by-generator, disabled-by-kernel-command-line, ...).
	BootStatusCode string
	// Mode is where the local and network stages ran: "initramfs" or
	// "in-root" (the agent's, without a hand-off); absent in a status.json
	// of an older cloudroot means the initramfs.
	Mode string
	// Secrets are scrubbed from every message when status.json is
	// written (secret.Values of the config and metadata); never written.
	Secrets []string
}

// NewStatus returns a status with every stage present and not started.
func NewStatus() *Status {
	s := &Status{Stages: map[string]*StageStatus{}}
	for _, n := range Stages {
		s.Stages[n] = &StageStatus{Errors: []string{}, RecoverableErrors: map[string][]string{}}
	}
	return s
}

// Get returns the named stage, creating it if needed.
func (s *Status) Get(stage string) *StageStatus {
	if s.Stages == nil {
		s.Stages = map[string]*StageStatus{}
	}
	st := s.Stages[stage]
	if st == nil {
		st = &StageStatus{Errors: []string{}, RecoverableErrors: map[string][]string{}}
		s.Stages[stage] = st
	}
	return st
}

// MarshalJSON writes cloud-init's shape.
func (s *Status) MarshalJSON() ([]byte, error) {
	v1 := map[string]any{}
	if s.Datasource == "" {
		v1["datasource"] = nil
	} else {
		v1["datasource"] = s.Datasource
	}
	if s.Stage == "" {
		v1["stage"] = nil
	} else {
		v1["stage"] = s.Stage
	}
	for _, n := range Stages {
		v1[n] = s.Get(n)
	}
	for n, st := range s.Stages {
		v1[n] = st
	}
	if s.BootStatusCode != "" {
		v1["boot_status_code"] = s.BootStatusCode
	}
	if s.Mode != "" {
		v1["mode"] = s.Mode
	}
	return json.Marshal(map[string]any{"v1": v1})
}

// UnmarshalJSON reads cloud-init's shape.
func (s *Status) UnmarshalJSON(b []byte) error {
	var raw struct {
		V1 map[string]json.RawMessage `json:"v1"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return fmt.Errorf("status.json: %w", err)
	}
	if raw.V1 == nil {
		return fmt.Errorf("status.json: no v1 key")
	}
	*s = Status{Stages: map[string]*StageStatus{}}
	for k, v := range raw.V1 {
		switch k {
		case "datasource":
			_ = json.Unmarshal(v, &s.Datasource)
		case "stage":
			_ = json.Unmarshal(v, &s.Stage)
		case "boot_status_code":
			_ = json.Unmarshal(v, &s.BootStatusCode)
		case "mode":
			_ = json.Unmarshal(v, &s.Mode)
		default:
			var st StageStatus
			if err := json.Unmarshal(v, &st); err != nil {
				continue // unknown non-stage key
			}
			if st.Errors == nil {
				st.Errors = []string{}
			}
			if st.RecoverableErrors == nil {
				st.RecoverableErrors = map[string][]string{}
			}
			s.Stages[k] = &st
		}
	}
	return nil
}

// Result is result.json, written at the end of the final stage.
type Result struct {
	Datasource string   `json:"datasource"`
	Errors     []string `json:"errors"`
	// RecoverableErrors merges every stage's recoverable errors.
	RecoverableErrors map[string][]string `json:"recoverable_errors"`
	// Secrets are scrubbed from every message when result.json is
	// written; never written.
	Secrets []string `json:"-"`
}

// MarshalJSON writes {"v1": {...}}.
func (r *Result) MarshalJSON() ([]byte, error) {
	type plain Result
	p := plain(*r)
	if p.Errors == nil {
		p.Errors = []string{}
	}
	if p.RecoverableErrors == nil {
		p.RecoverableErrors = map[string][]string{}
	}
	return json.Marshal(map[string]any{"v1": p})
}

// UnmarshalJSON reads {"v1": {...}}.
func (r *Result) UnmarshalJSON(b []byte) error {
	type plain Result
	var raw struct {
		V1 plain `json:"v1"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return fmt.Errorf("result.json: %w", err)
	}
	*r = Result(raw.V1)
	return nil
}
