package redislua

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"syscall"
	"time"

	"github.com/ratesim/ratesim/algorithms"
	"github.com/redis/go-redis/v9"
)

// Request is one decision to ask a script for: a request of Cost for the
// limited key Key at Now (ns since the caller's epoch; ignored by
// ClockRedis). Requests of one key must come in non-decreasing Now, as for
// an algorithms.Limiter.
type Request struct {
	Now  time.Duration
	Key  string
	Cost int64
	// Keys is, for an all-of row whose limits count by different keys,
	// each limit's key ("" for a limit that does not apply to the
	// request); nil when every limit counts by Key.
	Keys []string
}

// Reply is a script's answer: the decision and, for an all-of row, the
// limit that fired (1 + its index; 0 when none did, and for every other
// row), as sim.Decision's Fired.
type Reply struct {
	algorithms.Decision
	Fired int
}

// Config is what a Runner runs: an algorithm's script with one policy, for
// the keys of one row of one run.
type Config struct {
	Algorithm string
	Params    algorithms.Params
	Clock     Clock
	// Run and Label name the keys: Key(Run, Label, request's key).
	Run, Label string
	// Depth is how many EVALSHA go in one pipeline; 0 means 32.
	Depth int
}

// DefaultDepth is the pipeline depth of a Config that sets none.
const DefaultDepth = 32

// Runner sends decisions to a script on Redis, pipelined, in order: after
// one SCRIPT LOAD, each pipeline is Depth EVALSHA of the script, and the
// replies are handed back in the order the requests came. A script that
// Redis has lost (NOSCRIPT, after SCRIPT FLUSH or a restart) is loaded
// again and the requests from the first one that found it missing are sent
// again, so that each decision is made once and in order.
type Runner struct {
	c     *redis.Client
	cfg   Config
	src   string
	sha   string
	loads int
	// resent counts the pipelines that found the script missing after
	// some of their decisions were made (a flush within a pipeline)
	resent int
	// afterEval, for tests, may add commands to a pipeline after its i-th
	// EVALSHA (a SCRIPT FLUSH within a pipeline)
	afterEval func(pipe redis.Pipeliner, i int)
}

// RunError is a run that stopped before its requests ended: Done decisions
// were made and handed back before Err.
type RunError struct {
	Done int
	Err  error
}

func (e *RunError) Error() string {
	return fmt.Sprintf("redis: stopped after %d decisions were made and checked: %v", e.Done, e.Err)
}

func (e *RunError) Unwrap() error { return e.Err }

// NewRunner checks cfg, and loads the script on c. c must not retry
// commands (redis.Options.MaxRetries -1, as Dial makes it): a pipeline sent
// again after a lost reply could make a decision twice.
func NewRunner(ctx context.Context, c *redis.Client, cfg Config) (*Runner, error) {
	if n := c.Options().MaxRetries; n != 0 {
		return nil, fmt.Errorf("the redis client retries commands (MaxRetries %d): a pipeline sent again after a lost reply could make a decision twice; make it with MaxRetries: -1 (redislua.Dial does)", n)
	}
	if _, err := algorithms.New(cfg.Algorithm, cfg.Params); err != nil {
		return nil, err
	}
	if err := Unsupported(cfg.Params); err != nil {
		return nil, err
	}
	src, err := Script(cfg.Algorithm, cfg.Clock)
	if err != nil {
		return nil, err
	}
	if cfg.Depth == 0 {
		cfg.Depth = DefaultDepth
	}
	if cfg.Depth < 1 {
		return nil, fmt.Errorf("pipeline depth %d: want at least 1", cfg.Depth)
	}
	r := &Runner{c: c, cfg: cfg, src: src}
	if err := r.load(ctx); err != nil {
		return nil, err
	}
	return r, nil
}

// SHA returns the SHA1 of the script the runner sends.
func (r *Runner) SHA() string { return r.sha }

// Loads returns how many times the script was loaded: 1, plus one per
// NOSCRIPT met.
func (r *Runner) Loads() int { return r.loads }

func (r *Runner) load(ctx context.Context) error {
	sha, err := r.c.ScriptLoad(ctx, r.src).Result()
	if err != nil {
		return fmt.Errorf("SCRIPT LOAD %s: %w", r.cfg.Algorithm, err)
	}
	r.sha = sha
	r.loads++
	return nil
}

// Run sends the requests, Depth at a time, and calls fn with each one's
// decision, in order. It holds at most Depth requests at once. It returns
// how many decisions fn was given; an error from Redis or from fn stops it
// with a *RunError (Redis failed) or fn's error.
func (r *Runner) Run(ctx context.Context, reqs iter.Seq[Request], fn func(Request, algorithms.Decision) error) (int, error) {
	return r.RunReplies(ctx, reqs, func(req Request, rep Reply) error { return fn(req, rep.Decision) })
}

// RunReplies is Run, handing fn each whole reply: for an all-of row, the
// limit that fired too.
func (r *Runner) RunReplies(ctx context.Context, reqs iter.Seq[Request], fn func(Request, Reply) error) (int, error) {
	batch := make([]Request, 0, r.cfg.Depth)
	done := 0
	for req := range reqs {
		batch = append(batch, req)
		if len(batch) == r.cfg.Depth {
			n, err := r.send(ctx, batch, fn)
			done += n
			if err != nil {
				return done, r.wrap(done, err)
			}
			batch = batch[:0]
		}
	}
	if len(batch) > 0 {
		n, err := r.send(ctx, batch, fn)
		done += n
		if err != nil {
			return done, r.wrap(done, err)
		}
	}
	return done, nil
}

