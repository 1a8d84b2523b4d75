package traffic

import (
	"io"
	"time"
)

// BusiestKey reads the plan's traffic once and returns the key with the
// most first attempts before start+duration (all of it when duration is
// 0), ties going to the first name in byte order; "" when there is no
// traffic. The charts watch its state when no key is named.
func BusiestKey(p Plan, start, duration time.Duration) (string, error) {
	keys, stream, err := p.Open()
	if err != nil {
		return "", err
	}
	// the loop may stop before the end of a trace
	defer func() {
		if c, ok := stream.(io.Closer); ok {
			_ = c.Close()
		}
	}()
	var counts []int64 // by key id
	var a Arrival
	for stream.Next(&a) {
		if duration > 0 && a.At >= start+duration {
			break
		}
		if int(a.Key) >= len(counts) {
			counts = append(counts, make([]int64, int(a.Key)+1-len(counts))...)
		}
		counts[a.Key]++
	}
	if err := stream.Err(); err != nil {
		return "", err
	}
	best, bestName := int64(0), ""
	for id, n := range counts {
		if n == 0 || n < best {
			continue
		}
		name := keys.Name(uint32(id))
		if n > best || name < bestName {
			best, bestName = n, name
		}
	}
	return bestName, nil
}
