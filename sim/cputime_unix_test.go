//go:build unix

package sim

import (
	"syscall"
	"time"
)

// processCPU is the CPU time the process has used, user and system: on a
// shared machine a run's cost, where its wall time also counts the time
// other processes held the cores.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
