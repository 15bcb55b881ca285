package exoscale

// Pure parsing: Data from the crawled tree and the password.

import (
	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/cloudstack"
)

// Input is what the services answered: CloudStack's (Exoscale's metadata
// service and password server are CloudStack's; Base is not used).
type Input = cloudstack.Input

// Build turns the answers into Data as cloud-init's _get_data does: what
// CloudStack's Build makes of them, under Exoscale's names, its
// subplatform unknown (cloud-init's Exoscale has no metadata_address) and
// read in the network stage only (it has no init-local variant).
func Build(in Input) (*datasource.Data, error) {
	in.Base = ""
	d, err := cloudstack.Build(in)
	if err != nil {
		return nil, err
	}
	d.Name, d.Platform, d.CloudName = "Exoscale", "exoscale", "exoscale"
	d.Subplatform = datasource.SubplatformUnknown
	d.NetworkStage = true
	return d, nil
}