// callbackError is an error of Run's fn, passed through unwrapped.
type callbackError struct{ err error }

func (e callbackError) Error() string { return e.err.Error() }

func (r *Runner) wrap(done int, err error) error {
	var cb callbackError
	if errors.As(err, &cb) {
		return cb.err
	}
	return &RunError{Done: done, Err: err}
}

// isNoScript reports whether err is Redis's NOSCRIPT.
func isNoScript(err error) bool {
	return err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT")
}

// send runs one pipeline of batch and hands the decisions to fn in order,
// loading the script again on NOSCRIPT. It returns how many it handed.
func (r *Runner) send(ctx context.Context, batch []Request, fn func(Request, Reply) error) (int, error) {
	done := 0
	for reloads := 0; len(batch) > 0; reloads++ {
		if reloads > 10 {
			return done, fmt.Errorf("the script went missing (NOSCRIPT) %d times in a row after SCRIPT LOAD", reloads)
		}
		pipe := r.c.Pipeline()
		cmds := make([]*redis.Cmd, len(batch))
		for i, req := range batch {
			keys, args := r.call(req)
			cmds[i] = pipe.EvalSha(ctx, r.sha, keys, args...)
			if r.afterEval != nil {
				r.afterEval(pipe, i)
			}
		}
		_, execErr := pipe.Exec(ctx)
		missing := -1
		for i, cmd := range cmds {
			err := cmd.Err()
			if missing >= 0 {
				if !isNoScript(err) {
					// A later decision was made without the earlier
					// one: sending that one again would reorder them.
					return done, fmt.Errorf("decision %d found the script missing (NOSCRIPT) but decision %d did not (%v): the script was loaded again by another client mid-pipeline, and the decisions would be out of order", done+missing+1, done+i+1, err)
				}
				continue
			}
			if isNoScript(err) {
				missing = i
				continue
			}
			if err != nil {
				return done, err
			}
			d, err := reply(cmd.Val(), r.cfg.Algorithm == AllOf)
			if err != nil {
				return done, err
			}
			if err := fn(batch[i], d); err != nil {
				return done, callbackError{err}
			}
			done++
		}
		if missing < 0 {
			if execErr != nil && !isNoScript(execErr) {
				return done, execErr // not expected: every command succeeded
			}
			return done, nil
		}
		if err := r.load(ctx); err != nil {
			return done, err
		}
		batch = batch[missing:]
		if missing > 0 {
			r.resent++
			reloads = -1 // progress: count the reloads in a row afresh
		}
	}
	return done, nil
}

// call returns the KEYS and ARGV of req's EVALSHA.
func (r *Runner) call(req Request) ([]string, []any) {
	if r.cfg.Algorithm != AllOf {
		return []string{Key(r.cfg.Run, r.cfg.Label, req.Key)}, Args(r.cfg.Algorithm, r.cfg.Params, req.Now, req.Cost)
	}
	var asked []bool
	keys := make([]string, 0, len(r.cfg.Params.Members))
	for i := range r.cfg.Params.Members {
		k := req.Key
		if req.Keys != nil {
			if asked == nil {
				asked = make([]bool, len(r.cfg.Params.Members))
			}
			if k = req.Keys[i]; k == "" {
				continue
			}
			asked[i] = true
		}
		keys = append(keys, MemberKey(r.cfg.Run, r.cfg.Label, i, k))
	}
	return keys, AllOfArgs(r.cfg.Params, req.Now, req.Cost, asked)
}

// Dial connects to the Redis at url (redis://host:port/db, rediss://...,
// or unix:///path/redis.sock) and checks that it answers within timeout.
// The client does not retry commands (see NewRunner). go-redis's own log
// is silenced (this package never prints): what goes wrong is in the
// errors returned, a refused connection a *RefusedError.
func Dial(ctx context.Context, url string, timeout time.Duration) (*redis.Client, error) {
	redis.SetLogger(silent{})
	opts, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("redis URL %q: %v (want redis://host:port/db or unix:///path/redis.sock)", url, err)
	}
	opts.MaxRetries = -1
	opts.DialTimeout = timeout
	opts.DialerRetries = 1 // an unreachable server is an error within timeout
	c := redis.NewClient(opts)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		c.Close()
		if errors.Is(err, syscall.ECONNREFUSED) {
			return nil, &RefusedError{URL: url, Addr: opts.Addr, Err: err}
		}
		return nil, fmt.Errorf("redis at %s does not answer within %v: %v", url, timeout, err)
	}
	return c, nil
}

// RefusedError is a Redis URL where nothing listens: the connection was
// refused.
type RefusedError struct {
	URL, Addr string
	Err       error
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("%s: the connection is refused: no Redis listens at %s (want the address of a running redis-server, redis://host:port/db or unix:///path/redis.sock)", e.URL, e.Addr)
}

func (e *RefusedError) Unwrap() error { return e.Err }

// silent is go-redis's logger for Dial's clients: it drops every line.
type silent struct{}

func (silent) Printf(context.Context, string, ...any) {}
