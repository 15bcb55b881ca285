// Package yamlscan counts the nodes of a YAML stream without building
// them, so that a reader can refuse a document before gopkg.in/yaml.v3
// turns it into a node tree (a yaml.v3 node costs ~170 bytes, a two-byte
// "1," of a flow list one node).
//
// The scanner and parser are gopkg.in/yaml.v3 v3.0.1's port of libyaml
// (apic.go, parserc.go, readerc.go, scannerc.go, yamlh.go,
// yamlprivateh.go; LICENSE and NOTICE are yaml.v3's), copied unchanged but
// for the package name and gofmt, so that the events counted are the ones yaml.v3's
// own parser sees. Only Count is new; it holds one event at a time.
package yamlscan

import "fmt"

// LimitError is a stream that passes a bound: Line and Column (1-based)
// are where the first node past it starts.
type LimitError struct {
	Line, Column int
	What         string // "nodes" or "depth"
	Limit        int
}

func (e *LimitError) Error() string {
	if e.What == "depth" {
		return fmt.Sprintf("is nested more than %d levels deep", e.Limit)
	}
	return fmt.Sprintf("has more than %d nodes", e.Limit)
}

// Count reads every document of data and returns how many nodes
// (scalars, sequences, mappings, aliases) it holds, or a *LimitError at
// the first node past maxNodes or nested deeper than maxDepth (a bound of
// 0 or less is no bound). A syntax error ends the count without an error:
// the parse that follows reports it with its own words.
func Count(data []byte, maxNodes, maxDepth int) (int, error) {
	var p yaml_parser_t
	if !yaml_parser_initialize(&p) {
		return 0, nil
	}
	defer yaml_parser_delete(&p)
	yaml_parser_set_input_string(&p, data)
	nodes, depth := 0, 0
	var ev yaml_event_t
	// Every event but the stream's and documents' needs a byte of input
	// or ends a collection that did; past this the parser is looping.
	for events := 0; events <= 4*len(data)+16; events++ {
		// yaml_parser_parse may report an error with true (yaml.v3's
		// parser.peek checks both, its issue #666).
		if !yaml_parser_parse(&p, &ev) || p.error != yaml_NO_ERROR {
			return nodes, nil
		}
		typ, mark := ev.typ, ev.start_mark
		yaml_event_delete(&ev)
		switch typ {
		case yaml_STREAM_END_EVENT:
			return nodes, nil
		case yaml_SEQUENCE_END_EVENT, yaml_MAPPING_END_EVENT:
			depth--
			continue
		case yaml_SEQUENCE_START_EVENT, yaml_MAPPING_START_EVENT:
			depth++
			if maxDepth > 0 && depth > maxDepth {
				return nodes, &LimitError{Line: int(mark.line) + 1, Column: int(mark.column) + 1, What: "depth", Limit: maxDepth}
			}
		case yaml_SCALAR_EVENT, yaml_ALIAS_EVENT:
		default:
			continue
		}
		nodes++
		if maxNodes > 0 && nodes > maxNodes {
			return nodes, &LimitError{Line: int(mark.line) + 1, Column: int(mark.column) + 1, What: "nodes", Limit: maxNodes}
		}
	}
	return nodes, nil
}

// indicators are the bytes a node or a level of nesting cannot do without:
// a flow collection starts with [ or {, its items are separated by ",",
// a block sequence item starts with "-", a mapping value follows ":" (or
// a key "?"), an alias starts with "*".
var indicators = func() (t [256]bool) {
	for _, c := range []byte(",-:?[{*") {
		t[c] = true
	}
	return t
}()

// Within reports, without parsing, whether data surely holds at most
// maxNodes nodes nested at most maxDepth deep, so that Count can be
// skipped: with k indicator bytes (see indicatorCount), a stream has at most
// 3k+3 nodes (a block mapping's entry is two nodes behind one ":", and
// the mapping one more) and nests at most k deep. Long text without them
// (base64, plain prose) is passed over at memory speed.
func Within(data []byte, maxNodes, maxDepth int) bool {
	k := indicatorCount(data)
	return (maxNodes <= 0 || 3*k+3 <= maxNodes) && (maxDepth <= 0 || k <= maxDepth)
}

// indicatorCount counts data's indicator bytes, and a "." that starts a
// line: after a "..." document end a new document needs no "---".
func indicatorCount(data []byte) int {
	k := 0
	for i, c := range data {
		if indicators[c] || c == '.' && (i == 0 || data[i-1] == '\n') {
			k++
		}
	}
	return k
}
