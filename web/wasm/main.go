//go:build js && wasm

// Command wasm is the playground's engine in the browser
// (docs/playground.md): it registers the functions of package play on the
// page's worker (web/static/worker.js) and waits. Every function takes
// and returns JSON text, so the worker passes strings only.
//
//	ratesimRun(file, text, optionsJSON) -> play.Result
//	ratesimExplain(row, index)          -> [play.Why] or {error}
//	ratesimDescribe(file, text)         -> play.Controls or {error}
//	ratesimEdit(file, text, control, value) -> {text} or {error}
//	ratesimCSV()                        -> {csv} (compare --decisions's)
//	ratesimVersion()                    -> "dev"
package main

import (
	"encoding/json"
	"syscall/js"

	"github.com/ratesim/ratesim/web/play"
)

func main() {
	var s play.Session // the last run, which Explain reads
	js.Global().Set("ratesimRun", js.FuncOf(func(_ js.Value, a []js.Value) any {
		var o play.Options
		if err := json.Unmarshal([]byte(a[2].String()), &o); err != nil {
			return fail(err)
		}
		return encode(s.Run(a[0].String(), a[1].String(), o))
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
