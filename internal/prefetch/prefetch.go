// Package prefetch asks the processor to bring cache lines in ahead of
// their use. Over a million keys, the state of the key a decision needs is
// seldom in cache; a decision that loads it waits for memory, one decision
// after another. Told the lines of the decisions to come, the processor
// fetches them together, while it decides the ones before.
//
// A prefetch is a hint: it reads nothing a program sees, cannot fault, and
// changes no result. Where this package has no instruction to give (any
// architecture but amd64), it does nothing.
package prefetch
