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
	HasRPi bool `cfg:"rpi,present"`
	RPi    any  `cfg:"rpi"`
}

func runRaspberryPi(ctx context.Context, c *Context, cfg raspberryPiConfig) error {
	raw, ok := cfg.RPi, cfg.HasRPi
	if !ok {
		return nil
	}
	rpi, ok := raw.(map[string]any)
	if !ok {
		c.Warnf("Invalid value for rpi: %s", pyval.Str(raw))
		return nil
	}
	if len(rpi) == 0 {
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
	for _, key := range sortedKeys(rpi) {
		switch key {
		case "enable_usb_gadget":
			on, ok := rpi[key].(bool)
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
			ifaces, ok := rpi[key].(map[string]any)
			if !ok {
				c.Warnf("Invalid value for rpi: %s", pyval.Str(rpi[key]))
				return nil
			}
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
						if rpiSerial(ctx, c, v, raspi) {
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
func rpiSerial(ctx context.Context, c *Context, v any, raspi func(string, bool) error) bool {
	console, hw := false, false
	field := func(m map[string]any, name string) bool {
		x, ok := m[name]
		if !ok {
			return false
		}
		b, ok := x.(bool)
		if !ok {
			c.Warnf("Invalid value for interfaces.serial.%s: %s", name, pyval.Str(x))
			return false
		}
		return b
	}
	switch t := v.(type) {
	case map[string]any:
		console, hw = field(t, "console"), field(t, "hardware")
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
