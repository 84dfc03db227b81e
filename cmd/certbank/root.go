package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/certbank/certbank/generator"
	"github.com/certbank/certbank/paywall/store"
	"github.com/spf13/cobra"
)

// Exit codes.
const (
	exitOK      = 0
	exitError   = 1 // anything else
	exitUsage   = 2 // bad flags or arguments
	exitContent = 3 // the content tree has errors
)

// env reads environment variables; tests pass their own.
type env func(string) string

// app is what every command shares: where to read and write, and the
// environment. Commands are built by constructors that take it; nothing is
// global.
type app struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv env
}

// usageError marks errors in how the command was called (exit code 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// checkFailed is a check that ran and found problems it has already printed
// (lint --strict, verify status --check): exit code 3 with a summary line.
type checkFailed struct{ summary string }

func (e checkFailed) Error() string { return e.summary }

// withStore opens the store named by dsn, runs fn and closes it.
func withStore(ctx context.Context, dsn string, fn func(store.Store) error) error {
	st, _, err := openStore(ctx, dsn)
	if err != nil {
		return err
	}
	defer st.Close()
	return fn(st)
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv env) int {
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr, getenv: getenv}
	root := a.newRootCmd()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	var probs generator.Problems
	var ue usageError
	var cf checkFailed
	switch {
	case errors.As(err, &cf):
		fmt.Fprintf(stderr, "certbank: %s\n", cf.summary)
		return exitContent
	case errors.As(err, &probs):
		fmt.Fprintln(stderr, probs.Error())
		fmt.Fprintf(stderr, "%d problem(s) in the content; nothing was written\n", len(probs))
		return exitContent
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "certbank: %v\nRun 'certbank help' for usage.\n", err)
		return exitUsage
	default:
		fmt.Fprintf(stderr, "certbank: %v\n", err)
		return exitError
	}
}

func (a *app) newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "certbank",
		Short:         "Build, check, verify and serve a bank of IT certification practice questions",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(
		a.newBuildCmd(),
		a.newLintCmd(),
		a.newServeCmd(),
		a.newKeysCmd(),
		a.newMigrateCmd(),
		a.newPayCmd(),
		a.newPaymentsCmd(),
		a.newVerifyCmd(),
		a.newCoverageCmd(),
		a.newPlanCmd(),
		a.newReportsCmd(),
		a.newItemsCmd(),
	)
	for _, c := range root.Commands() {
		c.Args = wrapArgs(c.Args)
	}
	return root
}

// wrapArgs makes argument-count errors usage errors.
func wrapArgs(v cobra.PositionalArgs) cobra.PositionalArgs {
	if v == nil {
		v = cobra.NoArgs
	}
	return func(cmd *cobra.Command, args []string) error {
		if err := v(cmd, args); err != nil {
			return usageError{err}
		}
		return nil
	}
}

// envDefault returns the environment variable name if set, else def.
func (a *app) envDefault(name, def string) string {
	if v := a.getenv(name); v != "" {
		return v
	}
	return def
}
