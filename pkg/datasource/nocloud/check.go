package nocloud

import (
	"fmt"
	"path"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/datasource"
)

var _ datasource.InstanceChecker = (*Source)(nil)

// CheckInstanceID implements datasource.InstanceChecker as cloud-init's
// DataSourceNoCloud does (_quick_read_instance_id): the instance-id named
// by `ds=nocloud;i=` on the command line, else the instance-id in the
// meta-data of the first seed directory that has one, must equal the cached
// one. Volumes are not read, so a seed on a cidata disk is searched again.
func (*Source) CheckInstanceID(env datasource.Env, cached *datasource.Data) bool {
	cur := cached.InstanceID()
	if cur == "" {
		return false
	}
	if arg, ok := env.Cmdline.DS(); ok && arg.NoCloud() && arg.InstanceID != "" {
		return arg.InstanceID == cur
	}
	if env.Root == nil {
		return false
	}
	for _, dir := range SeedDirs() {
		b, err := datasource.ReadFile(env.Root, strings.TrimPrefix(path.Join(dir, "meta-data"), "/"))
		if err != nil {
			continue
		}
		md, err := datasource.DecodeYAMLMap(b)
		if err != nil {
			continue
		}
		if iid, ok := md["instance-id"]; ok {
			return fmt.Sprint(iid) == cur
		}
	}
	return false
}
