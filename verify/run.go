package verify

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/certbank/certbank"
)

// NamedSolver is a solver and the name its answers are recorded under. The
// name says honestly what the solver is (the model and how it was asked, a
// program, a person), because readers of the bank rely on it.
type NamedSolver struct {
	Name   string
	Solver Solver
}

// RunOptions configure Run. Zero values take the defaults.
type RunOptions struct {
	Solvers       []NamedSolver
	Certification string        // "" for every certification
	Date          string        // of the entries; default today
	Concurrency   int           // questions asked at once; default 4
	Retries       int           // further attempts after a transient failure; default 3, negative for none
	Timeout       time.Duration // per attempt; default 2 minutes
	Backoff       time.Duration // pause before the first retry, doubling each time; default 2 s
	Batch         int           // answers written at once; default 10
	FlushEvery    time.Duration // longest time an answer waits to be written; default 15 s
	Progress      io.Writer     // where the progress line goes; nil for none
	Terminal      bool          // Progress is a terminal: update one line in place
}

func (o *RunOptions) defaults() {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	defDur := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.Concurrency, 4)
	def(&o.Retries, 3)
	def(&o.Batch, 10)
	defDur(&o.Timeout, 2*time.Minute)
	defDur(&o.Backoff, 2*time.Second)
	defDur(&o.FlushEvery, 15*time.Second)
	if o.Retries < 0 {
		o.Retries = 0
	}
	if o.Date == "" {
		o.Date = today()
	}
}

// maxPause caps the pause between retries.
const maxPause = time.Minute

// RunResult says what Run did.
type RunResult struct {
	Counts
	Total  int       // questions to ask (per solver) when the run started
	Failed []Failure // questions that got no answer
	Stale  []string  // ids whose question changed while it was asked; not recorded
}

// Failure is a question a solver gave no answer to.
type Failure struct {
	ID     string
	Solver string
	Err    error
}

// Run asks each solver every question (of the certification, or all) it has
// not answered yet, and records the answers as they arrive, a batch at a
// time, so an interrupted run keeps what it got and the next run asks only
// what is missing. Transient failures and timeouts are retried with
// exponential backoff. When ctx is cancelled or a solver fails fatally, Run
// writes the answers it has and returns the error with the result.
func (b *Bank) Run(ctx context.Context, o RunOptions) (*RunResult, error) {
	o.defaults()
	if len(o.Solvers) == 0 {
		return nil, certbank.Errorf(certbank.Invalid, "give at least one solver")
	}
	names := map[string]bool{}
	for _, s := range o.Solvers {
		if err := checkSolver(s.Name); err != nil {
			return nil, err
		}
		if names[s.Name] {
			return nil, certbank.Errorf(certbank.Invalid, "solver %q is given twice", s.Name)
		}
		names[s.Name] = true
	}
	if err := checkDate(o.Date); err != nil {
		return nil, err
	}
	c, err := b.load(nil)
	if err != nil {
		return nil, err
	}
	b.setContent(c)
	if o.Certification != "" {
		if err := b.certification(o.Certification); err != nil {
			return nil, err
		}
	}

	type job struct {
		item   Item
		key    certbank.Letter
		solver NamedSolver
	}
	var jobs []job
	for i := range c.Questions {
		q := &c.Questions[i]
		if o.Certification != "" && q.Certification != o.Certification {
			continue
		}
		for _, s := range o.Solvers {
			if !answeredBy(q, s.Name) {
				jobs = append(jobs, job{itemOf(q), q.Answer, s})
			}
		}
	}
	res := &RunResult{Total: len(jobs)}
	if len(jobs) == 0 {
		return res, nil
	}

	runCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	todo := make(chan job)
	go func() {
		defer close(todo)
		for _, j := range jobs {
			select {
			case todo <- j:
			case <-runCtx.Done():
				return
			}
		}
	}()
	type answer struct {
		job
		letter certbank.Letter
		err    error
	}
	answers := make(chan answer, len(jobs)) // workers never wait for a batch being written
	var wg sync.WaitGroup
	for range min(o.Concurrency, len(jobs)) {
		wg.Go(func() {
			for j := range todo {
				if runCtx.Err() != nil {
					continue
				}
				l, err := ask(runCtx, o, j.solver.Solver, j.item)
				answers <- answer{j, l, err}
			}
		})
	}
	go func() {
		wg.Wait()
		close(answers)
	}()

	p := &progress{w: o.Progress, terminal: o.Terminal, total: len(jobs), start: time.Now()}
	var batch []entry
	var writeErr error
	flush := func() {
		if len(batch) == 0 || writeErr != nil {
			return
		}
		r, err := b.record(batch)
		if err != nil {
			writeErr = err
			stop(err)
			return
		}
		res.add(r)
		res.Stale = append(res.Stale, r.stale...)
		batch = nil
	}
	tick := time.NewTicker(o.FlushEvery)
	defer tick.Stop()
	var fatal error
	for running := true; running; {
		select {
		case a, ok := <-answers:
			if !ok {
				running = false
				break
			}
			var se *solverError
			switch {
			case a.err == nil:
				e := verificationEntry(a.item.ID, certbank.Verification{Solver: a.solver.Name, Answer: a.letter, Date: o.Date})
				e.asked = &a.item
				batch = append(batch, e)
				res.Answers++
				if a.letter == a.key {
					res.Agree++
				} else {
					res.Disagree++
				}
			case runCtx.Err() != nil:
				continue // interrupted: asked again next run
			case errors.As(a.err, &se) && se.fatal:
				fatal = fmt.Errorf("solver %q: %w", a.solver.Name, a.err)
				stop(fatal)
				continue
			default:
				res.Failed = append(res.Failed, Failure{a.item.ID, a.solver.Name, a.err})
			}
			p.update(res.Answers, res.Agree, res.Disagree, len(res.Failed))
			if len(batch) >= o.Batch && len(answers) == 0 {
				flush() // else more answers are waiting: take them into this batch first
			}
		case <-tick.C:
			flush()
		}
	}
	flush()
	p.finish()
	res.Answers -= len(res.Stale)
	switch {
	case writeErr != nil:
		return res, writeErr
	case fatal != nil:
		return res, fatal
	}
	return res, ctx.Err()
}

