//go:build !cloudroot_front

package cli

// Commands is every subcommand, in help order. Add new ones here.
func Commands() []Command {
	return []Command{
		initCommand(),
		statusCommand(),
		modulesCommand(),
		singleCommand(),
		hostkeysCommand(),
		identifyCommand(),
		growpartCommand(),
		diskCommand(),
		queryCommand(),
		schemaCommand(),
		develCommand(),
		imdsCommand(),
		probeCommand(),
		seedCommand(),
		installCommand(),
		generatorCommand(),
		analyzeCommand(),
		cloudIDCommand(),
		featuresCommand(),
		cleanCommand(),
		collectLogsCommand(),
	}
}
