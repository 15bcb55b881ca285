// Package builtin is cloudroot's datasource registry: every implemented
// datasource, in cloud-init's builtin datasource_list order (settings.py),
// which is the priority when no configuration decides. It lives apart
// from pkg/datasource because it imports every source package.
package builtin

import (
	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/configdrive"
	"github.com/cloudroot/cloudroot/pkg/datasource/ec2"
	"github.com/cloudroot/cloudroot/pkg/datasource/gce"
	"github.com/cloudroot/cloudroot/pkg/datasource/nocloud"
	"github.com/cloudroot/cloudroot/pkg/datasource/openstack"
)

// Registry returns the implemented sources in priority order. Each call
// returns a new slice of new, default-configured sources.
func Registry() datasource.Registry {
	return datasource.Registry{
		&nocloud.Source{},
		&configdrive.Source{},
		&gce.Source{},
		&openstack.Source{},
		&ec2.Source{},
	}
}

// CloudInitList is cloud-init's builtin datasource_list (settings.py),
// implemented or not, without the trailing None.
func CloudInitList() []string {
	return []string{
		"NoCloud", "ConfigDrive", "LXD", "OpenNebula", "DigitalOcean", "Azure", "AltCloud", "VMware",
		"OVF", "MAAS", "GCE", "OpenStack", "AliYun", "Vultr", "Ec2", "CloudSigma", "CloudStack",
		"SmartOS", "Bigstep", "Scaleway", "Hetzner", "IBMCloud", "Oracle", "Exoscale", "RbxCloud",
		"UpCloud", "NWCS", "Akamai", "WSL", "CloudCIX",
	}
}
