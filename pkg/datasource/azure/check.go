package azure

import "github.com/cloudroot/cloudroot/pkg/datasource"

var _ datasource.InstanceChecker = (*Source)(nil)

// CheckInstanceID implements datasource.InstanceChecker as cloud-init's
// DataSourceAzure does: the cached instance-id is this machine's when it
// equals the DMI product_uuid, or that UUID with its first three fields
// byte-swapped (Azure reported the UUID in the other byte order before
// Gen2 VMs; cloud-init keeps the previous spelling).
func (*Source) CheckInstanceID(env datasource.Env, cached *datasource.Data) bool {
	iid, uuid := cached.InstanceID(), env.DMI.ProductUUID
	return datasource.InstanceIDMatches(iid, uuid) || datasource.InstanceIDMatches(iid, ByteSwapUUID(uuid))
}