// ask asks solver one question, retrying transient failures and timeouts.
func ask(ctx context.Context, o RunOptions, solver Solver, it Item) (certbank.Letter, error) {
	pause := o.Backoff
	for attempt := 0; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, o.Timeout)
		l, err := solver.Solve(actx, it)
		timedOut := ctx.Err() == nil && errors.Is(actx.Err(), context.DeadlineExceeded)
		cancel()
		if err == nil && l.Index() < 0 {
			err = fmt.Errorf("%q is not a letter A to D", l)
		}
		if err == nil {
			return l, nil
		}
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		var se *solverError
		retry := errors.As(err, &se) && se.retry
		if timedOut {
			err, retry = fmt.Errorf("no answer within %s", o.Timeout), true
		}
		if !retry || attempt >= o.Retries {
			if attempt > 0 {
				err = fmt.Errorf("%w (after %d attempts)", err, attempt+1)
			}
			return "", err
		}
		wait := pause
		if se != nil && se.after > wait {
			wait = min(se.after, maxPause)
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return "", ctx.Err()
		}
		pause = min(2*pause, maxPause)
	}
}

// progress writes the progress line: in place on a terminal, else one line
// per tenth of the work.
type progress struct {
	w        io.Writer
	terminal bool
	total    int
	start    time.Time
	tenths   int // tenths already reported
	width    int // of the last line written in place
	line     string
}

func (p *progress) update(answered, agree, disagree, failed int) {
	if p.w == nil {
		return
	}
	done := answered + failed
	rate := float64(done) / max(time.Since(p.start).Seconds(), 1e-3)
	p.line = fmt.Sprintf("verify: %d/%d done (%d agree, %d disagree, %d failed), %.1f questions/s",
		done, p.total, agree, disagree, failed, rate)
	if p.terminal {
		fmt.Fprintf(p.w, "\r%s%s", p.line, strings.Repeat(" ", max(p.width-len(p.line), 0)))
		p.width = len(p.line)
		return
	}
	if t := done * 10 / p.total; t > p.tenths {
		p.tenths = t
		fmt.Fprintln(p.w, p.line)
	}
}

func (p *progress) finish() {
	if p.w != nil && p.terminal && p.width > 0 {
		fmt.Fprintln(p.w)
	}
}
