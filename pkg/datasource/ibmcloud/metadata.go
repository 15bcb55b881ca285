package ibmcloud

// Looking at the machine (Xen, the provisioning marker files) and reading
// the config disk's files.

import (
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/datasource"
)

// Files in the target root that mark a template's provisioning boot.
const (
	ProvisioningConfig = "/root/provisioningConfiguration.cfg"
	ProvisioningLog    = "/root/swinstall.log"
)

// isXen is _is_xen: <proc>/xen exists. cloudroot also takes DMI sys_vendor
// "Xen" (an HVM guest whose xenfs is not loaded yet, as in an initramfs).
func isXen(proc string, dmi bootenv.DMI) bool {
	if _, err := os.Stat(filepath.Join(proc, "xen")); err == nil {
		return true
	}
	return strings.EqualFold(strings.TrimSpace(dmi.SysVendor), "Xen")
}

func exists(root fs.FS, name string) (fs.FileInfo, bool) {
	if root == nil {
		return nil, false
	}
	fi, err := fs.Stat(root, strings.TrimPrefix(name, "/"))
	return fi, err == nil
}

// isProvisioning is _is_ibm_provisioning: the provisioning config exists
// in root, and the install log either does not exist or was written
// during this boot (after <proc>/1/environ, PID 1's start).
func isProvisioning(root fs.FS, proc string, log *slog.Logger) bool {
	if _, ok := exists(root, ProvisioningConfig); !ok {
		log.Debug("not provisioning: no config", "path", ProvisioningConfig)
		return false
	}
	lfi, ok := exists(root, ProvisioningLog)
	if !ok {
		log.Debug("provisioning: config exists, no install log", "path", ProvisioningConfig)
		return true
	}
	ref := filepath.Join(proc, "1", "environ")
	rfi, err := os.Stat(ref)
	if err != nil {
		log.Debug("not provisioning: install log exists, no reference file", "path", ref)
		return false
	}
	current := lfi.ModTime().After(rfi.ModTime())
	log.Debug("install log", "path", ProvisioningLog, "current_boot", current)
	return current
}

// readFS reads the openstack/latest files of the disk at fsys's root. A
// file that cannot be read is absent, as in cloud-init (the error is
// logged; a missing meta_data.json is then Build's to report).
func readFS(fsys fs.FS, in *Input, log *slog.Logger) error {
	var mdErr error
	for _, f := range []struct {
		path string
		dst  *[]byte
	}{
		{PathMetaData, &in.MetaData}, {PathUserData, &in.UserData},
		{PathVendorData, &in.VendorData}, {PathNetworkData, &in.NetworkData},
	} {
		b, err := datasource.ReadFile(fsys, f.path)
		if err != nil {
			if !datasource.IsNotExist(err) {
				log.Warn("unreadable file, taken as absent", "path", in.Source+"/"+f.path, "error", err)
				if f.path == PathMetaData {
					mdErr = err
				}
			}
			continue
		}
		*f.dst = b
	}
	if in.MetaData == nil && mdErr != nil {
		return fmt.Errorf("%s: reading %s (%w): %w", in.Source, PathMetaData, ErrBroken, mdErr)
	}
	return nil
}
