package smartos

import "github.com/cloudroot/cloudroot/pkg/datasource"

// NetworkUpdateEvents are DataSourceSmartOS's default_update_events for the
// network (Data.NetworkUpdateEvents): its network configuration is
// re-applied on every boot.
var NetworkUpdateEvents = []string{datasource.EventBootNewInstance, datasource.EventBoot, datasource.EventBootLegacy}
