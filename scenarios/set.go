package scenarios

import (
	"fmt"
	"maps"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/ratesim/ratesim/traffic"
)

// Set puts v at the field path of f (seed, limit.burst, traffic[0].rate,
// algorithms[1].burst, cluster.store.rtt), making the sections on the way.
// A limit written as a rate is first written out as {rate, per}, and an
// algorithm written as a bare name as {name}. A field the format does not
// know is kept, for Validate to refuse where it stands with the fields
// taken there. f's lists and sections are changed in place: Set a Clone
// to keep f.
func (f *File) Set(path string, v Value) error {
	segs := strings.Split(path, ".")
	cur := reflect.ValueOf(f).Elem()
	at := ""
	for i, seg := range segs {
		key, sel, hasSel := strings.Cut(seg, "[")
		if key == "" || hasSel && !strings.HasSuffix(sel, "]") {
			return fmt.Errorf("%s: want names joined by dots, each maybe with an [INDEX]", path)
		}
		sel = strings.TrimSuffix(sel, "]")
		last := i == len(segs)-1
		st, ok := mappingAt(cur)
		if !ok {
			return fmt.Errorf("%s is not a mapping, cannot set %s in it", at, key)
		}
		fi := fieldByTag(st.Type(), key)
		if fi < 0 {
			f.unknownKey(at, key)
			return nil
		}
		field := st.Field(fi)
		here := join(at, key)
		if hasSel {
			n, err := strconv.Atoi(sel)
			switch {
			case field.Kind() != reflect.Slice:
				return fmt.Errorf("%s is not a list", here)
			case field.IsNil():
				return fmt.Errorf("the scenario has no %s", here)
			case err != nil || n < 0:
				return fmt.Errorf("[%s]: want an index 0..%d", sel, field.Len()-1)
			case n >= field.Len():
				return fmt.Errorf("[%d]: the scenario's %s has %d entries, want an index 0..%d", n, here, field.Len(), field.Len()-1)
			}
			field, here = field.Index(n), index(here, n)
		}
		if !last {
			cur, at = field, here
			continue
		}
		return setValue(field, here, v)
	}
	return nil
}

// mappingAt is the struct rv holds or points to, made when nil and written
// out when it holds a limit's rate or an algorithm's bare name; false when
// rv is no mapping.
func mappingAt(rv reflect.Value) (reflect.Value, bool) {
	if rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			rv.Set(reflect.New(rv.Type().Elem()))
		}
		rv = rv.Elem()
	}
	if rv.Kind() != reflect.Struct || isScalarType(rv.Type()) || !hasTags(rv.Type()) {
		return rv, false
	}
	switch x := rv.Addr().Interface().(type) {
	case *Limit:
		if x.Short.Set() {
			r, err := ParseRate(x.Short.Text)
			if err != nil {
				return rv, false
			}
			*x = Limit{Rate: IntOf(r.Count), Per: DurationOf(DurationText(r.Per))}
		}
	case *AlgEntry:
		if x.Bare.Set() {
			*x = AlgEntry{Name: x.Bare}
		}
	default:
		if i := formField(rv.Type(), "scalar"); i >= 0 && !rv.Field(i).IsZero() {
			return rv, false
		}
	}
	return rv, true
}

// setValue sets field, at path, to v: a value of its own, or the one-value
// form of a section (limit: 10/s, skew: 5ms).
func setValue(field reflect.Value, path string, v Value) error {
	t := field.Type()
	switch {
	case t == valueType:
		field.Set(reflect.ValueOf(v))
		return nil
	case isScalarType(t):
		field.Field(0).Set(reflect.ValueOf(v))
		return nil
	}
	st := t
	if st.Kind() == reflect.Pointer {
		st = st.Elem()
	}
	if i := formField(st, "scalar"); i >= 0 {
		s := reflect.New(st)
		s.Elem().Field(i).Field(0).Set(reflect.ValueOf(v))
		if t.Kind() == reflect.Pointer {
			field.Set(s)
		} else {
			field.Set(s.Elem())
		}
		return nil
	}
	if t.Kind() == reflect.Slice {
		return fmt.Errorf("%s is a list, cannot set it to one value", path)
	}
	return fmt.Errorf("%s is a mapping, cannot set it to one value", path)
}

// unknownKey keeps key, which no field of the mapping at path has, for
// Validate to refuse.
func (f *File) unknownKey(path, key string) {
	at := f.at
	if at == nil {
		at = newPositions()
	}
	c := *at // the positions may be shared with the File this was cloned from
	c.unknown = maps.Clone(at.unknown)
	c.unknown[path] = append(c.unknown[path][:len(c.unknown[path]):len(c.unknown[path])], key)
	f.at = &c
}

// Clone is a deep copy of f: setting a field of one leaves the other.
func (f *File) Clone() *File {
	c := clone(reflect.ValueOf(f).Elem()).Addr().Interface().(*File)
	c.at = f.at
	return c
}

func clone(rv reflect.Value) reflect.Value {
	out := reflect.New(rv.Type()).Elem()
	switch rv.Kind() {
	case reflect.Pointer:
		if !rv.IsNil() && rv.Type() != reflect.TypeFor[*positions]() {
			out.Set(clone(rv.Elem()).Addr())
		}
	case reflect.Slice:
		if !rv.IsNil() {
			s := reflect.MakeSlice(rv.Type(), rv.Len(), rv.Len())
			for i := range rv.Len() {
				s.Index(i).Set(clone(rv.Index(i)))
			}
			out.Set(s)
		}
	case reflect.Struct:
		if rv.Type() == valueType || isScalarType(rv.Type()) {
			out.Set(rv)
			break
		}
		for i := range rv.NumField() {
			if rv.Type().Field(i).IsExported() {
				out.Field(i).Set(clone(rv.Field(i)))
			}
		}
	default:
		out.Set(rv)
	}
	return out
}

// DurationText writes d exactly in its largest whole unit of h, m, s, ms,
// us or ns (1s, 100ms, 1m, 1500ms), as a scenario file writes a duration
// and reads it back; 0 is "0".
func DurationText(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	for _, u := range []struct {
		name string
		d    time.Duration
	}{{"h", time.Hour}, {"m", time.Minute}, {"s", time.Second}, {"ms", time.Millisecond}, {"us", time.Microsecond}} {
		if d%u.d == 0 {
			return strconv.FormatInt(int64(d/u.d), 10) + u.name
		}
	}
	return strconv.FormatInt(int64(d), 10) + "ns"
}

// ReplayFile is the scenario file of a replay of the trace at path, as
// ratesim replay makes it from its flags (docs/replay.md): named "replay
// PATH", with seed, of one replay source; the limit is the caller's.
func ReplayFile(path string, seed uint64) *File {
	return &File{
		From:    "flags",
		Name:    TextOf("replay " + path),
		Seed:    UintOf(seed),
		Traffic: []Source{{Type: TextOf("replay"), Path: TextOf(path)}},
	}
}

// LimitOf is the limit of rate r, written out as {rate, per}.
func LimitOf(r traffic.Rate) *Limit {
	return &Limit{Rate: IntOf(r.Count), Per: Duration{TextOf(r.Per.String()).Value}}
}
