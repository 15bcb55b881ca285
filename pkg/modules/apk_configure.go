package modules

// apk_configure, as cloud-init 26.x's cc_apk_configure on Alpine: unless
// apk_repos.preserve_repositories, /etc/apk/repositories is rendered from
// templates/apk/repositories.tmpl (cloudroot's wording of cloud-init's
// built-in template) with the main repository of alpine_repo.version at
// base_url, and community, edge testing and a local repository as asked.

import (
	"context"
	"fmt"

	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
	"github.com/cloudroot/cloudroot/pkg/state"
	"github.com/cloudroot/cloudroot/templates"
)

// Apk defaults.
const (
	DefaultAlpineMirror = "https://dl-cdn.alpinelinux.org/alpine"
	ApkRepositories     = "/etc/apk/repositories"
)

// ApkConfigure is cc_apk_configure.
var ApkConfigure = Module{
	Name:       "apk_configure",
	ActivateBy: []string{"apk_repos"},
	Frequency:  state.PerInstance,
	Keys:       []string{"apk_repos"},
	Distros:    []string{"alpine"},
	Run:        runApkConfigure,
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

func decodeApk(cfg Config) apkConfig {
	var a apkConfig
	sec, _ := cfg["apk_repos"].(map[string]any)
	if len(sec) == 0 || TranslateBool(sec["preserve_repositories"], false) {
		return a
	}
	repo, _ := sec["alpine_repo"].(map[string]any)
	if len(repo) == 0 || !pyval.Truthy(repo["version"]) {
		return a
	}
	a.Write = true
	a.Version = pyval.Str(repo["version"])
	a.BaseURL = DefaultAlpineMirror
	if v, ok := repo["base_url"]; ok {
		a.BaseURL = pyval.Str(v)
	}
	a.Community, a.Testing = repo["community_enabled"], repo["testing_enabled"]
	if v, ok := sec["local_repo_base_url"]; ok {
		a.LocalRepo = pyval.Str(v)
	}
	return a
}

func runApkConfigure(ctx context.Context, c *Context) error {
	a := decodeApk(c.Config)
	if !a.Write {
		c.Log.Debug("Skipping module named apk_configure: nothing to write")
		return nil
	}
	tmpl, err := templates.FS.ReadFile("apk/repositories.tmpl")
	if err != nil {
		return fmt.Errorf("apk_configure: %w", err)
	}
	out, err := renderJinjaTemplate(string(tmpl), map[string]any{
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
