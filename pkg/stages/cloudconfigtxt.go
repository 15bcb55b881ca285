package stages

import (
	"fmt"
	"io"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/userdata"
	"github.com/cloudroot/cloudroot/pkg/yaml11"
)

// schemaErrorPrefix starts the line cloud-config.txt gives a part
// cloud-init's handler refused (handlers/cloud_config.py
// MERGED_PART_SCHEMA_ERROR_PREFIX).
const schemaErrorPrefix = "# Cloud-config part ignored SCHEMA_ERROR: "

// CloudConfigText writes instances/<iid>/cloud-config.txt (or
// vendor-cloud-config.txt) as cloud-init 26.x's CloudConfigPartHandler
// writes it for a payload res whose cloud-config parts merged to merged:
//
//	#cloud-config
//
//	# from N files
//	# <part name>            (each part merged, in order; "?" if unnamed)
//
//	# Cloud-config part ignored SCHEMA_ERROR: <part name>   (each refused)
//	---
//	<merged, as safeyaml.dumps: PyYAML, indent 4, sorted keys>
//	...
//
// The "# from" block is there only when some part merged. A payload with
// no cloud-config part at all gives an empty file (the handler's buffer
// was never started).
func CloudConfigText(w io.Writer, res *userdata.Result, merged map[string]any) error {
	var names []string
	pi := 0
	patches := func(upto int) {
		for ; pi < len(res.JSONPatches) && res.JSONPatches[pi].After <= upto; pi++ {
			names = append(names, res.JSONPatches[pi].Part)
		}
	}
	for i, c := range res.CloudConfigs {
		patches(i)
		if !c.Null {
			names = append(names, c.Part)
		}
	}
	patches(len(res.CloudConfigs))
	if len(names) == 0 && len(res.IgnoredCloudConfigs) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString("#cloud-config\n\n")
	if len(names) > 0 {
		fmt.Fprintf(&b, "# from %d files\n", len(names))
		for _, n := range names {
			b.WriteString("# " + partLabel(n) + "\n")
		}
		b.WriteString("\n")
	}
	for _, n := range res.IgnoredCloudConfigs {
		b.WriteString(schemaErrorPrefix + strings.TrimSpace(n) + "\n")
	}
	if merged == nil {
		merged = map[string]any{}
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	// The document is emitted straight into w, never built in memory:
	// user-data may be large (docs/security.md, "Memory ceiling").
	return yaml11.DumpTo(w, merged, yaml11.SafeDumpOptions)
}

// partLabel is a part's name as the handler records it: newlines, carriage
// returns and tabs become spaces, the ends are trimmed, and an empty name
// is "?".
func partLabel(n string) string {
	n = strings.NewReplacer("\n", " ", "\r", " ", "\t", " ").Replace(n)
	if n = strings.TrimSpace(n); n == "" {
		return "?"
	}
	return n
}
