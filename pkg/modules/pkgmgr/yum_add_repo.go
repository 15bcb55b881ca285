package pkgmgr

// yum_add_repo, as cloud-init 26.x's cc_yum_add_repo: each yum_repos
// entry becomes <yum_repo_dir>/<id>.repo (spaces in the id become "-"),
// unless that file exists already; an entry needs baseurl, metalink or
// mirrorlist. Option names are lower-cased, trimmed and "-" becomes "_";
// values are written as Python's ConfigParser writes them (booleans as
// 1/0, lists one per continuation line). Options are written in name order
// (cloud-init keeps the YAML order, which the merged config no longer has).

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
	"github.com/cloudroot/cloudroot/pkg/modules"
	"github.com/cloudroot/cloudroot/pkg/state"
)

// DefaultYumRepoDir is where repo files go unless yum_repo_dir says.
const DefaultYumRepoDir = "/etc/yum.repos.d/"

// YumAddRepo is cc_yum_add_repo.
var YumAddRepo = modules.Module{
	Name:       "yum_add_repo",
	ActivateBy: []string{"yum_repos"},
	Frequency:  state.PerInstance,
	Keys:       []string{"yum_repos", "yum_repo_dir"},
	Distros: []string{"almalinux", "amazon", "azurelinux", "centos", "cloudlinux", "eurolinux", "fedora", "mariner",
		"openeuler", "OpenCloudOS", "openmandriva", "photon", "rhel", "rocky", "TencentOS", "virtuozzo"},
	Run: modules.Typed(runYumAddRepo),
}

// yumRepo is one repository: its canonical id and options.
type yumRepo struct {
	ID      string
	Name    string // as given, for messages
	Options map[string]string
}

// decodeYumRepos reads yum_repos in id order, with the options
// normalised and formatted.
func decodeYumRepos(k yumKeys) (dir string, repos []yumRepo) {
	dir = DefaultYumRepoDir
	if k.HasDir {
		dir = k.Dir
	}
	for _, e := range k.Repos.Entries {
		id := e.Key
		r := yumRepo{ID: strings.ReplaceAll(id, " ", "-"), Name: id, Options: map[string]string{}}
		for _, o := range pyval.DictOf(e.Value).Entries {
			if k := strings.ReplaceAll(strings.TrimSpace(strings.ToLower(o.Key)), "-", "_"); k != "" {
				r.Options[k] = yumValue(o.Value)
			}
		}
		repos = append(repos, r)
	}
	return dir, repos
}

// yumValue is _format_repo_value.
func yumValue(v any) string {
	switch t := v.(type) {
	case bool:
		if t {
			return "1"
		}
		return "0"
	case []any:
		parts := make([]string, len(t))
		for i, e := range t {
			parts[i] = yumValue(e)
		}
		return strings.Join(parts, "\n")
	case string:
		return t
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64)
	}
	return pyval.Str(v)
}

// yumKeys are the module's keys as the decoder reads them; each repo's
// options are a pyval.Dict (their names are yum's, normalised here).
type yumKeys struct {
	HasDir bool       `cfg:"yum_repo_dir,present"`
	Dir    string     `cfg:"yum_repo_dir"`
	Repos  pyval.Dict `cfg:"yum_repos"`
}

func runYumAddRepo(ctx context.Context, c *modules.Context, k yumKeys) error {
	dir, repos := decodeYumRepos(k)
	if len(repos) == 0 {
		return nil
	}
	pending := map[string]bool{}
	var errs []string
	for _, r := range repos {
		fn := path.Join(dir, r.ID+".repo")
		if c.Root.Exists(fn) {
			c.Log.Info(fmt.Sprintf("Skipping repo %s, file %s already exists!", r.Name, fn))
			continue
		}
		if pending[r.ID] {
			c.Log.Info(fmt.Sprintf("Skipping repo %s, file %s already pending!", r.Name, fn))
			continue
		}
		_, b := r.Options["baseurl"]
		_, ml := r.Options["metalink"]
		_, mr := r.Options["mirrorlist"]
		if !b && !ml && !mr {
			c.Warnf("Repository %s should contain at least one of the following configuration entries: baseurl, metalink, mirrorlist, skipping!", r.Name)
			continue
		}
		pending[r.ID] = true
		if err := c.Root.WriteFile(fn, []byte(yumRepoFile(r, c.Now().UTC().Format(modules.RFC2822))), 0o644); err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", fn, err))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("yum_add_repo: %s", strings.Join(errs, "; "))
	}
	return nil
}

// yumRepoFile is _format_repository_config: a header, then the section
// as ConfigParser writes it.
func yumRepoFile(r yumRepo, stamp string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Created by cloud-init on %s\n[%s]\n", stamp, r.ID)
	keys := make([]string, 0, len(r.Options))
	for k := range r.Options {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s = %s\n", k, strings.ReplaceAll(r.Options[k], "\n", "\n\t"))
	}
	b.WriteString("\n")
	return b.String()
}
