package azure

import (
	"strings"

	"github.com/cloudroot/cloudroot/pkg/datasource"
)

var _ datasource.InstanceChecker = (*Source)(nil)

// CheckInstanceID implements datasource.InstanceChecker as cloud-init's
// DataSourceAzure does: the cached instance-id is this machine's when it
// equals the DMI product_uuid, or that UUID with its first three fields
// byte-swapped (Azure reported the UUID in the other byte order before
// Gen2 VMs; cloud-init keeps the previous spelling).
func (*Source) CheckInstanceID(env datasource.Env, cached *datasource.Data) bool {
	iid, uuid := cached.InstanceID(), env.DMI.ProductUUID
	return datasource.InstanceIDMatches(iid, uuid) || datasource.InstanceIDMatches(iid, checkSwappedUUID(uuid))
}

// checkSwappedUUID swaps the byte order of the first three fields of a UUID
// ("12345678-9abc-def0-…" → "78563412-bc9a-f0de-…"); other input is
// returned unchanged.
func checkSwappedUUID(u string) string {
	parts := strings.Split(u, "-")
	if len(parts) != 5 || len(parts[0]) != 8 || len(parts[1]) != 4 || len(parts[2]) != 4 {
		return u
	}
	swap := func(s string) string {
		var b strings.Builder
		for i := len(s) - 2; i >= 0; i -= 2 {
			b.WriteString(s[i : i+2])
		}
		return b.String()
	}
	return strings.Join([]string{swap(parts[0]), swap(parts[1]), swap(parts[2]), parts[3], parts[4]}, "-")
}
