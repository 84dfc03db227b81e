package verify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/certbank/certbank"
)

// Solver answers one question without seeing its key.
type Solver interface {
	// Solve returns the letter of the option the solver chose. Errors
	// marked with Retryable are asked again after a pause; errors marked
	// with Fatal stop the whole run; other errors give up on the question.
	Solve(ctx context.Context, it Item) (certbank.Letter, error)
}

// SolverFunc adapts a function to Solver.
type SolverFunc func(ctx context.Context, it Item) (certbank.Letter, error)

// Solve calls f.
func (f SolverFunc) Solve(ctx context.Context, it Item) (certbank.Letter, error) { return f(ctx, it) }

// solverError classifies a solver failure for Run.
type solverError struct {
	err   error
	retry bool          // transient: ask again after a pause
	after time.Duration // the pause the solver asked for, if any
	fatal bool          // every question would fail the same way: stop the run (after the retries, if retry)
}

func (e *solverError) Error() string { return e.err.Error() }
func (e *solverError) Unwrap() error { return e.err }

// Retryable marks err as transient (a rate limit, a server error): Run asks
// again after a pause of at least after.
func Retryable(err error, after time.Duration) error {
	return &solverError{err: err, retry: true, after: after}
}

// Fatal marks err as one that every question would hit (bad credentials, a
// wrong URL, a missing program): Run stops, keeping the answers it has.
func Fatal(err error) error { return &solverError{err: err, fatal: true} }

// ParseSolver returns the solver described by spec:
//
//	openai:URL,model=MODEL   an OpenAI-compatible chat completions API at URL
//	                         (POST URL/chat/completions), sent apiKey as a
//	                         bearer token when it is not empty
//	cmd:PATH                 a program that reads the question as JSON
//	                         {"id", "question", "options"} on stdin and writes
//	                         its letter on stdout
func ParseSolver(spec, apiKey string) (Solver, error) {
	kind, rest, _ := strings.Cut(spec, ":")
	switch kind {
	case "openai":
		parts := strings.Split(rest, ",")
		o := &OpenAI{URL: strings.TrimRight(parts[0], "/"), APIKey: apiKey, Client: &http.Client{}}
		if !strings.HasPrefix(o.URL, "http://") && !strings.HasPrefix(o.URL, "https://") {
			return nil, certbank.Errorf(certbank.Invalid, "solver %q: the URL must start with http:// or https://, e.g. openai:https://api.openai.com/v1,model=MODEL", spec)
		}
		for _, p := range parts[1:] {
			k, v, _ := strings.Cut(p, "=")
			switch k {
			case "model":
				o.Model = v
			default:
				return nil, certbank.Errorf(certbank.Invalid, "solver %q: unknown setting %q; the only one is model=MODEL", spec, k)
			}
		}
		if o.Model == "" {
			return nil, certbank.Errorf(certbank.Invalid, "solver %q: add the model, e.g. openai:%s,model=MODEL", spec, o.URL)
		}
		return o, nil
	case "cmd":
		if rest == "" {
			return nil, certbank.Errorf(certbank.Invalid, "solver %q: give the program, e.g. cmd:./solve.sh", spec)
		}
		return &Command{Path: rest}, nil
	}
	return nil, certbank.Errorf(certbank.Invalid, "solver %q must be openai:URL,model=MODEL or cmd:PATH", spec)
}

// SystemPrompt is what an OpenAI solver is told before each question.
const SystemPrompt = "You are answering a multiple-choice practice question for an IT certification exam. " +
	"Exactly one option is the single best answer. Reply with its letter only: A, B, C or D."

// Prompt returns the question as an OpenAI solver is asked it.
func Prompt(it Item) string {
	o := it.Options
	return fmt.Sprintf("%s\n\nA. %s\nB. %s\nC. %s\nD. %s\n\nAnswer with one letter.", it.Question, o.A, o.B, o.C, o.D)
}

// OpenAI asks a model behind an OpenAI-compatible chat completions API, at
// temperature 0.
type OpenAI struct {
	URL    string // the API base, e.g. https://api.openai.com/v1
	Model  string
	APIKey string // sent as a bearer token when set
	Client *http.Client
}

