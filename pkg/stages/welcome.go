package stages

import (
	"fmt"
	"time"

	"github.com/cloudroot/cloudroot/pkg/modules"
)

// Welcome is the line cloud-init writes at the start of each stage on its
// output (the console and /var/log/cloud-init-output.log): "Cloud-init v.
// VERSION running 'ACTION' at RFC2822-TIME. Up UPTIME seconds." ACTION is
// init-local, init, modules:config or modules:final.
func Welcome(version, action string, now time.Time, uptime float64) string {
	return fmt.Sprintf("Cloud-init v. %s running '%s' at %s. Up %.2f seconds.\n", version, action, now.UTC().Format(modules.RFC2822), uptime)
}
