//go:build js && wasm

// Command wasm is the playground's engine in the browser
// (docs/playground.md): it registers the functions of package play on the
// page's worker (web/static/worker.js) and waits. Every function takes
// and returns JSON text, so the worker passes strings only (but the bytes
// of a file, and a run's columns).
//
//	ratesimRun(file, text, optionsJSON) -> [play.Result, its columns]
//	ratesimExplain(row, index)          -> [play.Why] or {error}
//	ratesimDescribe(file, text)         -> play.Controls or {error}
//	ratesimEdit(file, text, control, value) -> {text} or {error}
//	ratesimCSV()                        -> {csv} (compare --decisions's)
//	ratesimAddFile(name, Uint8Array)    a file replays read (play.AddFile)
//	ratesimVersion()                    -> "dev"
package main

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"syscall/js"
	"time"

	"github.com/ratesim/ratesim/web/play"
)

func main() {
	var s play.Session // the last run, which Explain reads
	js.Global().Set("ratesimRun", js.FuncOf(func(_ js.Value, a []js.Value) any {
		var o play.Options
		if err := json.Unmarshal([]byte(a[2].String()), &o); err != nil {
			return fail(err)
		}
		t0 := time.Now()
		res := s.Run(a[0].String(), a[1].String(), o)
		t1 := time.Now()
		cols, data := columns(res)
		out := []any{encode(struct {
			*play.Result
			Columns [][]string `json:"columns,omitempty"`
		}{res, cols}), data}
		// the phases of a run, for the page's measure of its reruns
		// (docs/playground.md, "Measured"): the wall clock of the
		// browser, never the engine's
		js.Global().Set("ratesimPhases", map[string]any{
			"engine": float64(t1.Sub(t0).Microseconds()) / 1e3,
			"encode": float64(time.Since(t1).Microseconds()) / 1e3,
		})
		return out
	}))
	js.Global().Set("ratesimExplain", js.FuncOf(func(_ js.Value, a []js.Value) any {
		w, err := s.Explain(a[0].Int(), a[1].Int())
		if err != nil {
			return fail(err)
		}
		return encode(w)
	}))
	js.Global().Set("ratesimDescribe", js.FuncOf(func(_ js.Value, a []js.Value) any {
		c, err := play.Describe(a[0].String(), a[1].String())
		if err != nil {
			return fail(err)
		}
		return encode(c)
	}))
	js.Global().Set("ratesimEdit", js.FuncOf(func(_ js.Value, a []js.Value) any {
		text, err := play.Edit(a[0].String(), a[1].String(), a[2].String(), a[3].String())
		if err != nil {
			return fail(err)
		}
		return encode(map[string]string{"text": text})
	}))
	js.Global().Set("ratesimAddFile", js.FuncOf(func(_ js.Value, a []js.Value) any {
		data := make([]byte, a[1].Length())
		js.CopyBytesToGo(data, a[1])
		s.AddFile(a[0].String(), data)
		return nil
	}))
	js.Global().Set("ratesimVersion", js.FuncOf(func(js.Value, []js.Value) any {
		return encode(play.Version())
	}))
	js.Global().Set("ratesimCSV", js.FuncOf(func(js.Value, []js.Value) any {
		csv, err := s.CSV()
		if err != nil {
			return fail(err)
		}
		return encode(map[string]string{"csv": csv})
	}))
	js.Global().Call("ratesimReady")
	select {}
}

// columns takes the rows' decisions out of res, to pass them as numbers
// rather than JSON text: encoding/json's tens of thousands of numbers per
// row, and their parsing in the page, took more time than the engine's run
// of the retry storms (docs/playground.md, "Measured"). It returns, per
// row, the names of its columns, and a Uint8Array of float64s, little
// endian: row after row, column after column, each as long as the row's
// verdicts (every figure is an integer well under 2^53, so exact).
func columns(res *play.Result) ([][]string, js.Value) {
	var names [][]string
	n := 0 // the figures of every column, sized at once
	for i := range res.Rows {
		r := &res.Rows[i]
		n += len(r.T) + len(r.Key) + len(r.Delay) + len(r.Retry) + len(r.Attempt) + len(r.Cost) + len(r.Node) + len(r.Decided)
	}
	buf := make([]byte, 0, 8*n)
	put := func(v float64) { buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(v)) }
	for i := range res.Rows {
		r := &res.Rows[i]
		var ns []string
		add64 := func(name string, c []int64) {
			if c == nil {
				return
			}
			ns = append(ns, name)
			for _, v := range c {
				put(float64(v))
			}
		}
		add32 := func(name string, c []int32) {
			if c == nil {
				return
			}
			ns = append(ns, name)
			for _, v := range c {
				put(float64(v))
			}
		}
		add64("t", r.T)
		add32("key", r.Key)
		add64("delay", r.Delay)
		add64("retry_after", r.Retry)
		add32("attempt", r.Attempt)
		add64("cost", r.Cost)
		add32("node", r.Node)
		add64("decided", r.Decided)
		r.T, r.Key, r.Delay, r.Retry, r.Attempt, r.Cost, r.Node, r.Decided = nil, nil, nil, nil, nil, nil, nil, nil
		names = append(names, ns)
	}
	data := js.Global().Get("Uint8Array").New(len(buf))
	js.CopyBytesToJS(data, buf)
	return names, data
}

func encode(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return fail(err)
	}
	return string(b)
}

func fail(err error) any {
	b, _ := json.Marshal(map[string]string{"error": err.Error()})
	return string(b)
}
