package disk

// cc_mounts' swap file: `swap: {filename, size, maxsize}`, pure parts.

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// DefaultSwapFile is cloud-init's default swap file name.
const DefaultSwapFile = "/swap.img"

// SwapConfig is the `swap` key.
type SwapConfig struct {
	Filename string
	Size     int64 // bytes; 0 with Auto unset: no swap
	Auto     bool  // size: auto
	MaxSize  int64 // bytes; 0: none given
}

// Enabled reports whether a swap file is wanted.
func (s SwapConfig) Enabled() bool { return s.Filename != "" && (s.Auto || s.Size > 0) }

// ParseSwap reads the `swap` key (nil: no swap).
func ParseSwap(v any) (SwapConfig, error) {
	if v == nil {
		return SwapConfig{}, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return SwapConfig{}, fmt.Errorf("swap: want a mapping, got %T", v)
	}
	s := SwapConfig{Filename: DefaultSwapFile}
	if f, ok := m["filename"]; ok {
		s.Filename = scalar(f)
	}
	if sz, ok := m["size"]; ok && sz != nil {
		if str, ok := sz.(string); ok && strings.EqualFold(str, "auto") {
			s.Auto = true
		} else {
			n, err := ParseHumanSize(sz)
			if err != nil {
				return s, fmt.Errorf("swap.size: %w", err)
			}
			s.Size = n
		}
	}
	if mx, ok := m["maxsize"]; ok && mx != nil {
		n, err := ParseHumanSize(mx)
		if err != nil {
			return s, fmt.Errorf("swap.maxsize: %w", err)
		}
		s.MaxSize = n
	}
	return s, nil
}

// ParseHumanSize is cloud-init's human2bytes: a number of bytes, or a
// number with a B/K/M/G/T suffix (powers of 1024).
func ParseHumanSize(v any) (int64, error) {
	switch t := v.(type) {
	case int:
		return int64(t), nil
	case int64:
		return t, nil
	case float64:
		return int64(t), nil
	case string:
		s := strings.TrimSpace(t)
		mult := int64(1)
		if s != "" {
			switch strings.ToUpper(s[len(s)-1:]) {
			case "B":
				s = s[:len(s)-1]
			case "K":
				mult, s = 1<<10, s[:len(s)-1]
			case "M":
				mult, s = 1<<20, s[:len(s)-1]
			case "G":
				mult, s = 1<<30, s[:len(s)-1]
			case "T":
				mult, s = 1<<40, s[:len(s)-1]
			}
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || f < 0 {
			return 0, fmt.Errorf("%q is not a size", t)
		}
		return int64(f * float64(mult)), nil
	}
	return 0, fmt.Errorf("%v is not a size", v)
}

// SuggestedSwapSize is cloud-init's suggested_swapsize: memory-based, at
// most maxsize (0: none given), at most a quarter of the free space when no
// maxsize is given and 90% of it when one is (avail < 0: unknown).
func SuggestedSwapSize(mem, maxsize, avail int64) int64 {
	const gb = 1 << 30
	suggMax := mem * 2
	switch {
	case avail >= 0 && maxsize == 0:
		maxsize = min(avail/4, suggMax)
	case avail >= 0 && float64(maxsize) > float64(avail)*0.9:
		maxsize = int64(float64(avail) * 0.9)
	case maxsize == 0:
		maxsize = suggMax
	}
	var minsize int64
	switch {
	case mem < 4*gb:
		minsize = mem
	case mem < 16*gb:
		minsize = 4 * gb
	default:
		minsize = int64(math.Round(math.Sqrt(float64(mem)/gb))) * gb
	}
	return min(minsize, maxsize)
}

// ParseMemTotal reads MemTotal (bytes) from /proc/meminfo's text.
func ParseMemTotal(meminfo []byte) (int64, error) {
	for _, l := range strings.Split(string(meminfo), "\n") {
		if v, ok := strings.CutPrefix(l, "MemTotal:"); ok {
			f := strings.Fields(v)
			if len(f) == 0 {
				break
			}
			n, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("meminfo MemTotal %q: %w", v, err)
			}
			if len(f) > 1 && strings.EqualFold(f[1], "kB") {
				n *= 1024
			}
			return n, nil
		}
	}
	return 0, fmt.Errorf("meminfo: no MemTotal")
}
