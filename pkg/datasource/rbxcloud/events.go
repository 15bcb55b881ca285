package rbxcloud

import "github.com/cloudroot/cloudroot/pkg/datasource"

var _ datasource.UpdateEventer = (*Source)(nil)

// NetworkUpdateEvents implements datasource.UpdateEventer with
// DataSourceRbxCloud's default_update_events: the network configuration is
// re-applied on every boot.
func (*Source) NetworkUpdateEvents(*datasource.Data) []string {
	return []string{datasource.EventBootNewInstance, datasource.EventBoot, datasource.EventBootLegacy}
}
