package scenarios

import (
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
)

// File is a scenario as written (docs/scenario-file.md): every field holds
// its value as text, as the file wrote it, so that a message can quote it
// and Marshal writes it back the same. Decode fills a File from YAML and
// remembers where each field was written; a File built or edited in code
// has no positions, and its problems are named by field path alone.
// Validate checks a File and Build makes the engine's Scenario of it.
type File struct {
	Name        String     `yaml:"name,omitempty"`
	Description String     `yaml:"description,omitempty"`
	Seed        Int        `yaml:"seed,omitempty"`
	Duration    Duration   `yaml:"duration,omitempty"`
	Limit       *Limit     `yaml:"limit,omitempty"`
	Algorithms  []AlgEntry `yaml:"algorithms,omitempty"`
	Traffic     []Source   `yaml:"traffic,omitempty"`
	Clients     *Clients   `yaml:"clients,omitempty"`
	Backend     *Backend   `yaml:"backend,omitempty"`
	Report      *Report    `yaml:"report,omitempty"`
	Cluster     *Cluster   `yaml:"cluster,omitempty"`
	Expect      Expect     `yaml:"expect,omitempty"`

	// From is where the file was read: its path, builtin:NAME, or what
	// built it ("flags"). It names the file in errors, and a replay's path
	// is relative to its folder.
	From string `yaml:"-"`

	// at is where Decode found each field; nil for a File built in code.
	at *positions
}

// Limit is the scenario's limit: written as a rate (Short, limit: 10/s)
// or as a mapping {rate, per, burst}.
type Limit struct {
	Short Rate     `yaml:"-" form:"scalar"`
	Rate  Int      `yaml:"rate,omitempty"`
	Per   Duration `yaml:"per,omitempty"`
	Burst Int      `yaml:"burst,omitempty"`
}

// AlgEntry is one entry of the algorithms list: a bare name (Bare) or a
// mapping with a name, the policy's overrides and the algorithm's options.
type AlgEntry struct {
	Bare  String `yaml:"-" form:"scalar"`
	Name  String `yaml:"name,omitempty"`
	Label String `yaml:"label,omitempty"`
	// by: an all-of limit's attribute, or a priority-shedding row's
	By    String   `yaml:"by,omitempty"`
	Rate  Int      `yaml:"rate,omitempty"`
	Per   Duration `yaml:"per,omitempty"`
	Burst Int      `yaml:"burst,omitempty"`

	CountRejected  Bool       `yaml:"count-rejected,omitempty"`
	MaxDelay       Duration   `yaml:"max-delay,omitempty"`
	FillInterval   Duration   `yaml:"fill-interval,omitempty"`
	IdleReset      Duration   `yaml:"idle-reset,omitempty"`
	TokensPerFill  Int        `yaml:"tokens-per-fill,omitempty"`
	Nodelay        Bool       `yaml:"nodelay,omitempty"`
	Delay          Int        `yaml:"delay,omitempty"`
	Zone           Size       `yaml:"zone,omitempty"`
	Max            Int        `yaml:"max,omitempty"`
	Window         Duration   `yaml:"window,omitempty"`
	MinSamples     Int        `yaml:"min-samples,omitempty"`
	InitialLimit   Int        `yaml:"initial-limit,omitempty"`
	MinLimit       Int        `yaml:"min-limit,omitempty"`
	MaxLimit       Int        `yaml:"max-limit,omitempty"`
	Interval       Duration   `yaml:"interval,omitempty"`
	MinRTTInterval Duration   `yaml:"min-rtt-calc-interval,omitempty"`
	K              Number     `yaml:"k,omitempty"`
	Commit         String     `yaml:"commit,omitempty"`
	Limits         []AlgEntry `yaml:"limits,omitempty"`

	// the vendor rows' options (docs/algorithms.md)
	MaxBurst          Duration `yaml:"max-burst,omitempty"`
	Warmup            Duration `yaml:"warmup,omitempty"`
	ColdFactor        Number   `yaml:"cold-factor,omitempty"`
	Slack             Int      `yaml:"slack,omitempty"`
	UseEffectiveCount Bool     `yaml:"use-effective-count,omitempty"`
	QuotaType         String   `yaml:"quota-type,omitempty"`
	Tier              String   `yaml:"tier,omitempty"`
	IncrementCond     Bool     `yaml:"increment-condition,omitempty"`
	MitigationTimeout Duration `yaml:"mitigation-timeout,omitempty"`
	QuotaOffset       Int      `yaml:"quota-offset,omitempty"`
	// the priority-shedding rows' options (docs/algorithms.md); by: is
	// theirs too
	Partitions Attributes `yaml:"partitions,omitempty"`
	Critical   []String   `yaml:"critical,omitempty"`
	Reserve    Number     `yaml:"reserve,omitempty"`

	// how the row runs on a cluster (docs/cluster.md)
	Coordination String   `yaml:"coordination,omitempty"`
	Clock        String   `yaml:"clock,omitempty"`
	Write        String   `yaml:"write,omitempty"`
	Sync         Duration `yaml:"sync,omitempty"`
	Lease        Int      `yaml:"lease,omitempty"`
	LeaseTTL     Duration `yaml:"lease-ttl,omitempty"`
	OnStoreError String   `yaml:"on-store-error,omitempty"`
	Balancer     String   `yaml:"balancer,omitempty"`
}

