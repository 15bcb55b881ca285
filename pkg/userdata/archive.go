package userdata

import (
	"fmt"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/cloudroot/cloudroot/pkg/yaml11"
)

// archive explodes a #cloud-config-archive: a YAML list whose entries are a
// string (the content) or a mapping {content, type, filename, launch-index,
// other keys → headers}. An entry without a type is sniffed, defaulting to
// text/cloud-config. Entries are attached as they are: an include or a
// gzip entry inside an archive is not expanded, as in cloud-init.
func (p *processor) archive(l leaf, origin string) {
	part := loc(l, origin, "#cloud-config-archive")
	doc, err := yaml11.Parse("", l.payload)
	if err != nil {
		p.addError(part, 0, fmt.Errorf("invalid #cloud-config-archive: %w", err))
		return
	}
	for _, w := range doc.Warnings {
		p.notice(part, w.Message())
	}
	if doc.Root == nil {
		return
	}
	list := doc.Root
	if list.Kind != yaml.SequenceNode {
		p.addError(part, list.Line, fmt.Errorf("invalid #cloud-config-archive: expected a list, got %s", nodeKind(list)))
		return
	}
	for _, ent := range list.Content {
		v := yaml11.Value(ent)
		var m map[string]any
		switch t := v.(type) {
		case string:
			m = map[string]any{"content": t}
		case map[string]any:
			m = t
		default:
			p.warnf(part, "line %d: archive entry is %s, not a string or mapping: skipped", ent.Line, nodeKind(ent))
			continue
		}
		content, ok := m["content"].(string)
		if !ok && m["content"] != nil {
			p.addError(part, ent.Line, fmt.Errorf("archive entry: content is %T, not a string", m["content"]))
			continue
		}
		typ, _ := m["type"].(string)
		typ = strings.ToLower(strings.TrimSpace(typ))
		if typ == "" {
			typ = typeFromStartsWith([]byte(content), TypeCloudConfig)
		}
		if strings.Count(typ, "/") != 1 {
			p.addError(part, ent.Line, fmt.Errorf("archive entry: type %q is not a MIME type", typ))
			continue
		}
		nl := leaf{ctype: typ, payload: []byte(content)}
		if fn, ok := m["filename"]; ok && fn != nil {
			nl.filename = fmt.Sprint(fn)
		}
		if li, ok := m["launch-index"]; ok && li != nil {
			nl.headers = append(nl.headers, [2]string{"Launch-Index", fmt.Sprint(li)})
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			switch strings.ToLower(k) {
			case "content", "filename", "type", "launch-index", "content-disposition", "number-attachments", "content-type":
				continue
			}
			nl.headers = append(nl.headers, [2]string{k, fmt.Sprint(m[k])})
		}
		p.attach(nl, origin)
	}
}

func nodeKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return "a scalar"
	case yaml.AliasNode:
		return "an alias"
	}
	return "empty"
}