// Solve implements Solver.
func (o *OpenAI) Solve(ctx context.Context, it Item) (certbank.Letter, error) {
	type message struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	body, err := json.Marshal(struct {
		Model       string    `json:"model"`
		Temperature float64   `json:"temperature"`
		Messages    []message `json:"messages"`
	}{o.Model, 0, []message{{"system", SystemPrompt}, {"user", Prompt(it)}}})
	if err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.URL+"/chat/completions", bytes.NewReader(body))
	if err != nil {
		return "", Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if o.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+o.APIKey)
	}
	resp, err := o.Client.Do(req)
	if err != nil {
		var op *net.OpError
		switch {
		case ctx.Err() != nil:
			return "", ctx.Err()
		case errors.As(err, &op) && op.Op == "dial":
			// Retried, but when the server stays unreachable every
			// question would fail the same way: then stop the run.
			return "", &solverError{err: err, retry: true, fatal: true}
		}
		return "", Retryable(err, 0)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", Retryable(err, 0)
	}
	if resp.StatusCode != http.StatusOK {
		err := fmt.Errorf("%s answered %s: %s", req.URL, resp.Status, apiMessage(data))
		switch code := resp.StatusCode; {
		case code == http.StatusTooManyRequests || code >= 500:
			return "", Retryable(err, retryAfter(resp.Header.Get("Retry-After")))
		case code == http.StatusUnauthorized || code == http.StatusForbidden || code == http.StatusNotFound:
			return "", Fatal(err)
		}
		return "", err
	}
	var reply struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(data, &reply); err != nil || len(reply.Choices) == 0 {
		return "", fmt.Errorf("%s: not a chat completion: %.200s", req.URL, data)
	}
	return ParseAnswer(reply.Choices[0].Message.Content)
}

// apiMessage returns the error message of an API error body, or the start
// of the body.
func apiMessage(data []byte) string {
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(data, &e) == nil && e.Error.Message != "" {
		return e.Error.Message
	}
	s := strings.TrimSpace(string(data))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// retryAfter parses a Retry-After header: seconds or an HTTP date.
func retryAfter(h string) time.Duration {
	if s, err := strconv.Atoi(strings.TrimSpace(h)); err == nil && s > 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(h); err == nil {
		return time.Until(t)
	}
	return 0
}

var (
	thinkRE  = regexp.MustCompile(`(?s)<think>.*?</think>`)
	letterRE = regexp.MustCompile(`\b[A-D]\b`)
)

// ParseAnswer returns the first standalone letter A to D in a solver's
// reply (after any <think>…</think> block).
func ParseAnswer(reply string) (certbank.Letter, error) {
	if l := letterRE.FindString(thinkRE.ReplaceAllString(reply, "")); l != "" {
		return certbank.Letter(l), nil
	}
	s := strings.TrimSpace(reply)
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return "", fmt.Errorf("no letter A, B, C or D in the reply %q", s)
}

// Command runs a program per question: the question as JSON {"id",
// "question", "options"} on its stdin, its letter on its stdout.
type Command struct {
	Path string
}

// Solve implements Solver.
func (c *Command) Solve(ctx context.Context, it Item) (certbank.Letter, error) {
	in, err := json.Marshal(it)
	if err != nil {
		return "", err
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, c.Path)
	cmd.Stdin = bytes.NewReader(in)
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	cmd.WaitDelay = time.Second
	err = cmd.Run()
	switch {
	case ctx.Err() != nil:
		return "", ctx.Err()
	case errors.Is(err, exec.ErrNotFound), errors.Is(err, fs.ErrNotExist), errors.Is(err, fs.ErrPermission):
		return "", Fatal(fmt.Errorf("cannot run %s: %w", c.Path, err))
	case err != nil:
		msg := strings.TrimSpace(stderr.String())
		if i := strings.LastIndexByte(msg, '\n'); i >= 0 {
			msg = msg[i+1:]
		}
		return "", fmt.Errorf("%s: %v: %s", c.Path, err, msg)
	}
	return ParseAnswer(stdout.String())
}
