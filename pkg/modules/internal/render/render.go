// Package render renders the templates modules write, as cloud-init's
// templater does: Basic is its "basic" renderer ($NAME and ${NAME}),
// Jinja its "## template: jinja" renderer (pkg/userdata's Jinja engine,
// the one user-data uses). Neither reads a module's Context, so every
// module package may use them.
package render

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/cloudroot/cloudroot/pkg/userdata"
)

var basicVar = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\{([A-Za-z0-9_.]+)\}|\$([A-Za-z0-9_]+)`) })

// Basic is cloud-init's basic template renderer: $NAME and ${NAME} from
// params; an unknown name is an error.
func Basic(s string, params map[string]string) (string, error) {
	var missing []string
	out := basicVar().ReplaceAllStringFunc(s, func(m string) string {
		sm := basicVar().FindStringSubmatch(m)
		name := sm[1] + sm[2]
		v, ok := params[name]
		if !ok {
			missing = append(missing, name)
			return m
		}
		return v
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("rendering %q: unknown template variable %s", s, strings.Join(missing, ", "))
	}
	return out, nil
}

// Jinja renders a "## template: jinja" file the way cloud-init's
// templater does: Jinja drops the source's final newline and the
// templater adds one back when the source had it (so a template ending in
// a block tag still ends its output with a newline).
func Jinja(src []byte, params map[string]any) ([]byte, error) {
	s := string(src)
	add := strings.HasSuffix(s, "\n")
	if add {
		s = strings.TrimSuffix(s, "\n")
	}
	out, _, err := userdata.RenderJinja([]byte(s), params)
	if err != nil {
		return nil, err
	}
	if add {
		out = append(out, '\n')
	}
	return out, nil
}
