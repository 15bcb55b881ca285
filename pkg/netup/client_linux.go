package netup

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/dhcpv4/nclient4"
)

// acquire runs DISCOVER/OFFER/REQUEST/ACK over c and converts the ACK. The
// client's timeout and retries are set by its creator.
func acquire(ctx context.Context, c *nclient4.Client, iface string, o Options) (*Lease, *nclient4.Lease, error) {
	raw, err := c.Request(ctx, o.modifiers()...)
	if err != nil {
		return nil, nil, fmt.Errorf("DHCPv4 on %s: %w", iface, err)
	}
	l, err := leaseFromACK(iface, HardwareAddr(c.InterfaceAddr()), raw.ACK)
	if err != nil {
		return nil, raw, fmt.Errorf("DHCPv4 on %s: %w", iface, err)
	}
	l.Acquired = raw.CreationTime
	return l, raw, nil
}

// slogDHCP adapts nclient4's logger interface to slog at debug level.
type slogDHCP struct {
	log   *slog.Logger
	iface string
}

func (s slogDHCP) Printf(format string, v ...any) {
	s.log.Debug("dhcpv4: "+fmt.Sprintf(format, v...), "iface", s.iface)
}

func (s slogDHCP) PrintMessage(prefix string, m *dhcpv4.DHCPv4) {
	s.log.Debug("dhcpv4: "+prefix, "iface", s.iface, "type", m.MessageType().String(),
		"xid", m.TransactionID.String(), "yiaddr", m.YourIPAddr.String())
}

// clientOptions are the nclient4 options derived from o.
func (o Options) clientOptions(iface string) []nclient4.ClientOpt {
	return []nclient4.ClientOpt{
		nclient4.WithTimeout(o.dhcpTimeout()),
		nclient4.WithRetry(o.dhcpRetries()),
		nclient4.WithLogger(slogDHCP{log: o.logger(), iface: iface}),
	}
}

// releaseVia sends DHCPRELEASE for raw over c.
func releaseVia(c *nclient4.Client, raw *nclient4.Lease) error {
	if raw == nil || raw.ACK == nil {
		return errors.New("no DHCP lease to release")
	}
	return c.Release(raw)
}
