package modules

// What docs/modules.md says about each module beyond the registry: how it
// is tested (a module without an entry is listed as untested, never as
// working), where it runs when it is not in Debian's default lists, and
// why a module is missing or partial. One line per module, so branches
// adding modules merge cleanly.

// howTested names the tests that hold each module to cloud-init.
var howTested = map[string]string{
	"ansible":                        "upstream golden (TestCMUpstream), golden cases, doc examples (TestCMDocsExamples), QEMU (TestDebianAnsiblePull)",
	"puppet":                         "upstream golden (TestCMUpstream), golden cases, doc examples (TestCMDocsExamples)",
	"chef":                           "upstream golden (TestCMUpstream), golden cases, doc examples (TestCMDocsExamples)",
	"salt_minion":                    "upstream golden (TestCMUpstream), golden cases, doc examples (TestCMDocsExamples)",
	"mcollective":                    "upstream golden (TestCMUpstream), golden cases, doc examples (TestCMDocsExamples)",
	"seed_random":                    "upstream golden (TestSeedRandomUpstream), golden cases",
	"bootcmd":                        "unit (TestBootcmdAndRuncmd), QEMU",
	"write_files":                    "unit (TestWriteFiles*), upstream golden for `source` (TestWriteFilesSourceUpstream), QEMU (TestDebian, TestDebianVendorModules: `source` from a host server)",
	"growpart":                       "unit (TestGrowpart*), QEMU",
	"resizefs":                       "unit (TestResizefsModule), QEMU",
	"disk_setup":                     "unit (TestDiskSetup*), QEMU",
	"mounts":                         "unit (TestMountsModule*), QEMU",
	"set_hostname":                   "unit (TestHostname), QEMU",
	"update_hostname":                "unit (TestUpdateHostnameRespectsAdminChange), QEMU",
	"update_etc_hosts":               "unit (TestUpdateEtcHosts), QEMU",
	"ca_certs":                       "upstream golden (TestCACertsUpstream), golden cases, QEMU (TestDebianModules)",
	"rsyslog":                        "upstream golden (TestRsyslogUpstream), golden cases, QEMU (TestDebianModules)",
	"users_groups":                   "golden (TestAccountsGolden), unit, QEMU",
	"ssh":                            "unit (TestSSH*), QEMU",
	"set_passwords":                  "upstream golden (TestSetPasswordsUpstream), golden cases, QEMU (TestDebianModules, TestDebianAdminPassRotation)",
	"keyboard":                       "upstream golden (TestKeyboardUpstream), golden cases",
	"locale":                         "upstream golden (TestLocaleUpstream), golden cases, QEMU (TestDebianModules)",
	"apt_pipelining":                 "unit (TestAptPipelining), doc examples",
	"apt_configure":                  "upstream golden (TestAptConfigureGolden), QEMU (TestDebianModules)",
	"ntp":                            "upstream golden (TestNTPUpstream, TestNTPTemplatesUpstream), golden cases, QEMU (TestDebianModules)",
	"timezone":                       "upstream golden (TestTimezoneUpstream), golden cases, QEMU (TestDebianModules)",
	"runcmd":                         "unit (TestBootcmdAndRuncmd), QEMU",
	"package_update_upgrade_install": "upstream golden (TestPackagesGolden), unit, QEMU (TestDebianModules)",
	"write_files_deferred":           "unit (TestWriteFiles)",
	"scripts_vendor":                 "unit (TestScriptsVendorPrefix)",
	"scripts_per_once":               "unit (TestRunStageFrequencies)",
	"scripts_per_boot":               "unit (TestScriptsUser)",
	"scripts_per_instance":           "unit (TestScriptsUser)",
	"scripts_user":                   "unit (TestScriptsUser), QEMU",
	"ssh_authkey_fingerprints":       "upstream golden (TestAuthkeyTableUpstream), unit",
	"keys_to_console":                "upstream golden (TestKeysToConsoleUpstream), QEMU (TestDebianModules)",
	"phone_home":                     "upstream golden (TestPhoneHomeUpstream), unit, QEMU (TestDebianModules, TestDebianAdminPassRotation)",
	"final_message":                  "unit (TestFinalMessage)",
	"power_state_change":             "unit (TestPowerState), QEMU",
	"apk_configure":                  "upstream golden (TestApkConfigureUpstream)",
	"resolv_conf":                    "upstream golden (TestResolvConfUpstream), golden cases",
	"yum_add_repo":                   "upstream golden (TestYumAddRepoUpstream), doc examples",
	"zypper_add_repo":                "upstream golden (TestZypperAddRepoUpstream), doc examples",
	"disable_ec2_metadata":           "upstream golden (TestVendorUpstream), golden cases, QEMU on Debian 12 (TestDebianVendorModules)",
	"byobu":                          "upstream golden (TestVendorUpstream), golden cases",
	"ubuntu_autoinstall":             "upstream golden (TestVendorUpstream), golden cases",
	"fan":                            "upstream golden (TestVendorUpstream), golden cases",
	"grub_dpkg":                      "upstream golden (TestVendorUpstream), golden cases, QEMU on Debian 12 (TestDebianVendorModules)",
	"spacewalk":                      "upstream golden (TestVendorUpstream), golden cases",
	"ssh_import_id":                  "upstream golden (TestVendorUpstream), golden cases",
	"snap":                           "upstream golden (TestVendorUpstream), golden cases",
	"landscape":                      "upstream golden (TestVendorUpstream), golden cases",
	"lxd":                            "upstream golden (TestVendorUpstream), golden cases",
	"wireguard":                      "upstream golden (TestVendorUpstream), golden cases",
	"reset_rmc":                      "upstream golden (TestVendorUpstream), golden cases",
	"ubuntu_drivers":                 "upstream golden (TestVendorUpstream), golden cases",
	"install_hotplug":                "upstream golden (TestVendorUpstream), golden cases",
	"raspberry_pi":                   "upstream golden (TestVendorUpstream), golden cases",
	"rh_subscription":                "upstream golden (TestVendorUpstream), golden cases",
	"ubuntu_pro":                     "upstream golden (TestVendorUpstream; the pro client's Python API faked as the `pro api` calls cloudroot makes), golden cases",
}

// partial says what an implemented module leaves out.
var partial = map[string]string{
	"install_hotplug": "partial: cloudroot has no hotplug handler; where cloud-init installs its udev rule, cloudroot warns and installs nothing",
}

// missing says why a cloud-init module is not implemented.
var missing = map[string]string{}

// otherStages are the stages of cloud-init's modules that its Debian
// lists leave out (config/cloud.cfg.tmpl lists them for other variants).
var otherStages = map[string]Stage{
	"resolv_conf":        StageInit,
	"wireguard":          StageConfig,
	"ubuntu_autoinstall": StageConfig,
	"apk_configure":      StageConfig,
	"ubuntu_pro":         StageConfig,
	"rh_subscription":    StageConfig,
	"spacewalk":          StageConfig,
	"yum_add_repo":       StageConfig,
	"zypper_add_repo":    StageConfig,
	"raspberry_pi":       StageConfig,
	"ubuntu_drivers":     StageFinal,
}
