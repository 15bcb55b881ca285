package pkgmgr

// apk_configure, as cloud-init 26.x's cc_apk_configure on Alpine: unless
// apk_repos.preserve_repositories, /etc/apk/repositories is rendered from
// templates/apk/repositories.tmpl (cloudroot's wording of cloud-init's
// built-in template) with the main repository of alpine_repo.version at
// base_url, and community, edge testing and a local repository as asked.

import (
	"context"
	"fmt"

	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
	"github.com/cloudroot/cloudroot/pkg/modules"
	"github.com/cloudroot/cloudroot/pkg/modules/internal/render"
	"github.com/cloudroot/cloudroot/pkg/state"
	"github.com/cloudroot/cloudroot/templates"
)

// Apk defaults.
const (
	DefaultAlpineMirror = "https://dl-cdn.alpinelinux.org/alpine"
	ApkRepositories     = "/etc/apk/repositories"
)

// ApkConfigure is cc_apk_configure.
var ApkConfigure = modules.Module{
	Name:       "apk_configure",
	ActivateBy: []string{"apk_repos"},
	Frequency:  state.PerInstance,
	Keys:       []string{"apk_repos"},
	Distros:    []string{"alpine"},
	Run:        modules.Typed(runApkConfigure),
}

// apkConfig is apk_repos, decoded once; Write is false when cloud-init
// would leave the file alone.
type apkConfig struct {
	Write     bool
	BaseURL   string
	Version   string
	Community any
	Testing   any
	LocalRepo string
}

// apkKeys are the module's keys as the decoder reads them (apk_repos
// and alpine_repo are ignored unless they are mappings).
type apkKeys struct {
	Repos *struct {
		Preserve bool `cfg:"preserve_repositories"`
		Alpine   *struct {
			Version    any  `cfg:"version"`
			HasBaseURL bool `cfg:"base_url,present"`
			BaseURL    any  `cfg:"base_url"`
			Community  any  `cfg:"community_enabled"`
			Testing    any  `cfg:"testing_enabled"`
		} `cfg:"alpine_repo,loose"`
		HasLocalRepo bool `cfg:"local_repo_base_url,present"`
		LocalRepo    any  `cfg:"local_repo_base_url"`
	} `cfg:"apk_repos,loose"`
}

func decodeApk(k apkKeys) apkConfig {
	var a apkConfig
	sec := k.Repos
	if sec == nil || sec.Preserve {
		return a
	}
	repo := sec.Alpine
	if repo == nil || !pyval.Truthy(repo.Version) {
		return a
	}
	a.Write = true
	a.Version = pyval.Str(repo.Version)
	a.BaseURL = DefaultAlpineMirror
	if repo.HasBaseURL {
		a.BaseURL = pyval.Str(repo.BaseURL)
	}
	a.Community, a.Testing = repo.Community, repo.Testing
	if sec.HasLocalRepo {
		a.LocalRepo = pyval.Str(sec.LocalRepo)
	}
	return a
}

func runApkConfigure(ctx context.Context, c *modules.Context, k apkKeys) error {
	a := decodeApk(k)
	if !a.Write {
		c.Log.Debug("Skipping module named apk_configure: nothing to write")
		return nil
	}
	tmpl, err := templates.FS.ReadFile("apk/repositories.tmpl")
	if err != nil {
		return fmt.Errorf("apk_configure: %w", err)
	}
	out, err := render.Jinja(tmpl, map[string]any{
		"alpine_baseurl":    a.BaseURL,
		"alpine_version":    a.Version,
		"community_enabled": pyval.Truthy(a.Community),
		"testing_enabled":   pyval.Truthy(a.Testing),
		"local_repo":        a.LocalRepo,
	})
	if err != nil {
		return fmt.Errorf("apk_configure: rendering %s: %w", ApkRepositories, err)
	}
	return c.Root.WriteFile(ApkRepositories, []byte(out), 0o644)
}
