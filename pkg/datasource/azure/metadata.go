package azure

// Reading: the provisioning document from the seed directory, the media
// and the agent directory; the IMDS instance document.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/imds"
	"github.com/cloudroot/cloudroot/pkg/media"
)

// MetadataHeader is sent on every IMDS request.
const (
	MetadataHeader = "Metadata"
	MetadataValue  = "true"
)

// ProvisioningLabel is the label prefix of Azure's provisioning DVD.
const ProvisioningLabel = "rd_rdfe_stable"

// InstancePath is the instance document's path for an API version
// (extended for APIVersion, which knows it).
func InstancePath(version string) string {
	p := "metadata/instance?api-version=" + version
	if version == APIVersion {
		p += "&extended=true"
	}
	return p
}

// InstanceURL is the instance document's URL at base.
func InstanceURL(base, version string) string {
	return strings.TrimRight(base, "/") + "/" + InstancePath(version)
}

// readIMDS fetches the instance document, falling back to the older API
// version when IMDS refuses the newer one with 400. A service that does
// not answer, or answers 404/410, is ErrNotFound.
func (s *Source) readIMDS(ctx context.Context, env datasource.Env) (string, []byte, error) {
	base := s.URL
	if base == "" {
		base = DefaultMetadataURL
	}
	c, err := env.IMDS(s.Name(), datasource.IMDSDefaults{
		BaseURLs: []string{base},
		Headers:  http.Header{MetadataHeader: {MetadataValue}},
		Timeout:  IMDSTimeout,
		Budget:   DefaultBudget,
	})
	if err != nil {
		return "", nil, err
	}
	var errs []error
	for _, v := range []string{APIVersion, FallbackAPIVersion} {
		b, err := c.Get(ctx, InstancePath(v))
		if err == nil {
			return InstanceURL(c.BaseURLs[0], v), b, nil
		}
		errs = append(errs, err)
		if imds.Status(err) != http.StatusBadRequest {
			break
		}
	}
	err = errors.Join(errs...)
	if imds.Absent(errs[len(errs)-1]) {
		return "", nil, fmt.Errorf("no IMDS (%w): %w", datasource.ErrNotFound, err)
	}
	return "", nil, err
}

// Candidates are the devices that may hold the provisioning document, in
// the order cloud-init's list_possible_azure_ds tries them: sr0, then
// ISO9660 and UDF volumes, then other CD-ROM drives (sr*) and volumes
// labelled rd_rdfe_stable* whose filesystem was not recognised (probing
// does not know UDF). Drives without a medium are left out.
func Candidates(devs []bootenv.Device) []bootenv.Device {
	var out []bootenv.Device
	seen := map[string]bool{}
	add := func(ok func(bootenv.Device) bool) {
		for _, d := range devs {
			if !seen[d.Path] && !d.NoMedium && ok(d) {
				seen[d.Path] = true
				out = append(out, d)
			}
		}
	}
	add(func(d bootenv.Device) bool { return d.Name == "sr0" })
	add(func(d bootenv.Device) bool { return d.FS.Type == "iso9660" || d.FS.Type == "udf" })
	add(func(d bootenv.Device) bool {
		return d.FS.Type == "" && (strings.HasPrefix(d.Name, "sr") || strings.HasPrefix(d.FS.Label, ProvisioningLabel))
	})
	return out
}

// findOVF looks for the provisioning document and fills in's OVF
// fields; they stay empty when there is none.
func (s *Source) findOVF(ctx context.Context, env datasource.Env, in *Input) error {
	o, raw, src, dev, err := s.searchOVF(ctx, env, in.DataDir)
	in.OVF, in.OVFRaw, in.OVFSource, in.OVFDevice = o, raw, src, dev
	return err
}

func (s *Source) searchOVF(ctx context.Context, env datasource.Env, dataDir string) (*OVFEnv, []byte, string, bool, error) {
	log := env.Logger(s.Name())
	var tried []string
	// try reads and parses one place's ovf-env.xml; done is true when the
	// search is over (found, or broken).
	try := func(fsys fs.FS, where string) (env *OVFEnv, raw []byte, done bool, err error) {
		tried = append(tried, where)
		name, raw, err := readOVF(fsys)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, nil, false, nil
			}
			log.Debug("unreadable provisioning media", "path", where, "error", err)
			return nil, nil, false, nil
		}
		env, err = ParseOVFEnv(raw)
		switch {
		case errors.Is(err, ErrNotAzureOVF):
			log.Debug("not Azure's ovf-env.xml", "path", where)
			return nil, nil, false, nil
		case err != nil:
			return nil, nil, true, fmt.Errorf("%s: %w", ovfErrorPath(where, name), err)
		}
		return env, raw, true, nil
	}
	fromRoot := func(dir string) (*OVFEnv, []byte, bool, error) {
		if env.Root == nil {
			return nil, nil, false, nil
		}
		sub, err := fs.Sub(env.Root, strings.Trim(dir, "/"))
		if err != nil {
			return nil, nil, false, nil
		}
		return try(sub, dir)
	}

	if o, raw, done, err := fromRoot(SeedDir); done {
		return o, raw, SeedDir, false, err
	}
	for _, dev := range Candidates(env.Devices) {
		if err := ctx.Err(); err != nil {
			log.Warn("budget ended before all provisioning media were read", "device", dev.Path)
			break
		}
		fsys, closeFS, err := s.open(env, dev)
		if err != nil {
			tried = append(tried, dev.Path)
			log.Debug("provisioning media not readable", "device", dev.Path, "error", err)
			continue
		}
		o, raw, done, err := try(fsys, dev.Path)
		closeFS()
		if done {
			return o, raw, dev.Path, true, err
		}
	}
	if o, raw, done, err := fromRoot(dataDir); done {
		return o, raw, dataDir, false, err
	}
	log.Debug("no provisioning document", "looked at", strings.Join(tried, ", "))
	return nil, nil, "", false, nil
}

// ovfErrorPath names the document in an error: dir/file, or "file on
// /dev/x".
func ovfErrorPath(where, name string) string {
	if strings.HasPrefix(where, "/dev/") || !strings.HasPrefix(where, "/") {
		return name + " on " + where
	}
	return strings.TrimRight(where, "/") + "/" + name
}

// readOVF reads ovf-env.xml, accepting the names a plain ISO9660 volume
// (no Rock Ridge or Joliet) gives it: upper case, '-' made '_'.
func readOVF(fsys fs.FS) (string, []byte, error) {
	var first error
	for _, n := range []string{OVFFile, "OVF-ENV.XML", "OVF_ENV.XML"} {
		b, err := datasource.ReadFile(fsys, n)
		if err == nil {
			return n, b, nil
		}
		if first == nil {
			first = err
		}
		if !datasource.IsNotExist(err) {
			return n, nil, err
		}
	}
	return OVFFile, nil, fmt.Errorf("%w: %w", fs.ErrNotExist, first)
}

// open opens a device's filesystem: Env.OpenFS when set; else UDF (read
// here) or, failing that, ISO9660/FAT through go-diskfs.
func (s *Source) open(env datasource.Env, dev bootenv.Device) (fs.FS, func(), error) {
	if env.OpenFS != nil {
		return env.OpenFS(dev)
	}
	return OpenMedia(dev)
}

// OpenMedia opens the filesystem on dev.Path with pkg/media: UDF when the
// volume has a UDF recognition sequence (a UDF/ISO9660 hybrid is read as
// UDF), else ISO9660 or FAT.
func OpenMedia(dev bootenv.Device) (fs.FS, func(), error) {
	return media.Open(dev.Path, media.Limits{UDF: true})
}
