package cli

// devel's usage and help, in both binaries: the front (the cloudroot_front
// tag) serves `devel net-convert`, whose argument errors end with devel's
// help as 26.x prints it.

const develUsage = "usage: cloud-init devel [-h] {hotplug-hook,net-convert,render,make-mime} ...\n"

const develHelp = `
options:
  -h, --help            show this help message and exit

Subcommands:
  {hotplug-hook,net-convert,render,make-mime}
    hotplug-hook        Handle reconfiguration on hotplug events.
    net-convert         Debug network config format conversions.
    render              Debug jinja template rendering of user-data.
    make-mime           Generate multi-part mime messages for user-data.
`
