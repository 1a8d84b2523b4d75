package gateway

import (
	"strconv"
	"time"
)

// This file holds what several readers share in writing their scenarios.

// durationText writes d as a scenario writes a duration: in its largest
// whole unit of h, m, s, ms, us or ns (24h, 1m, 500ms).
func durationText(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	for _, u := range []struct {
		d    time.Duration
		name string
	}{{time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}, {time.Millisecond, "ms"}, {time.Microsecond, "us"}} {
		if d%u.d == 0 {
			return strconv.FormatInt(int64(d/u.d), 10) + u.name
		}
	}
	return strconv.FormatInt(int64(d), 10) + "ns"
}

// noLimits is the error of a config that limits nothing; why says so.
func noLimits(file, why string) error {
	return &Error{File: file, Msg: "no limits at all: " + why}
}
