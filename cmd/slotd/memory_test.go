package main

import "testing"

func TestParseMemoryLimit(t *testing.T) {
	machine := func() int64 { return 4 << 30 }
	env := func(v string) func(string) string { return func(string) string { return v } }
	for _, tc := range []struct {
		flag, gomemlimit string
		want             int64
		bad              bool
	}{
		{"auto", "", 3 << 30, false},         // 3/4 of the machine's
		{"auto", "512MiB", 512 << 20, false}, // the environment's
		{"auto", "off", 0, false},
		{"off", "512MiB", 0, false},
		{"256MiB", "", 256 << 20, false},
		{"2GiB", "", 2 << 30, false},
		{"1048576", "", 1 << 20, false},
		{"-1MiB", "", 0, true},
		{"0", "", 0, true},
		{"lots", "", 0, true},
		{"9999999TiB", "", 0, true},
		{"auto", "12 MiB", 0, true},
	} {
		got, err := parseMemoryLimit(tc.flag, env(tc.gomemlimit), machine)
		if (err != nil) != tc.bad || got != tc.want {
			t.Errorf("--memory-limit %q, GOMEMLIMIT %q: %d, %v; want %d (error: %v)", tc.flag, tc.gomemlimit, got, err, tc.want, tc.bad)
		}
	}
	if got, _ := parseMemoryLimit("auto", env(""), func() int64 { return 0 }); got != 0 {
		t.Errorf("auto on a machine whose memory is unknown: %d, want no limit", got)
	}
}
