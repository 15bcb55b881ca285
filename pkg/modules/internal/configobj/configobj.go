// Package configobj is what the modules that write Python configobj
// files share: quoting a value as ConfigObj writes it (zypper_add_repo's
// repo files, mcollective's server.cfg).
package configobj

import (
	"fmt"
	"strings"
)

// Quote is configobj's ConfigObj._quote for a string with the
// default list_values: unquoted when safe, else single or double quotes,
// triple quotes for multi-line values (multiline) or both quote kinds.
func Quote(v string, multiline bool) (string, error) {
	if v == "" {
		return `""`, nil
	}
	hasSQ, hasDQ, hasNL := strings.Contains(v, "'"), strings.Contains(v, `"`), strings.Contains(v, "\n")
	single := func() (string, error) {
		switch {
		case hasSQ && hasDQ:
			return "", fmt.Errorf("value %q cannot be safely quoted", v)
		case hasDQ:
			return "'" + v + "'", nil
		}
		return `"` + v + `"`, nil
	}
	if multiline && ((hasSQ && hasDQ) || hasNL) {
		switch {
		case !strings.Contains(v, `"""`):
			return `"""` + v + `"""`, nil
		case !strings.Contains(v, "'''"):
			return "'''" + v + "'''", nil
		}
		return "", fmt.Errorf("value %q cannot be safely quoted", v)
	}
	if hasNL {
		return "", fmt.Errorf("value %q cannot be safely quoted", v)
	}
	const wspacePlus = " \r\n\v\t'\""
	if !strings.ContainsRune(wspacePlus, rune(v[0])) && !strings.ContainsRune(wspacePlus, rune(v[len(v)-1])) && !strings.Contains(v, ",") {
		if strings.Contains(v, "#") {
			return single()
		}
		return v, nil
	}
	return single()
}