// LabelText is the entry's label as written, else its name.
func (a *AlgEntry) LabelText() string {
	switch {
	case a.Bare.Set():
		return a.Bare.Text
	case a.Label.Set():
		return a.Label.Text
	}
	return a.Name.Text
}

// Source is one traffic source: the fields of every type, of which its
// type takes some (docs/scenario-file.md).
type Source struct {
	Type       String     `yaml:"type,omitempty" common:"all"`
	Key        String     `yaml:"key,omitempty" common:"synthetic"`
	Clients    Int        `yaml:"clients,omitempty" common:"synthetic"`
	KeyPrefix  String     `yaml:"key-prefix,omitempty" common:"synthetic"`
	Cost       Int        `yaml:"cost,omitempty" common:"all"`
	Start      Duration   `yaml:"start,omitempty" common:"all"`
	End        Duration   `yaml:"end,omitempty" common:"all"`
	Retry      *Retry     `yaml:"retry,omitempty" common:"all"`
	Attributes Attributes `yaml:"attributes,omitempty" common:"synthetic"`

	// the fields of the types in their types tag, in the order their
	// messages list them
	At      Instants `yaml:"at,omitempty" types:"times burst"`
	Every   Duration `yaml:"every,omitempty" types:"aligned"`
	Offset  Duration `yaml:"offset,omitempty" types:"aligned"`
	Count   Int      `yaml:"count,omitempty" types:"burst aligned"`
	Over    Duration `yaml:"over,omitempty" types:"burst aligned"`
	Rate    Rate     `yaml:"rate,omitempty" types:"steady poisson onoff"`
	KeyDist String   `yaml:"key-dist,omitempty" types:"poisson"`
	ZipfS   Number   `yaml:"zipf-s,omitempty" types:"poisson"`
	On      Duration `yaml:"on,omitempty" types:"onoff"`
	Off     Duration `yaml:"off,omitempty" types:"onoff"`
	From    Rate     `yaml:"from,omitempty" types:"ramp"`
	To      Rate     `yaml:"to,omitempty" types:"ramp"`

	// a replay's (docs/replay.md)
	Path       String   `yaml:"path,omitempty" types:"replay"`
	Format     String   `yaml:"format,omitempty" types:"replay"`
	TimeField  String   `yaml:"time-field,omitempty" types:"replay"`
	KeyField   String   `yaml:"key-field,omitempty" types:"replay"`
	CostField  String   `yaml:"cost-field,omitempty" types:"replay"`
	Columns    []String `yaml:"columns,omitempty" types:"replay"`
	TimeLayout String   `yaml:"time-layout,omitempty" types:"replay"`
	TimeUnit   String   `yaml:"time-unit,omitempty" types:"replay"`
	Timezone   String   `yaml:"timezone,omitempty" types:"replay"`
	Reorder    Duration `yaml:"reorder,omitempty" types:"replay"`
	Spread     String   `yaml:"spread,omitempty" types:"replay"`
	Speed      Number   `yaml:"speed,omitempty" types:"replay"`
	Strict     Bool     `yaml:"strict,omitempty" types:"replay"`
	LogFormat  String   `yaml:"log-format,omitempty" types:"replay"`
	LogEscape  String   `yaml:"log-escape,omitempty" types:"replay"`
	CheckField String   `yaml:"check-field,omitempty" types:"replay"`
	// AttributeFields are the attributes each request of a replay
	// carries from a field of its line: attribute name to field name
	// (docs/replay.md).
	AttributeFields Attributes `yaml:"attribute-fields,omitempty" types:"replay"`
}

