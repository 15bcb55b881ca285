package cli

// commandIndex is every subcommand's name and help line, in help order,
// without its code. The front binary (the cloudroot_front tag) answers only
// some subcommands itself but prints the same help and the same "invalid
// choice" lists as the full agent, so it takes the others' names from here;
// TestCommandIndex checks that this list is the full agent's Commands().
func commandIndex() []Command {
	return []Command{
		{Name: "init", Short: "Initialize cloud-init and perform initial modules."},
		{Name: "status", Short: "Report cloud-init status or wait on completion."},
		{Name: "modules", Short: "Activate modules using a given configuration key."},
		{Name: "single", Short: "Run a single module."},
		{Name: "hostkeys", Short: "Generate the SSH host keys the initramfs deferred (cloudroot-hostkeys.service)."},
		{Name: "identify", Short: "Decide whether to run and which datasources to try (ds-identify)."},
		{Name: "growpart", Short: "Grow a partition to fill the free space after it (cloud-utils growpart)."},
		{Name: "disk", Short: "Plan or apply disk_setup/fs_setup from a cloud-config on disks or image files."},
		{Name: "query", Short: "Query standardized instance metadata from the command line."},
		{Name: "schema", Short: "Validate cloud-config files using jsonschema."},
		{Name: "devel", Short: "Run development tools."},
		{Name: "imds", Short: "Serve a metadata-service simulator on 127.0.0.1 (imds serve --cloud ec2|openstack|gce|azure --dir D --listen 127.0.0.1:PORT)."},
		{Name: "probe", Short: "Run one datasource and print the instance data it finds (probe --datasource NAME [--metadata-url URL] [--seed DIR])."},
		{Name: "seed", Short: "Write a NoCloud seed image, like cloud-localds (seed make [--format iso|vfat] [--user-data F] ... OUT)."},
		{Name: "install", Short: "Install the agent, its service units and generator into a root (install --root DIR [--init systemd|openrc|sysvinit] [--dry-run])."},
		{Name: "generator", Short: "The systemd generator: enable cloud-init.target unless cloud-init is disabled (generator NORMAL EARLY LATE)."},
		{Name: "analyze", Short: "Devel tool: Analyze cloud-init logs and data."},
		{Name: "cloud-id", Short: "Report the canonical cloud-id for this instance."},
		{Name: "features", Short: "List defined features."},
		{Name: "clean", Short: "Remove logs and artifacts so cloud-init can re-run."},
		{Name: "collect-logs", Short: "Collect and tar all cloud-init debug info."},
	}
}
