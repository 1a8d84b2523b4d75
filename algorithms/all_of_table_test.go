package algorithms

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// allOfVariants are all-of rows over every member kind and commit mode,
// with and without count-rejected members.
func allOfVariants() map[string]Params {
	pol := Policy{Rate: 4, Per: time.Second, Burst: 4}
	members := []Member{
		{Name: "fixed-window", Params: Params{Policy: Policy{Rate: 3, Per: 500 * time.Millisecond, Burst: 3}}},
		{Name: "sliding-window", Params: Params{Policy: Policy{Rate: 6, Per: 2 * time.Second, Burst: 6}, CountRejected: true}},
		{Name: "token-bucket", Params: Params{Policy: Policy{Rate: 4, Per: time.Second, Burst: 2}}},
		{Name: "nginx", Params: Params{Policy: Policy{Rate: 5, Per: time.Second, Burst: 5}, NginxBurst: 2, NginxBurstSet: true}},
	}
	out := map[string]Params{}
	for _, c := range Commits {
		out[string(c)] = Params{Policy: pol, Commit: c, Members: members}
		out[string(c)+"/windows"] = Params{Policy: pol, Commit: c, Members: members[:2]}
	}
	return out
}

// An all-of row's Table decides as its Limiter: same calls, in time
// order, same decisions, for every commit mode (the Table applies the
// commit across the members' Tables as AllOf.Decide across their
// Limiters).
func TestAllOfTableDecidesAsLimiter(t *testing.T) {
	for name, p := range allOfVariants() {
		t.Run(name, func(t *testing.T) {
			for seed := uint64(1); seed <= 3; seed++ {
				calls := invTrace(seed, p.Policy, invArrivals)
				l := mustLimiter(t, "all-of", p)
				tab, err := NewTable("all-of", p)
				require.NoError(t, err)
				for i, c := range calls {
					require.Equal(t, l.Decide(c.at, c.key, c.cost), tab.Decide(c.at, c.key, c.cost), "call %d: %+v", i, c)
				}
			}
		})
	}
}

// A copy decided and written at once is one atomic decision; a rejected
// all-or-nothing decision returns no copy (nothing is charged).
func TestAllOfTableCopyThenWriteIsDecide(t *testing.T) {
	for name, p := range allOfVariants() {
		t.Run(name, func(t *testing.T) {
			calls := invTrace(7, p.Policy, invArrivals)
			ref, err := NewTable("all-of", p)
			require.NoError(t, err)
			tab, err := NewTable("all-of", p)
			require.NoError(t, err)
			for i, c := range calls {
				want := ref.Decide(c.at, c.key, c.cost)
				got, cp := tab.DecideCopy(c.at, c.key, c.cost)
				require.Equal(t, want, got, "call %d: %+v", i, c)
				if cp != NoCopy {
					tab.Write(c.key, cp)
				} else if p.Commit == AllOrNothing {
					require.Equal(t, Reject, got.Verdict, "call %d: an admission changes the state", i)
				}
			}
			require.Equal(t, ref.Memory(), tab.Memory())
		})
	}
}

