package modules_test

import (
	"testing"

	"github.com/cloudroot/cloudroot/pkg/modules"
	"github.com/cloudroot/cloudroot/pkg/modules/users"
)

// TestAccountsGolden runs users_groups, ssh and set_passwords, in their
// init-stage order (set_passwords applies ssh_pwauth), on each
// testdata/accounts case.
func TestAccountsGolden(t *testing.T) {
	modules.AccountsGolden(t, []modules.Module{users.UsersGroups, modules.SSH, users.SetPasswords})
}
