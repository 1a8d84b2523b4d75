// Package output renders a *sim.Report: as a terminal table, JSON, CSV and
// Markdown, and writes the per-decision CSV of `ratesim compare --decisions`.
//
// Every renderer is a function that writes to an io.Writer and returns the
// first error, in the manner of vegeta's reporters: nothing here prints to
// stdout, exits or reads flags. Output is byte-deterministic: the same report
// renders to the same bytes on every machine, whatever its locale or terminal.
//
// The figures a renderer shows are the report's; the only things computed
// here are presentation (accept %, human durations, ratios) and the findings,
// the plain sentences under the table that Findings derives from the figures.
package output
