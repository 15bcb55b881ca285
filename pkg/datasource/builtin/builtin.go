// Package builtin is cloudroot's datasource registry: every implemented
// datasource, in cloud-init's builtin datasource_list order (settings.py),
// which is the priority when no configuration decides. It lives apart
// from pkg/datasource because it imports every source package.
package builtin

import (
	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/akamai"
	"github.com/cloudroot/cloudroot/pkg/datasource/aliyun"
	"github.com/cloudroot/cloudroot/pkg/datasource/altcloud"
	"github.com/cloudroot/cloudroot/pkg/datasource/azure"
	"github.com/cloudroot/cloudroot/pkg/datasource/bigstep"
	"github.com/cloudroot/cloudroot/pkg/datasource/cloudcix"
	"github.com/cloudroot/cloudroot/pkg/datasource/cloudsigma"
	"github.com/cloudroot/cloudroot/pkg/datasource/cloudstack"
	"github.com/cloudroot/cloudroot/pkg/datasource/configdrive"
	"github.com/cloudroot/cloudroot/pkg/datasource/digitalocean"
	"github.com/cloudroot/cloudroot/pkg/datasource/ec2"
	"github.com/cloudroot/cloudroot/pkg/datasource/exoscale"
	"github.com/cloudroot/cloudroot/pkg/datasource/gce"
	"github.com/cloudroot/cloudroot/pkg/datasource/hetzner"
	"github.com/cloudroot/cloudroot/pkg/datasource/ibmcloud"
	"github.com/cloudroot/cloudroot/pkg/datasource/lxd"
	"github.com/cloudroot/cloudroot/pkg/datasource/maas"
	"github.com/cloudroot/cloudroot/pkg/datasource/nocloud"
	"github.com/cloudroot/cloudroot/pkg/datasource/none"
	"github.com/cloudroot/cloudroot/pkg/datasource/nwcs"
	"github.com/cloudroot/cloudroot/pkg/datasource/opennebula"
	"github.com/cloudroot/cloudroot/pkg/datasource/openstack"
	"github.com/cloudroot/cloudroot/pkg/datasource/oracle"
	"github.com/cloudroot/cloudroot/pkg/datasource/ovf"
	"github.com/cloudroot/cloudroot/pkg/datasource/rbxcloud"
	"github.com/cloudroot/cloudroot/pkg/datasource/scaleway"
	"github.com/cloudroot/cloudroot/pkg/datasource/smartos"
	"github.com/cloudroot/cloudroot/pkg/datasource/upcloud"
	"github.com/cloudroot/cloudroot/pkg/datasource/vmware"
	"github.com/cloudroot/cloudroot/pkg/datasource/vultr"
)

// Registry returns the implemented sources in priority order, ending with
// the None fallback. Each call returns a new slice of new,
// default-configured sources.
func Registry() datasource.Registry {
	return datasource.Registry{
		&nocloud.Source{},
		&configdrive.Source{},
		&lxd.Source{},
		&opennebula.Source{},
		&digitalocean.Source{},
		&azure.Source{},
		&altcloud.Source{},
		&vmware.Source{},
		&ovf.Source{},
		&maas.Source{},
		&gce.Source{},
		&openstack.Source{},
		&aliyun.Source{},
		&vultr.Source{},
		&ec2.Source{},
		&cloudsigma.Source{},
		&cloudstack.Source{},
		&smartos.Source{},
		&bigstep.Source{},
		&scaleway.Source{},
		&hetzner.Source{},
		&ibmcloud.Source{},
		&oracle.Source{},
		&exoscale.Source{},
		&rbxcloud.Source{},
		&upcloud.Source{},
		&nwcs.Source{},
		&akamai.Source{},
		&cloudcix.Source{},
		// The fallback, last in every datasource_list cloud-init writes.
		&none.Source{},
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