// Racy reads of an all-of row (fixed-window 2 per 1s and 3 per 1m, commit
// all-or-nothing), worked by hand. Two copies read at 0 and 10 ms before
// either is written both see a fresh key: both admitted. Written back as
// whole states (SET), the second write replaces the first: the store
// holds 1 in each window (a lost update). Sent as INCR of the cost
// (allOfIncrTable, Kong's cluster policy), both count: 2 in each window,
// so a read at 20 ms is rejected by the 1 s window until 1 s (retry_after
// 980 ms).
func TestAllOfTableRacy(t *testing.T) {
	p := Params{Policy: Policy{Rate: 2, Per: time.Second, Burst: 2}, Commit: AllOrNothing, Members: []Member{fw(2, time.Second), fw(3, time.Minute)}}
	for _, write := range []string{"set", "incr"} {
		t.Run(write, func(t *testing.T) {
			tab, err := NewTable("all-of", p)
			require.NoError(t, err)
			d1, c1 := tab.DecideCopy(0, 0, 1)
			d2, c2 := tab.DecideCopy(10*ms, 0, 1)
			require.Equal(t, acc, d1)
			require.Equal(t, acc, d2)
			require.NotEqual(t, NoCopy, c1)
			require.NotEqual(t, NoCopy, c2)
			if write == "set" {
				tab.Write(0, c1)
				tab.Write(0, c2)
				require.Equal(t, acc, tab.Decide(20*ms, 0, 1), "the store holds 1: the second admission is the 2nd of 2")
				return
			}
			inc, ok := tab.(Incrementer)
			require.True(t, ok, "all-or-nothing over windows takes INCR")
			tab.Discard(c1)
			tab.Discard(c2)
			inc.Incr(0, 0, 1)
			inc.Incr(10*ms, 0, 1)
			require.Equal(t, rej(980*ms), tab.Decide(20*ms, 0, 1), "2 of 2 in window [0, 1s)")
			// the minute window counted both too: 2 of 3, one more in
			// window [1s, 2s) fills it, the next waits for the minute
			require.Equal(t, acc, tab.Decide(1000*ms, 0, 1))
			require.Equal(t, rej(58900*ms), tab.Decide(1100*ms, 0, 1))
		})
	}
	// every-hit or a token-bucket member: no INCR (what a decision charged
	// differs by member)
	for _, q := range []Params{
		{Policy: p.Policy, Commit: EveryHit, Members: p.Members},
		{Policy: p.Policy, Members: []Member{fw(2, time.Second), {Name: "token-bucket", Params: Params{Policy: Policy{Rate: 1, Per: time.Second, Burst: 1}}}}},
	} {
		tab, err := NewTable("all-of", q)
		require.NoError(t, err)
		_, ok := tab.(Incrementer)
		require.False(t, ok)
	}
}

// With limits of different keys (a member by the request's key, one by an
// attribute, one global), the Table decides as the Limiter, call by call
// (DecideAttrs); a copy decided and written at once (DecideCopyAttrs, then
// Write under any key: each member's copy goes under its own) is that
// decision; and for windows all-or-nothing, an admission's INCR under
// each member's key (IncrAttrs) is too. Some requests carry no attribute:
// the member by it is not asked.
func TestAllOfTableByAttributes(t *testing.T) {
	by := []int{ByKey, 1, ByAll, 1}
	attrsOf := func(key Key) []Key {
		if key%4 == 0 {
			return []Key{key, NoKey}
		}
		return []Key{key, key % 3}
	}
	for name, p := range allOfVariants() {
		p.Members = append([]Member(nil), p.Members...)
		for i := range p.Members {
			p.Members[i].By = by[i]
		}
		t.Run(name, func(t *testing.T) {
			calls := invTrace(5, p.Policy, invArrivals)
			l := mustLimiter(t, "all-of", p).(Attributed)
			ref, err := NewTable("all-of", p)
			require.NoError(t, err)
			cp, err := NewTable("all-of", p)
			require.NoError(t, err)
			inc, err := NewTable("all-of", p)
			require.NoError(t, err)
			_, incr := inc.(AttrIncrementer)
			for i, c := range calls {
				attrs := attrsOf(c.key)
				want := l.DecideAttrs(c.at, attrs, c.cost)
				require.Equal(t, want, ref.(AttrTable).DecideAttrs(c.at, attrs, c.cost), "call %d: %+v", i, c)
				got, copied := cp.(AttrTable).DecideCopyAttrs(c.at, attrs, c.cost)
				require.Equal(t, want, got, "call %d: %+v", i, c)
				if copied != NoCopy {
					cp.Write(NoKey, copied)
				}
				if incr {
					got, copied := inc.(AttrTable).DecideCopyAttrs(c.at, attrs, c.cost)
					require.Equal(t, want, got, "call %d: %+v", i, c)
					if copied != NoCopy {
						inc.Discard(copied)
						inc.(AttrIncrementer).IncrAttrs(c.at, attrs, c.cost)
					}
				}
			}
			require.Equal(t, ref.Memory(), cp.Memory())
		})
	}
}