// Instants is a source's at: one instant (a burst's, One) or a list (the
// times source's, List).
type Instants struct {
	One  Duration   `yaml:"-" form:"scalar"`
	List []Duration `yaml:"-" form:"list"`
}

// Attributes are a source's attributes, in the order written.
type Attributes []Attribute

// Attribute is one attribute a source gives its requests.
type Attribute struct {
	Name  string
	Value String
}

// Clients is the scenario-wide clients section.
type Clients struct {
	Retry *Retry `yaml:"retry,omitempty"`
}

// Retry is a retry policy (docs/scenario-file.md).
type Retry struct {
	Policy      String       `yaml:"policy,omitempty"`
	Delay       Duration     `yaml:"delay,omitempty"`
	Factor      Number       `yaml:"factor,omitempty"`
	Cap         Duration     `yaml:"cap,omitempty"`
	Jitter      String       `yaml:"jitter,omitempty"`
	Resolution  Duration     `yaml:"resolution,omitempty"`
	MaxAttempts Int          `yaml:"max-attempts,omitempty"`
	On          []String     `yaml:"on,omitempty"`
	Budget      *Budget      `yaml:"budget,omitempty"`
	TokenBucket *TokenBucket `yaml:"token-bucket,omitempty"`
	Breaker     *Breaker     `yaml:"breaker,omitempty"`
}

// Budget is a retry policy's budget, gRPC's retry throttling.
type Budget struct {
	MaxTokens  Int    `yaml:"max-tokens,omitempty"`
	TokenRatio Number `yaml:"token-ratio,omitempty"`
}

// TokenBucket is a retry policy's retry token bucket (docs/scenario-file.md).
type TokenBucket struct {
	Capacity Number `yaml:"capacity,omitempty"`
	Cost     Number `yaml:"cost,omitempty"`
	Refill   Number `yaml:"refill,omitempty"`
}

// Breaker is a retry policy's circuit breaker (docs/scenario-file.md).
type Breaker struct {
	Window    Int      `yaml:"window,omitempty"`
	Threshold Number   `yaml:"threshold,omitempty"`
	OpenFor   Duration `yaml:"open-for,omitempty"`
}

// Backend is the backend section (docs/backend.md).
type Backend struct {
	Workers     Int            `yaml:"workers,omitempty"`
	Service     *Service       `yaml:"service,omitempty"`
	Queue       Int            `yaml:"queue,omitempty"`
	Discipline  String         `yaml:"discipline,omitempty"`
	Timeout     Duration       `yaml:"timeout,omitempty"`
	DropExpired Bool           `yaml:"drop-expired,omitempty"`
	Errors      Number         `yaml:"errors,omitempty"`
	Faults      []BackendFault `yaml:"faults,omitempty"`
	Latency     Duration       `yaml:"latency,omitempty"`
}

// Service is backend.service: a duration (Short) or a distribution.
type Service struct {
	Short Duration `yaml:"-" form:"scalar"`
	Dist  String   `yaml:"dist,omitempty"`
	Mean  Duration `yaml:"mean,omitempty"`
	P99   Duration `yaml:"p99,omitempty"`
}

// BackendFault is one fault of the backend.
type BackendFault struct {
	Type   String   `yaml:"type,omitempty"`
	At     Duration `yaml:"at,omitempty"`
	For    Duration `yaml:"for,omitempty"`
	Factor Number   `yaml:"factor,omitempty"`
	Count  Int      `yaml:"count,omitempty"`
}

// Report is the report section.
type Report struct {
	Windows []Duration `yaml:"windows,omitempty"`
	Bucket  Duration   `yaml:"bucket,omitempty"`
}

// Cluster is the cluster section (docs/cluster.md).
type Cluster struct {
	Nodes        Int            `yaml:"nodes,omitempty"`
	Balancer     String         `yaml:"balancer,omitempty"`
	Weights      []Int          `yaml:"weights,omitempty"`
	Skew         *Skew          `yaml:"skew,omitempty"`
	Store        *Store         `yaml:"store,omitempty"`
	OnStoreError String         `yaml:"on-store-error,omitempty"`
	Faults       []ClusterFault `yaml:"faults,omitempty"`
}

