// Package serialtest stands a pseudo-terminal in for a serial port in the
// datasources' tests: the test serves the master side, the code under test
// opens the slave side with package serial. Pseudo-terminals are used on
// Linux only; elsewhere the test is skipped.
package serialtest
