package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/ratesim/ratesim/web"
	"github.com/spf13/cobra"
)

// defaultServeAddr is where `ratesim serve` listens: this machine only.
const defaultServeAddr = "127.0.0.1:8080"

func newServeCmd() *cobra.Command {
	var addr string
	c := &cobra.Command{
		Use:   "serve [--addr HOST:PORT]",
		Short: "Serve the playground, the engine in a browser page, offline",
		Long: `Serves the playground (docs/playground.md) from files held in the binary:
a page that runs the same engine in the browser (WebAssembly), with presets
for every built-in and lesson, controls that edit the scenario, the timeline
of every decision and why each was made. Nothing is fetched from elsewhere.
It listens on 127.0.0.1:8080 unless --addr says otherwise (port 0 picks a
free one) and stops on Ctrl-C.`,
		Example: `  ratesim serve
  ratesim serve --addr 127.0.0.1:9000`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return usagef("--addr: %v", err)
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
			defer stop()
			return servePlayground(ctx, ln, c.ErrOrStderr())
		},
	}
	c.Flags().StringVar(&addr, "addr", defaultServeAddr, "the address to listen on, HOST:PORT")
	return c
}

// servePlayground serves the playground on ln until ctx is done, saying
// where on w.
func servePlayground(ctx context.Context, ln net.Listener, w io.Writer) error {
	srv := &http.Server{Handler: playgroundHandler(), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(w, "ratesim: the playground is at http://%s/ (Ctrl-C stops it)\n", ln.Addr())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		err := srv.Shutdown(sctx)
		if e := <-done; !errors.Is(e, http.ErrServerClosed) {
			return e
		}
		return err
	}
}

// playgroundHandler serves web.Static. The engine goes as the gzip file it
// is (the page's worker unzips it), never with a Content-Encoding that a
// browser would undo first.
func playgroundHandler() http.Handler {
	files := http.FileServerFS(web.Static())
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Content-Type-Options", "nosniff")
		if strings.HasSuffix(r.URL.Path, ".gz") {
			h.Set("Content-Type", "application/gzip")
		}
		files.ServeHTTP(w, r)
	})
}