// Skew is cluster.skew: one value spread over the nodes (One), or one
// per node (Each).
type Skew struct {
	One  Duration   `yaml:"-" form:"scalar"`
	Each []Duration `yaml:"-" form:"list"`
}

// Store is the cluster's store.
type Store struct {
	RTT     Duration `yaml:"rtt,omitempty"`
	Jitter  Duration `yaml:"jitter,omitempty"`
	Service Duration `yaml:"service,omitempty"`
	Timeout Duration `yaml:"timeout,omitempty"`
}

// ClusterFault is one fault of the cluster.
type ClusterFault struct {
	Type String   `yaml:"type,omitempty"`
	Node Int      `yaml:"node,omitempty"`
	At   Duration `yaml:"at,omitempty"`
	For  Duration `yaml:"for,omitempty"`
	RTT  Duration `yaml:"rtt,omitempty"`
}

// Kind is what YAML made of a value.
type Kind uint8

// The kinds of a Value; Unset is a field not written.
const (
	Unset   Kind = iota
	Plain        // an unquoted string
	Quoted       // a quoted string
	Literal      // a block string (| or >)
	Integer
	Float
	Infinity // .inf
	NaN      // .nan
	Boolean
	Null
	List    // a list where one value was wanted
	Mapping // a mapping where one value was wanted
	Other   // any other node; Text is its YAML name
)

// Value is one value as written: its text (a string's without its quotes)
// and what YAML made of it. The zero Value is a field not written.
type Value struct {
	Text string
	Kind Kind
}

// Set reports whether the value was written.
func (v Value) Set() bool { return v.Kind != Unset }

// IsZero reports whether the value is unset, for omitempty.
func (v Value) IsZero() bool { return v.Kind == Unset }

// MarshalYAML writes the value as it was written.
func (v Value) MarshalYAML() ([]byte, error) {
	switch v.Kind {
	case Plain:
		if plainKind(v.Text) != Plain || !plainSafe(v.Text) {
			return []byte(strconv.Quote(v.Text)), nil
		}
		return []byte(v.Text), nil
	case Integer, Float, Infinity, NaN, Boolean, Null:
		if v.Text == "" {
			return []byte("null"), nil
		}
		return []byte(v.Text), nil
	case Quoted, Literal:
		return []byte(strconv.Quote(v.Text)), nil
	}
	return []byte("null"), nil
}

// plainSafe reports whether s reads back as the same string written
// unquoted: no YAML indicator first, no ": " or " #" inside, no space at
// either end, one line.
func plainSafe(s string) bool {
	return s != "" && !strings.ContainsAny(s[:1], "-?:,[]{}#&*!|>'\"%@` \t") &&
		!strings.Contains(s, ": ") && !strings.Contains(s, " #") && !strings.ContainsAny(s, "\n\r") &&
		!strings.HasSuffix(s, " ") && !strings.HasSuffix(s, ":")
}

func (v *Value) value() *Value { return v }

// The types of the fields: each holds a Value, and says what the field
// takes.
type (
	// Duration is a duration like 900ms (or 0).
	Duration struct{ Value }
	// Rate is a rate like 10/s or 5/100ms.
	Rate struct{ Value }
	// Int is a decimal integer.
	Int struct{ Value }
	// Number is a decimal number like 1.5.
	Number struct{ Value }
	// Bool is true or false.
	Bool struct{ Value }
	// String is a string.
	String struct{ Value }
	// Size is a size as nginx writes it (32k, 10m).
	Size struct{ Value }
)

// plainKind is the kind YAML gives text written unquoted.
func plainKind(text string) Kind {
	if _, err := strconv.ParseInt(text, 10, 64); err == nil {
		return Integer
	}
	if _, err := strconv.ParseFloat(text, 64); err == nil && strings.ContainsAny(text, ".eE") &&
		!strings.ContainsAny(text, "xXpP_") && !strings.EqualFold(strings.TrimLeft(text, "+-"), "inf") &&
		!strings.EqualFold(text, "nan") && !strings.HasPrefix(strings.TrimLeft(text, "+-"), "inf") {
		return Float
	}
	switch text {
	case "true", "false", "True", "False", "TRUE", "FALSE":
		return Boolean
	case "", "~", "null", "Null", "NULL":
		return Null
	}
	return Plain
}

