package userdata

import (
	"io/fs"
	"path"

	"github.com/cloudroot/cloudroot/pkg/state"
)

// File is a script or boothook to write inside the target root.
type File struct {
	// Path is absolute inside the target root.
	Path    string
	Mode    fs.FileMode
	Content []byte
	// Kind is "script", "per-boot", "per-instance", "per-once" or "boothook".
	Kind string
}

// Files lists where the scripts and boothooks of r land for an instance, as
// cloud-init lays them out. Vendor-data scripts go under scripts/vendor.
// Boothooks are to be run, in order, every boot in the init stage with
// BoothookEnv; scripts are run later by scripts_user/scripts_vendor and
// scripts_per_{boot,instance,once}.
func (r *Result) Files(instanceID string, vendor bool) []File {
	idir := state.InstanceDir(instanceID)
	scripts := path.Join(idir, "scripts")
	perRoot := path.Join(state.CloudDir, "scripts")
	if vendor {
		scripts = path.Join(scripts, "vendor")
		perRoot = state.ScriptsVendor
	}
	var out []File
	add := func(dir, kind string, l []Script) {
		for _, s := range l {
			out = append(out, File{Path: path.Join(dir, s.Name), Mode: 0o700, Content: s.Content, Kind: kind})
		}
	}
	add(scripts, "script", r.InstanceScripts)
	add(path.Join(perRoot, "per-boot"), "per-boot", r.PerBoot)
	add(path.Join(perRoot, "per-instance"), "per-instance", r.PerInstance)
	add(path.Join(perRoot, "per-once"), "per-once", r.PerOnce)
	add(path.Join(idir, "boothooks"), "boothook", r.Boothooks)
	return out
}

// BoothookEnv is the environment a boothook runs with (added to the usual one).
func BoothookEnv(instanceID string) []string {
	if instanceID == "" {
		return nil
	}
	return []string{"INSTANCE_ID=" + instanceID}
}
