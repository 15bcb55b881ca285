package templates

import _ "embed"

// ChefClient is cloudroot's template for /etc/chef/client.rb (cc_chef's
// chef_client.rb), used when the target has no
// /etc/cloud/templates/chef_client.rb.tmpl of its own.
//
//go:embed chef/chef_client.rb.tmpl
var ChefClient []byte
