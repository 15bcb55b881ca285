package configdrive

import "github.com/cloudroot/cloudroot/pkg/datasource"

var _ datasource.InstanceChecker = (*Source)(nil)

// CheckInstanceID implements datasource.InstanceChecker as cloud-init's
// DataSourceConfigDrive does: the cached instance-id is still this
// machine's when it equals the DMI product_uuid.
func (*Source) CheckInstanceID(env datasource.Env, cached *datasource.Data) bool {
	return datasource.InstanceIDMatches(cached.InstanceID(), env.DMI.ProductUUID)
}
