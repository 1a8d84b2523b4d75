package scenarios

import (
	"cmp"
	"reflect"
	"slices"
)

// This file shows a File to the checks as values by path: each field's
// Value, where it was written (when the File was decoded) and, for a
// mapping, its fields in the order written.

// vnode is one value of a File as the checks read it.
type vnode struct {
	Value
	entries []entry // a mapping's fields, in order
	items   []val   // a list's items
}

// entry is one field of a mapping.
type entry struct {
	key  string
	kpos position
	v    val
}

// viewer makes the vals of a File.
type viewer struct {
	at *positions // never nil: empty for a File built in code
}

// root is the File as a val at path "".
func (f *File) root() (val, *positions) {
	at := f.at
	if at == nil {
		at = newPositions()
	}
	vw := viewer{at: at}
	return vw.of(reflect.ValueOf(f).Elem(), ""), at
}

// of is the val of rv, written at path.
func (vw viewer) of(rv reflect.Value, path string) val {
	v := val{path: path, pos: vw.at.at[path]}
	if vw.at.bad[path] {
		v.set, v.bad = true, true
		return v
	}
	if s, ok := vw.at.shape[path]; ok {
		v.set, v.n = true, &vnode{Value: s}
		return v
	}
	t := rv.Type()
	switch {
	case t == valueType:
		return vw.scalar(v, rv.Interface().(Value))
	case isScalarType(t):
		return vw.scalar(v, rv.Field(0).Interface().(Value))
	case t == attributesType:
		if rv.IsNil() {
			return v
		}
		n := &vnode{Value: Value{Kind: Mapping}}
		for _, a := range rv.Interface().(Attributes) {
			p := join(path, a.Name)
			n.entries = append(n.entries, entry{key: a.Name, kpos: vw.at.key[p], v: vw.of(reflect.ValueOf(a.Value), p)})
		}
		v.set, v.n = true, n
		return v
	case t.Kind() == reflect.Pointer:
		if rv.IsNil() {
			return v
		}
		return vw.of(rv.Elem(), path)
	case t.Kind() == reflect.Slice:
		if rv.IsNil() {
			return v
		}
		n := &vnode{Value: Value{Kind: List}}
		for i := range rv.Len() {
			n.items = append(n.items, vw.of(rv.Index(i), index(path, i)))
		}
		v.set, v.n = true, n
		return v
	case t.Kind() == reflect.Struct:
		return vw.structure(v, rv)
	}
	return v
}

func (vw viewer) scalar(v val, x Value) val {
	if x.Set() {
		v.set, v.n = true, &vnode{Value: x}
	}
	return v
}

// structure is a struct's val: its scalar or list form when written so,
// else the mapping of the fields written (and the unknown keys), in the
// order written; fields set in code, which have no position, come after.
func (vw viewer) structure(v val, rv reflect.Value) val {
	t := rv.Type()
	for _, form := range []string{"scalar", "list"} {
		if i := formField(t, form); i >= 0 && !rv.Field(i).IsZero() {
			return vw.of(rv.Field(i), v.path)
		}
	}
	if !hasTags(t) {
		return v // a value of forms only, none written
	}
	n := &vnode{Value: Value{Kind: Mapping}}
	for i := range t.NumField() {
		name := tagName(t.Field(i))
		if name == "" {
			continue
		}
		p := join(v.path, name)
		fv := vw.of(rv.Field(i), p)
		if fv.set {
			n.entries = append(n.entries, entry{key: name, kpos: vw.at.key[p], v: fv})
		}
	}
	for _, k := range vw.at.unknown[v.path] {
		p := join(v.path, k)
		u := val{path: p, pos: vw.at.at[p], set: true, n: &vnode{Value: Value{Kind: Null}}}
		if vw.at.bad[p] {
			u.bad, u.n = true, nil
		}
		n.entries = append(n.entries, entry{key: k, kpos: vw.at.key[p], v: u})
	}
	slices.SortStableFunc(n.entries, func(a, b entry) int {
		ua, ub := a.kpos.line == 0, b.kpos.line == 0
		if ua != ub {
			if ua {
				return 1
			}
			return -1
		}
		return cmp.Or(cmp.Compare(a.kpos.line, b.kpos.line), cmp.Compare(a.kpos.col, b.kpos.col))
	})
	v.set, v.n = true, n
	return v
}
