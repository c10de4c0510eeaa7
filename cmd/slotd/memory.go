package main

import (
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// parseMemoryLimit reads --memory-limit: a size as GOMEMLIMIT writes it
// (512MiB, 2GiB, bytes without a unit), off, or auto: GOMEMLIMIT when the
// environment sets it, else 3/4 of machine() (0 when unknown: no limit),
// leaving the rest to stacks, buffers outside the heap and the page cache.
func parseMemoryLimit(v string, getenv func(string) string, machine func() int64) (int64, error) {
	switch v {
	case "off":
		return 0, nil
	case "auto":
		if env := getenv("GOMEMLIMIT"); env != "" && env != "off" {
			return parseSize("GOMEMLIMIT", env)
		} else if env == "off" {
			return 0, nil
		}
		return machine() / 4 * 3, nil
	}
	return parseSize("--memory-limit", v)
}

func parseSize(name, v string) (int64, error) {
	units := []struct {
		suffix string
		shift  uint
	}{{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}, {"B", 0}}
	shift := uint(0)
	for _, u := range units {
		if n, ok := strings.CutSuffix(v, u.suffix); ok {
			v, shift = n, u.shift
			break
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 || n > 1<<62>>shift {
		return 0, usagef("%s: want a size such as 512MiB or 2GiB, auto or off", name)
	}
	return n << shift, nil
}

// machineMemory is the memory slotd may use: its cgroup's limit (v2, then
// v1) when it has one, else the machine's; 0 when neither can be read.
func machineMemory() int64 {
	for _, f := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		if b, err := os.ReadFile(f); err == nil {
			// "max", or v1's "no limit" (a number near 2^63), mean none.
			if n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && n < 1<<50 {
				return n
			}
		}
	}
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			var kb int64
			if _, err := fmt.Sscanf(strings.TrimSpace(v), "%d kB", &kb); err == nil {
				return kb << 10
			}
		}
	}
	return 0
}

// limitMemory sets the Go heap's soft limit: past it the collector runs as
// often as it must (a flood's garbage is collected before the heap grows
// to the GOGC target) instead of the process growing until it is killed.
func limitMemory(n int64) {
	if n > 0 {
		debug.SetMemoryLimit(n)
		slog.Debug("memory limit", "bytes", n)
	}
}
