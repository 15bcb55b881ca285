package openstack

import "github.com/cloudroot/cloudroot/pkg/datasource"

var (
	_ datasource.InstanceChecker = (*Source)(nil)
	_ datasource.BootRefresher   = (*Source)(nil)
)

// RefreshesOnBoot implements datasource.BootRefresher: Nova changes the
// metadata of a running instance (meta.admin_pass, keys after a rebuild).
func (*Source) RefreshesOnBoot() {}

// CheckInstanceID implements datasource.InstanceChecker as cloud-init's
// DataSourceOpenStack does: the cached instance-id is still this
// machine's when it equals the DMI product_uuid.
func (*Source) CheckInstanceID(env datasource.Env, cached *datasource.Data) bool {
	return datasource.InstanceIDMatches(cached.InstanceID(), env.DMI.ProductUUID)
}
