package distro

// Service managers. Each builds the command cloud-init's manage_service
// runs for an action on a service: systemctl on systemd; OpenRC's
// rc-service/rc-update on Alpine; FreeBSD's service(8), which can enable;
// and SysV init's `service NAME ACTION` elsewhere, where "enable" can only
// start the service and "reload" restarts it.

import (
	"errors"
	"fmt"
	"sync"
)

// Service actions, as cloud-init names them.
const (
	ActionStart     = "start"
	ActionStop      = "stop"
	ActionRestart   = "restart"
	ActionReload    = "reload"
	ActionTryReload = "try-reload"
	ActionEnable    = "enable"
	ActionDisable   = "disable"
	ActionStatus    = "status"
)

// Actions lists the actions every ServiceManager accepts.
var Actions = []string{ActionStart, ActionStop, ActionRestart, ActionReload, ActionTryReload, ActionEnable, ActionDisable, ActionStatus}

// ErrUnknownAction is an action a service manager does not know.
var ErrUnknownAction = errors.New("unknown service action")

// Init systems.
const (
	InitSystemd  = "systemd"
	InitOpenRC   = "openrc"
	InitSysVinit = "sysvinit"
	InitBSD      = "bsdrc"
)

// ServiceManager builds service commands for one init system.
type ServiceManager interface {
	// Name is the init system: systemd, openrc, sysvinit or bsdrc.
	Name() string
	// Command is the command for action on service; extra arguments follow.
	Command(action, service string, extra ...string) (Cmd, error)
}

type table struct {
	name   string
	prefix []string
	verbs  func() map[string][]string // action → argv after prefix; "%s" is the service (built on first use)
}

func (t table) Name() string { return t.name }

func (t table) Command(action, service string, extra ...string) (Cmd, error) {
	v, ok := t.verbs()[action]
	if !ok {
		return Cmd{}, fmt.Errorf("%s %s: %w %q", t.name, service, ErrUnknownAction, action)
	}
	argv := append([]string(nil), t.prefix...)
	for _, a := range v {
		if a == "%s" {
			a = service
		}
		argv = append(argv, a)
	}
	return Cmd{Argv: append(argv, extra...)}, nil
}

// Systemd is systemctl.
var Systemd ServiceManager = table{name: InitSystemd, prefix: []string{"systemctl"}, verbs: sync.OnceValue(func() map[string][]string {
	return map[string][]string{
		ActionStart: {"start", "%s"}, ActionStop: {"stop", "%s"}, ActionRestart: {"restart", "%s"},
		ActionReload: {"reload-or-restart", "%s"}, ActionTryReload: {"try-reload-or-restart", "%s"},
		ActionEnable: {"enable", "%s"}, ActionDisable: {"disable", "%s"}, ActionStatus: {"status", "%s"},
	}
})}

// SysVinit is `service NAME ACTION`.
var SysVinit ServiceManager = table{name: InitSysVinit, prefix: []string{"service"}, verbs: sync.OnceValue(func() map[string][]string {
	return map[string][]string{
		ActionStart: {"%s", "start"}, ActionStop: {"%s", "stop"}, ActionRestart: {"%s", "restart"},
		ActionReload: {"%s", "restart"}, ActionTryReload: {"%s", "restart"},
		ActionEnable: {"%s", "start"}, ActionDisable: {"%s", "stop"}, ActionStatus: {"%s", "status"},
	}
})}

// OpenRC is Alpine's rc-service and rc-update (extra arguments are not
// passed, as cloud-init does not pass them).
var OpenRC ServiceManager = openrc{}

type openrc struct{}

func (openrc) Name() string { return InitOpenRC }

func (openrc) Command(action, service string, _ ...string) (Cmd, error) {
	svc := []string{"rc-service", "--nocolor", service}
	upd := []string{"rc-update", "--nocolor"}
	switch action {
	case ActionStart, ActionStop, ActionRestart, ActionStatus:
		return Cmd{Argv: append(svc, action)}, nil
	case ActionReload, ActionTryReload:
		return Cmd{Argv: append(svc, "restart")}, nil
	case ActionEnable:
		return Cmd{Argv: append(upd, "add", service)}, nil
	case ActionDisable:
		return Cmd{Argv: append(upd, "del", service)}, nil
	}
	return Cmd{}, fmt.Errorf("openrc %s: %w %q", service, ErrUnknownAction, action)
}

// BSDrc is FreeBSD's service(8).
var BSDrc ServiceManager = table{name: InitBSD, prefix: []string{"service"}, verbs: sync.OnceValue(func() map[string][]string {
	return map[string][]string{
		ActionStart: {"%s", "start"}, ActionStop: {"%s", "stop"}, ActionRestart: {"%s", "restart"},
		ActionReload: {"%s", "restart"}, ActionTryReload: {"%s", "restart"},
		ActionEnable: {"%s", "enable"}, ActionDisable: {"%s", "disable"}, ActionStatus: {"%s", "status"},
		"enabled": {"%s", "enabled"}, "onestart": {"%s", "onestart"}, "onestop": {"%s", "onestop"},
		"onestatus": {"%s", "onestatus"},
	}
})}

// serviceManager is the manager cloud-init uses for a variant under init:
// systemctl whenever systemd runs; Alpine's own OpenRC commands; FreeBSD's
// service(8); `service` otherwise (Gentoo's OpenRC included, as upstream).
func serviceManager(variant, init string) ServiceManager {
	switch {
	case init == InitSystemd:
		return Systemd
	case variant == "alpine":
		return OpenRC
	case variant == "freebsd" || variant == "dragonfly":
		return BSDrc
	}
	return SysVinit
}
