package modules

import (
	"testing"
)

// TestProAnswers pins how the pro api answers are read (typed structs
// since the map lookups went): should_auto_attach is true only for a JSON
// true, attributes that are not an object refuse the answer (a warning),
// and enable's errors print their fields with Python's str.
func TestProAnswers(t *testing.T) {
	const should = "pro api u.pro.attach.auto.should_auto_attach.v1"
	for _, tc := range []struct {
		name, answer string
		want         bool
		warned       bool
	}{
		{"true", `{"result": "success", "data": {"attributes": {"should_auto_attach": true}}}`, true, false},
		{"false", `{"result": "success", "data": {"attributes": {"should_auto_attach": false}}}`, false, false},
		{"a string", `{"result": "success", "data": {"attributes": {"should_auto_attach": "yes"}}}`, false, false},
		{"a number", `{"result": "success", "data": {"attributes": {"should_auto_attach": 1}}}`, false, false},
		{"absent", `{"result": "success", "data": {"attributes": {}}}`, false, false},
		{"null attributes", `{"result": "success", "data": {"attributes": null}}`, false, false},
		{"list attributes", `{"result": "success", "data": {"attributes": [true]}}`, false, true},
		{"failure", `{"result": "failure", "errors": [{"code": "c", "title": "t"}]}`, false, true},
		{"not JSON", `nope`, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, rr, _ := testContext(t, nil, baseFiles)
			rr.Answers = map[string]string{should: tc.answer}
			var warnings []string
			c.Warn = func(m string) { warnings = append(warnings, m) }
			if got := proShouldAutoAttach(t.Context(), c); got != tc.want || (len(warnings) > 0) != tc.warned {
				t.Errorf("should_auto_attach = %v, warnings %q; want %v, warned %v", got, warnings, tc.want, tc.warned)
			}
		})
	}
}
