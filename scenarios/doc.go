// Package scenarios reads scenario files: YAML in, a validated Scenario out.
// A File is the scenario as written (Decode reads one, code may build or
// edit one by field path, Marshal writes it back); Build checks it and
// makes the Scenario. Reading is strict, and every problem is reported,
// in order of position, as file:line:column, the field path, what was
// found and what is expected:
//
//	api.yaml:12:11: traffic[1].rate: "10/x": unknown unit "x" (want 10/s, 600/m, 5/100ms)
//
// A File built in code names its problems by field path alone.
//
// The built-in scenarios (Builtins) are the YAML files under builtin/,
// embedded in the binary.
//
// docs/scenario-file.md is the reference of the format: every field, its
// default and its bounds, the traffic sources and their exact arrival
// rules, retries, the cluster and backend sections, and replay sources.
package scenarios