// ValueOf is text as if written unquoted in a file: 5 is an integer, 1.5
// a number, true a boolean, 10ms a string.
func ValueOf(text string) Value { return Value{Text: text, Kind: plainKind(text)} }

// DurationOf is a duration written as text (900ms).
func DurationOf(text string) Duration { return Duration{ValueOf(text)} }

// RateOf is a rate written as text (10/s).
func RateOf(text string) Rate { return Rate{ValueOf(text)} }

// IntOf is an integer.
func IntOf(n int64) Int { return Int{Value{Text: strconv.FormatInt(n, 10), Kind: Integer}} }

// UintOf is an integer >= 0.
func UintOf(n uint64) Int { return Int{Value{Text: strconv.FormatUint(n, 10), Kind: Integer}} }

// NumberOf is a number written as text (1.5).
func NumberOf(text string) Number { return Number{ValueOf(text)} }

// BoolOf is a boolean.
func BoolOf(b bool) Bool { return Bool{Value{Text: strconv.FormatBool(b), Kind: Boolean}} }

// StringOf is a string, whatever it looks like, written quoted.
func StringOf(s string) String { return String{Value{Text: s, Kind: Quoted}} }

// TextOf is a string, whatever it looks like, written unquoted when YAML
// reads it back as that string (api, 10ms) and quoted otherwise ("5",
// "true", "a: b").
func TextOf(s string) String {
	if plainKind(s) == Plain && plainSafe(s) {
		return String{Value{Text: s, Kind: Plain}}
	}
	return StringOf(s)
}

// Marshal writes f as YAML, each value as it was written.
func Marshal(f *File) ([]byte, error) {
	return yaml.MarshalWithOptions(f, yaml.UseLiteralStyleIfMultiline(true))
}

// MarshalYAML writes a limit written as a rate as that rate.
func (l Limit) MarshalYAML() (any, error) {
	if l.Short.Set() {
		return l.Short.Value, nil
	}
	type plain Limit
	return plain(l), nil
}

// MarshalYAML writes an entry written as a name as that name.
func (a AlgEntry) MarshalYAML() (any, error) {
	if a.Bare.Set() {
		return a.Bare.Value, nil
	}
	type plain AlgEntry
	return plain(a), nil
}

// MarshalYAML writes a service written as a duration as that duration.
func (s Service) MarshalYAML() (any, error) {
	if s.Short.Set() {
		return s.Short.Value, nil
	}
	type plain Service
	return plain(s), nil
}

// MarshalYAML writes one instant or the list.
func (in Instants) MarshalYAML() (any, error) {
	if in.List != nil {
		return in.List, nil
	}
	return in.One.Value, nil
}

// IsZero reports whether at was not written.
func (in Instants) IsZero() bool { return in.List == nil && !in.One.Set() }

// MarshalYAML writes one skew or the list.
func (s Skew) MarshalYAML() (any, error) {
	if s.Each != nil {
		return s.Each, nil
	}
	return s.One.Value, nil
}

// MarshalYAML writes the attributes in order.
func (a Attributes) MarshalYAML() (any, error) {
	m := make(yaml.MapSlice, len(a))
	for i, at := range a {
		m[i] = yaml.MapItem{Key: at.Name, Value: at.Value.Value}
	}
	return m, nil
}

// fieldNames are the keys of T's fields in order: what a mapping of T
// takes, as its messages list them.
func fieldNames[T any]() []string {
	var names []string
	t := reflect.TypeFor[T]()
	for i := range t.NumField() {
		if name := tagName(t.Field(i)); name != "" {
			names = append(names, name)
		}
	}
	return names
}

// sourceFieldsBy is the keys of the Source fields whose tag says one of
// values.
func sourceFieldsBy(tag string, values ...string) []string {
	var names []string
	t := reflect.TypeFor[Source]()
	for i := range t.NumField() {
		for _, v := range strings.Fields(t.Field(i).Tag.Get(tag)) {
			if slices.Contains(values, v) {
				names = append(names, tagName(t.Field(i)))
				break
			}
		}
	}
	return names
}
