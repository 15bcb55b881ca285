package modules

// raspberry_pi, as cloud-init 26.x's cc_raspberry_pi (Raspberry Pi OS):
// `rpi.enable_usb_gadget` runs /usr/bin/rpi-usb-gadget on|off -f;
// `rpi.interfaces` spi, i2c and onewire (booleans) and serial (a boolean
// for the console, or {console, hardware}; the hardware UART follows the
// console except on a Pi 5) go to `raspi-config nonint do_*` with 0 for on
// and 1 for off. Bad values are warnings; any change that took reboots the
// machine at the end (`shutdown -r now`), as cloud-init does.
//
// Keys are handled in name order: cloudroot's decoded config keeps no
// YAML order (cloud-init takes the mapping's own order).

import (
	"context"
	"fmt"
	"sort"

	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
	"github.com/cloudroot/cloudroot/pkg/state"
)

// Raspberry Pi paths and messages (cloud-init's).
const (
	RPIUSBGadget  = "/usr/bin/rpi-usb-gadget"
	RaspiConfig   = "/usr/bin/raspi-config"
	rpiRebootNote = "Rebooting to apply config.txt changes..."
)

var rpiInterfaces = map[string]string{"spi": "do_spi", "i2c": "do_i2c", "onewire": "do_onewire"}

// RaspberryPi is cc_raspberry_pi.
var RaspberryPi = Module{
	Name:       "raspberry_pi",
	Frequency:  state.PerInstance,
	Keys:       []string{"rpi"},
	Distros:    []string{"raspberry-pi-os"},
	ActivateBy: []string{"rpi"},
	Run:        Typed(runRaspberryPi),
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// raspberryPiConfig is the module's configuration: rpi as given, its shape
// checked by the module with the module's own message.
type raspberryPiConfig struct {
	HasRPi bool      `cfg:"rpi,present"`
	RPi    any       `cfg:"rpi"`
	Keys   rpiConfig `cfg:"rpi,loose"`
}

// rpiConfig is the rpi mapping. All is walked in key order as the
// handler's loop over its items (unknown keys are warned about in turn);
// the keys it knows are read from their fields.
type rpiConfig struct {
	All             map[string]any `cfg:",all"`
	EnableUSBGadget any            `cfg:"enable_usb_gadget"`
	Interfaces      any            `cfg:"interfaces"`
	// Ifaces is interfaces when it is a mapping, walked in key order
	// (unknown interfaces are warned about).
	Ifaces struct {
		All    map[string]any `cfg:",all"`
		Serial rpiSerialCfg   `cfg:"serial,loose"`
	} `cfg:"interfaces,loose"`
}

// rpiSerialCfg is interfaces.serial when it is a mapping.
type rpiSerialCfg struct {
	Console  pyval.Opt `cfg:"console"`
	Hardware pyval.Opt `cfg:"hardware"`
}

func runRaspberryPi(ctx context.Context, c *Context, cfg raspberryPiConfig) error {
	raw, ok := cfg.RPi, cfg.HasRPi
	if !ok {
		return nil
	}
	if !isMapping(raw) {
		c.Warnf("Invalid value for rpi: %s", pyval.Str(raw))
		return nil
	}
	rpi := cfg.Keys
	if len(rpi.All) == 0 {
		c.Log.Debug("Empty value for rpi. Skipping...")
		return nil
	}
	reboot := false
	raspi := func(fn string, on bool) error {
		v := "1"
		if on {
			v = "0"
		}
		_, err := c.RunCapture(ctx, RaspiConfig, "nonint", fn, v)
		return err
	}
	for _, key := range sortedKeys(rpi.All) {
		switch key {
		case "enable_usb_gadget":
			on, ok := rpi.EnableUSBGadget.(bool)
			if !ok {
				return fmt.Errorf("Invalid value for enable_usb_gadget")
			}
			if !c.Root.Exists(RPIUSBGadget) {
				c.Warnf("rpi-usb-gadget script not found: %s", RPIUSBGadget)
				continue
			}
			arg := "off"
			if on {
				arg = "on"
			}
			if err := c.RunCmd(ctx, DistroCmd(RPIUSBGadget, arg, "-f")); err != nil {
				c.Warnf("Failed to configure rpi-usb-gadget: %v", err)
				continue
			}
			reboot = true
		case "interfaces":
			if !isMapping(rpi.Interfaces) {
				c.Warnf("Invalid value for rpi: %s", pyval.Str(rpi.Interfaces))
				return nil
			}
			ifaces := rpi.Ifaces.All
			if len(ifaces) == 0 {
				c.Log.Debug("Empty value for interfaces. Skipping...")
				return nil
			}
			for _, sub := range sortedKeys(ifaces) {
				v := ifaces[sub]
				fn, known := rpiInterfaces[sub]
				switch {
				case sub == "serial":
					switch v.(type) {
					case bool, map[string]any:
						if rpiSerial(ctx, c, v, rpi.Ifaces.Serial, raspi) {
							reboot = true
						}
					default:
						c.Warnf("Invalid value for interfaces.serial: %s", pyval.Str(v))
					}
				case !known:
					c.Warnf("Invalid key for interfaces: %s", sub)
				default:
					on, ok := v.(bool)
					if !ok {
						c.Warnf("Invalid value for interfaces.%s: %s", sub, pyval.Str(v))
						continue
					}
					if err := raspi(fn, on); err != nil {
						c.Warnf("Failed to configure %s: %v", sub, err)
						continue
					}
					reboot = true
				}
			}
		default:
			c.Warnf("Unsupported key: %s", key)
		}
	}
	if !reboot {
		return nil
	}
	return c.RunCmd(ctx, DistroCmd("shutdown", "-r", "now", rpiRebootNote))
}

// rpiSerial is configure_serial_interface; true when both steps took.
// v is interfaces.serial as given, m its keys when it is a mapping.
func rpiSerial(ctx context.Context, c *Context, v any, m rpiSerialCfg, raspi func(string, bool) error) bool {
	console, hw := false, false
	field := func(o pyval.Opt, name string) bool {
		if !o.Given {
			return false
		}
		b, ok := o.Value.(bool)
		if !ok {
			c.Warnf("Invalid value for interfaces.serial.%s: %s", name, pyval.Str(o.Value))
			return false
		}
		return b
	}
	switch t := v.(type) {
	case map[string]any:
		console, hw = field(m.Console, "console"), field(m.Hardware, "hardware")
	case bool:
		console = t
	}
	_, err := c.RunCapture(ctx, RaspiConfig, "nonint", "is_pifive")
	if err != nil && console {
		hw = true
	}
	if err := raspi("do_serial_cons", console); err != nil {
		c.Warnf("Failed to configure serial console: %v", err)
		return false
	}
	if err := raspi("do_serial_hw", hw); err != nil {
		c.Warnf("Failed to configure serial hardware: %v", err)
		return false
	}
	return true
}
