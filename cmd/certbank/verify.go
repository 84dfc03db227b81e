package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/paywall/store"
	"github.com/certbank/certbank/verify"
	"github.com/spf13/cobra"
)

// newVerifyCmd builds "certbank verify": blind solvers check the stored
// answers, as the quality policy requires.
func (a *app) newVerifyCmd() *cobra.Command {
	var content string
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Check stored answers with blind solvers and difficulty labels with blind raters",
		Long: `A question is published to the keyed and paid routes only when at least
quality.min_agreeing_solvers (site.yaml) independent solvers chose its stored answer
without seeing it, and none chose another answer without a reviewed override. Blind
raters check each question's difficulty label (certbank lint --strict fails on a
label they contradict).

  certbank verify sheet        export blind answer sheets (no answers, no explanations)
  certbank verify import       record filled sheets as one solver's answers
  certbank verify run          ask a model (openai:) or a program (cmd:) every missing question
  certbank verify status       what is verified, pending, disagreeing, unrated and
                               miscalibrated; each solver's agreement rate
  certbank verify override     record a reviewed decision on a disagreement
  certbank verify rate-sheet   export rating sheets (key shown, difficulty label hidden)
  certbank verify rate-import  record filled rating sheets as one rater's ratings

Answers are recorded as verification entries {solver, answer, date}, ratings as
calibration entries {rater, difficulty, level, date}, in the question files, edited
in place (comments and formatting stay). The solver or rater NAME is published with
the question's quality evidence: describe honestly who or what answered, e.g.
"gpt-4o-2024-08-06 via API, temperature 0" or "J. Doe (CISSP holder)".`,
	}
	cmd.PersistentFlags().StringVar(&content, "content", a.envDefault("CERTBANK_CONTENT", "content"), "content directory (env CERTBANK_CONTENT)")
	open := func() (*verify.Bank, error) {
		if st, err := os.Stat(content); err != nil || !st.IsDir() {
			return nil, usagef("content directory %q not found; pass --content DIR", content)
		}
		b, err := verify.Open(content)
		return b, verifyErr(err)
	}
	cmd.AddCommand(
		a.newVerifySheetCmd(open),
		a.newVerifyImportCmd(open),
		a.newVerifyRunCmd(open),
		a.newVerifyStatusCmd(open),
		a.newVerifyOverrideCmd(open),
		a.newVerifyRateSheetCmd(open),
		a.newVerifyRateImportCmd(open),
	)
	for _, c := range cmd.Commands() {
		c.Args = wrapArgs(c.Args)
	}
	return cmd
}

// verifyErr turns the verify package's Invalid errors (bad flags or
// arguments) into usage errors.
func verifyErr(err error) error {
	if err != nil && certbank.ErrorCode(err) == certbank.Invalid {
		return usageError{err}
	}
	return err
}

type openBank func() (*verify.Bank, error)

// verifySheetOptions are the flags of "certbank verify sheet".
type verifySheetOptions struct {
	slug, out, format, dir string
	all, force             bool
	filter                 verify.Filter
	solver                 string // --solver, the old name of --unanswered-by
	batch                  int
	batchSet               bool
}

func (a *app) newVerifySheetCmd(open openBank) *cobra.Command {
	o := &verifySheetOptions{}
	cmd := &cobra.Command{
		Use:   "sheet (--certification SLUG | --all) --dir DIR [--batch 50] [--unanswered-by SOLVER] [--disagreeing] | --certification SLUG [--out FILE] [--format json|csv|text]",
		Short: "Export blind answer sheets: ids, questions and options, no answers",
		Long: `Writes the questions of a certification as blind answer sheets for a solver to
fill in: id, question and options A-D. Keys, explanations, domains, difficulties,
objectives and tests lines are left out.

With --dir DIR, the questions are split into batch sheets of at most --batch (50)
questions, DIR/<slug>-01.txt, DIR/<slug>-02.txt, ...: plain text with a header that
says how to answer, each question, and at the end an ANSWERS block of one "<id>: "
line per question, where the solver writes the letter. --all does this for every
certification. --format json or csv writes the batches as DIR/<slug>-01.json (or
.csv) instead.

Without --dir, one sheet of the whole certification goes to --out FILE, or to
stdout: JSON (the default, or by FILE's extension .csv / .txt), or --format csv
(header id,question,A,B,C,D,answer) or text.

--unanswered-by SOLVER (or --solver) leaves out the questions SOLVER has answered;
--disagreeing keeps only the questions a solver answered otherwise than the key
with no override recorded, for a third solver. An existing file is not overwritten
without --force, as it may hold a solver's answers.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.batchSet = cmd.Flags().Changed("batch")
			return a.runVerifySheet(open, o)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.slug, "certification", "", "the certification slug")
	fl.BoolVar(&o.all, "all", false, "every certification (with --dir)")
	fl.StringVar(&o.dir, "dir", "", "write batch sheets DIR/<slug>-NN.txt")
	fl.IntVar(&o.batch, "batch", verify.DefaultBatch, "questions per batch sheet (with --dir)")
	fl.StringVar(&o.out, "out", "", "write one sheet to FILE instead of stdout")
	fl.StringVar(&o.format, "format", "", "text, json or csv (default text with --dir, else json, or by --out's extension)")
	fl.StringVar(&o.filter.UnansweredBy, "unanswered-by", "", "leave out the questions solver NAME has answered")
	fl.StringVar(&o.solver, "solver", "", "the same as --unanswered-by")
	fl.BoolVar(&o.filter.Disagreeing, "disagreeing", false, "only questions a solver disagrees on, without override (for a third solver)")
	fl.BoolVar(&o.force, "force", false, "overwrite existing sheet files")
	return cmd
}

func (a *app) runVerifySheet(open openBank, o *verifySheetOptions) error {
	switch {
	case o.all == (o.slug != ""):
		return usagef("give --certification SLUG, or --all with --dir DIR")
	case o.all && o.dir == "":
		return usagef("--all writes sheets for every certification into --dir DIR; give --dir")
	case o.out != "" && o.dir != "":
		return usagef("--out names one sheet and --dir a directory of batch sheets; give one of them")
	case o.batchSet && o.dir == "":
		return usagef("--batch splits the sheets written into --dir DIR; give --dir")
	case o.batch < 1:
		return usagef("--batch must be at least 1, not %d", o.batch)
	case o.solver != "" && o.filter.UnansweredBy != "" && o.solver != o.filter.UnansweredBy:
		return usagef("--solver is another name for --unanswered-by; give one of them")
	}
	if o.solver != "" {
		o.filter.UnansweredBy = o.solver
	}
	format := o.format
	if format == "" {
		switch ext := strings.ToLower(filepath.Ext(o.out)); {
		case o.dir != "", ext == ".txt":
			format = "text"
		case ext == ".csv":
			format = "csv"
		default:
			format = "json"
		}
	}
	f, err := verify.ParseFormat(format)
	if err != nil {
		return verifyErr(err)
	}
	b, err := open()
	if err != nil {
		return err
	}
	if o.dir == "" {
		s, err := b.Sheet(o.slug, o.filter)
		if err != nil {
			return verifyErr(err)
		}
		if o.out == "" {
			return s.Write(a.stdout, f)
		}
		var buf bytes.Buffer
		if err := s.Write(&buf, f); err != nil {
			return err
		}
		if err := writeNew([]sheetFile{{o.out, buf.Bytes()}}, o.force); err != nil {
			return err
		}
		fmt.Fprintf(a.stdout, "wrote %d questions of %s to %s\n", len(s.Questions), o.slug, o.out)
		return nil
	}

	var batches []certBatches
	for _, slug := range slugsFor(b, o.slug) {
		s, err := b.Sheet(slug, o.filter)
		if err != nil {
			return verifyErr(err)
		}
		cb := certBatches{slug: slug, questions: len(s.Questions), ext: f.Ext()}
		for _, p := range s.Split(o.batch) {
			var buf bytes.Buffer
			if err := p.Write(&buf, f); err != nil {
				return err
			}
			cb.parts = append(cb.parts, buf.Bytes())
		}
		batches = append(batches, cb)
	}
	return a.writeBatches(o.dir, o.force, batches, "no questions to answer"+describeFilter(o.filter))
}

// slugsFor returns slug, or every certification's slug when it is empty
// (--all).
func slugsFor(b *verify.Bank, slug string) []string {
	if slug != "" {
		return []string{slug}
	}
	var slugs []string
	for _, c := range b.Content().Certifications {
		slugs = append(slugs, c.Slug)
	}
	return slugs
}

// certBatches are one certification's batch sheets, rendered.
type certBatches struct {
	slug      string
	questions int
	ext       string
	parts     [][]byte
}

// writeBatches writes each certification's batch sheets into dir as
// <slug>-01<ext>, ..., all or (when one exists and force is not set) none,
// and reports what it wrote; none says why there is nothing to write.
func (a *app) writeBatches(dir string, force bool, certs []certBatches, none string) error {
	var files []sheetFile
	var report []string
	total := 0
	for _, c := range certs {
		if len(c.parts) == 0 {
			continue
		}
		names := batchNames(dir, c.slug, len(c.parts), c.ext)
		for i, p := range c.parts {
			files = append(files, sheetFile{names[i], p})
		}
		report = append(report, fmt.Sprintf("%s: %d questions in %s", c.slug, c.questions, fileRange(names)))
		total += c.questions
	}
	if len(files) == 0 {
		fmt.Fprintf(a.stdout, "%s; no sheet written\n", none)
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := writeNew(files, force); err != nil {
		return err
	}
	for _, r := range report {
		fmt.Fprintln(a.stdout, r)
	}
	fmt.Fprintf(a.stdout, "wrote %d sheet(s) with %d questions to %s\n", len(files), total, dir)
	return nil
}

// describeFilter says what f selected, for messages.
func describeFilter(f verify.Filter) string {
	var parts []string
	if f.UnansweredBy != "" {
		parts = append(parts, fmt.Sprintf("unanswered by %q", f.UnansweredBy))
	}
	if f.Disagreeing {
		parts = append(parts, "with an unresolved disagreement")
	}
	if len(parts) == 0 {
		return ""
	}
	return " " + strings.Join(parts, " and ")
}

// sheetFile is a sheet to write.
type sheetFile struct {
	path string
	data []byte
}

// writeNew writes the files, refusing (before writing any) when one exists
// and force is not set: a sheet may hold someone's answers.
func writeNew(files []sheetFile, force bool) error {
	if !force {
		var exist []string
		for _, f := range files {
			if _, err := os.Stat(f.path); err == nil {
				exist = append(exist, f.path)
			}
		}
		if len(exist) > 0 {
			return usagef("%s already exist(s) and may hold someone's answers; nothing was written: pass --force to overwrite, or choose another directory", strings.Join(exist, ", "))
		}
	}
	for _, f := range files {
		if err := os.WriteFile(f.path, f.data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// batchNames returns the file names of n batch sheets of slug in dir:
// <slug>-01<ext>, ... (three digits and more when n needs them).
func batchNames(dir, slug string, n int, ext string) []string {
	width := max(2, len(fmt.Sprint(n)))
	names := make([]string, n)
	for i := range names {
		names[i] = filepath.Join(dir, fmt.Sprintf("%s-%0*d%s", slug, width, i+1, ext))
	}
	return names
}

// fileRange names a list of files briefly: "a", or "a ... z (n sheets)".
func fileRange(names []string) string {
	if len(names) == 1 {
		return filepath.Base(names[0])
	}
	return fmt.Sprintf("%d sheets, %s ... %s", len(names), filepath.Base(names[0]), filepath.Base(names[len(names)-1]))
}

// verifyImportOptions are the flags and arguments of "certbank verify import".
type verifyImportOptions struct {
	solver, date string
	files        []string
}

func (a *app) newVerifyImportCmd(open openBank) *cobra.Command {
	o := &verifyImportOptions{}
	cmd := &cobra.Command{
		Use:   "import --solver NAME [--date YYYY-MM-DD] FILE...",
		Short: "Record filled answer sheets as one solver's verification entries",
		Long: `Reads filled answer sheets (text, JSON or CSV, told apart by their content) and
records each answer as a verification entry {solver: NAME, answer, date} on its
question, editing the question files in place. A solver's earlier entry on a
question is replaced, so importing the same sheet twice changes nothing.

On a text sheet the answers are the "<id>: <letter>" lines of its ANSWERS block
(the letter in either case, spaces anywhere). Every sheet is checked first: a
question of the sheet without its ANSWERS line, an id repeated or not on the sheet,
an id unknown to the bank, question or option texts that differ from the bank, and
empty or invalid letters refuse the whole import (exit 3, one file:line message
each, naming the question) and no file changes.

NAME is published as quality evidence: describe honestly who answered, e.g.
"J. Doe (CISSP holder), closed book".`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, files []string) error {
			o.files = files
			return a.runVerifyImport(open, o)
		},
	}
	cmd.Flags().StringVar(&o.solver, "solver", "", "who answered, honestly described (required)")
	cmd.Flags().StringVar(&o.date, "date", "", "date of the answers, YYYY-MM-DD (default today)")
	return cmd
}

func (a *app) runVerifyImport(open openBank, o *verifyImportOptions) error {
	if o.solver == "" {
		return usagef("--solver NAME is required: who answered the sheet, honestly described")
	}
	b, err := open()
	if err != nil {
		return err
	}
	n, err := b.Import(o.solver, o.date, o.files...)
	if err != nil {
		return verifyErr(err)
	}
	fmt.Fprintf(a.stdout, "recorded %d answers of %q (%d agree with the stored answer, %d disagree): %d new, %d replaced, %d unchanged; %d file(s) written\n",
		n.Answers, o.solver, n.Agree, n.Disagree, n.Added, n.Replaced, n.Unchanged, len(n.Files))
	for _, id := range n.OverridesDropped {
		fmt.Fprintf(a.stdout, "note: the override on %s was dropped because %q's answer changed\n", id, o.solver)
	}
	return nil
}

// verifyRunOptions are the flags of "certbank verify run": the solvers as
// NAME=SPEC and the run's settings.
type verifyRunOptions struct {
	specs []string
	run   verify.RunOptions
}

func (a *app) newVerifyRunCmd(open openBank) *cobra.Command {
	o := &verifyRunOptions{}
	cmd := &cobra.Command{
		Use:   "run --solver NAME=SPEC... [--certification SLUG] [--concurrency N] [--retries N]",
		Short: "Ask a model or a program every question it has not answered yet",
		Long: `Asks each solver every question (of --certification, or all) that has no entry
of that solver yet, and records the answers in batches as they arrive: an
interrupted run keeps what it got, and running it again asks only what is missing.

SPEC is one of:
  openai:URL,model=MODEL   an OpenAI-compatible API: POST URL/chat/completions, with
                           the bearer token from CERTBANK_SOLVER_API_KEY (or
                           OPENAI_API_KEY), temperature 0; the first standalone
                           letter A-D of the reply is the answer
  cmd:PATH                 a program: the question as JSON {"id", "question",
                           "options"} on stdin, its letter on stdout

Rate limits (429), server errors (5xx) and timeouts are retried with exponential
backoff. --solver may be given more than once; NAME is published as quality
evidence, so describe the solver honestly, e.g.
  --solver "gpt-4o-2024-08-06 via API, temperature 0=openai:https://api.openai.com/v1,model=gpt-4o-2024-08-06"`,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.runVerifyRun(cmd.Context(), open, o) },
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&o.specs, "solver", nil, "NAME=SPEC: who answers (honestly described) and how to reach it; repeatable")
	fl.StringVar(&o.run.Certification, "certification", "", "only this certification (default all)")
	fl.IntVar(&o.run.Concurrency, "concurrency", 4, "questions asked at once")
	fl.IntVar(&o.run.Retries, "retries", 3, "further attempts after a rate limit, server error or timeout")
	fl.DurationVar(&o.run.Timeout, "timeout", 2*time.Minute, "time limit of each attempt")
	return cmd
}

func (a *app) runVerifyRun(ctx context.Context, open openBank, o *verifyRunOptions) error {
	ro := o.run
	if len(o.specs) == 0 {
		return usagef("give at least one --solver NAME=SPEC")
	}
	key := a.envDefault("CERTBANK_SOLVER_API_KEY", a.getenv("OPENAI_API_KEY"))
	for _, s := range o.specs {
		name, spec, ok := strings.Cut(s, "=")
		if !ok || name == "" {
			return usagef("--solver %q must be NAME=SPEC, e.g. \"my-model via API=openai:https://host/v1,model=my-model\"", s)
		}
		solver, err := verify.ParseSolver(spec, key)
		if err != nil {
			return verifyErr(err)
		}
		ro.Solvers = append(ro.Solvers, verify.NamedSolver{Name: name, Solver: solver})
	}
	if ro.Concurrency < 1 {
		return usagef("--concurrency must be at least 1")
	}
	if ro.Retries < 0 {
		return usagef("--retries must be 0 or more")
	}
	if ro.Retries == 0 {
		ro.Retries = -1 // RunOptions: negative means none
	}
	b, err := open()
	if err != nil {
		return err
	}
	ro.Progress, ro.Terminal = a.stderr, isTerminal(a.stderr)
	res, err := b.Run(ctx, ro)
	if res == nil {
		return verifyErr(err)
	}
	for _, f := range res.Failed {
		fmt.Fprintf(a.stderr, "no answer from %q to %s: %v\n", f.Solver, f.ID, f.Err)
	}
	if len(res.Stale) > 0 {
		fmt.Fprintf(a.stderr, "%d answer(s) not recorded because the question changed while it was asked: %s\n", len(res.Stale), strings.Join(res.Stale, ", "))
	}
	fmt.Fprintf(a.stdout, "%d of %d questions answered (%d agree with the stored answer, %d disagree), %d failed; %d file(s) written\n",
		res.Answers, res.Total, res.Agree, res.Disagree, len(res.Failed), len(res.Files))
	missing := res.Total - res.Answers
	switch {
	case err != nil && ctx.Err() != nil:
		return fmt.Errorf("interrupted; the %d answers received were kept, run the same command again to ask the remaining %d", res.Answers, missing)
	case err != nil && res.Answers > 0:
		return fmt.Errorf("%w\nthe %d answers received were kept; run the same command again to ask the remaining %d", verifyErr(err), res.Answers, missing)
	case err != nil:
		return verifyErr(err)
	case missing > 0:
		return fmt.Errorf("%d question(s) got no answer; run the same command again to ask them", missing)
	}
	return nil
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// verifyStatusOptions are the flags of "certbank verify status".
type verifyStatusOptions struct {
	slug                      string
	check, requireCalibration bool
	database                  string // with open learner reports when set
}

func (a *app) newVerifyStatusCmd(open openBank) *cobra.Command {
	o := &verifyStatusOptions{}
	cmd := &cobra.Command{
		Use:   "status [--certification SLUG] [--check] [--require-calibration]",
		Short: "Show per certification what is verified, pending, disagreeing, unrated and miscalibrated, and each solver's agreement rate",
		Long: fmt.Sprintf(`Prints per certification the number of questions; how many are verified (at least
quality.min_agreeing_solvers solvers chose the stored answer and none disagrees);
pending (fewer agreeing solvers, none disagreeing); disagreeing (a solver chose
another answer and no override records a review); unrated (no calibration entry);
and miscalibrated (a rater's difficulty contradicts the label by two levels, or by
one for hard, or a rater called it recall while it is labelled above easy: what
certbank lint --strict fails on). Every disagreement and every miscalibration is
listed with its file:line.

Then each solver's agreement rate: the share of its answers that chose the stored
answer. A solver with at least %d answers whose rate is more than %d points below
the median of the solvers with at least %d answers is flagged: likely a bad solver
(or a badly run one), not bad questions.

Exits 0; with --check 3 when anything is pending or disagreeing; with
--require-calibration 3 when anything is unrated or miscalibrated.`, verify.RateMinAnswers, verify.RateGap, verify.RateMinAnswers),
		RunE: func(cmd *cobra.Command, _ []string) error { return a.runVerifyStatus(open, o) },
	}
	cmd.Flags().StringVar(&o.slug, "certification", "", "only this certification (default all)")
	cmd.Flags().BoolVar(&o.check, "check", false, "exit 3 when any question is pending or disagreeing")
	cmd.Flags().BoolVar(&o.requireCalibration, "require-calibration", false, "exit 3 when any question is unrated or miscalibrated")
	cmd.Flags().StringVar(&o.database, "database", "", "also list the questions with open learner reports in this store (sqlite:PATH or a postgres:// URL)")
	return cmd
}

func (a *app) runVerifyStatus(open openBank, o *verifyStatusOptions) error {
	b, err := open()
	if err != nil {
		return err
	}
	st, err := b.Status(o.slug)
	if err != nil {
		return verifyErr(err)
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "CERTIFICATION\tQUESTIONS\t≥%d AGREEING\tPENDING\tDISAGREEING\tUNRATED\tMISCALIBRATED\n", st.MinAgreeing)
	var sum verify.CertStatus
	for _, c := range st.Certifications {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\n", c.Slug, c.Questions, c.Verified, c.Pending, c.Disagreeing, c.Unrated, c.Miscalibrated)
		sum.Questions += c.Questions
		sum.Verified += c.Verified
		sum.Pending += c.Pending
		sum.Disagreeing += c.Disagreeing
		sum.Unrated += c.Unrated
		sum.Miscalibrated += c.Miscalibrated
	}
	if len(st.Certifications) > 1 {
		fmt.Fprintf(tw, "total\t%d\t%d\t%d\t%d\t%d\t%d\n", sum.Questions, sum.Verified, sum.Pending, sum.Disagreeing, sum.Unrated, sum.Miscalibrated)
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	if len(st.Solvers) > 0 {
		fmt.Fprintln(a.stdout)
		tw = tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "SOLVER\tANSWERS\tAGREE WITH KEY\tRATE\n")
		for _, s := range st.Solvers {
			note := ""
			if s.Suspect {
				note = "\tlikely a bad solver, not bad questions"
			}
			fmt.Fprintf(tw, "%s\t%d\t%d\t%.1f %%%s\n", s.Name, s.Answers, s.Agree, 100*s.Rate(), note)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if st.Judged > 0 {
			fmt.Fprintf(a.stdout, "median rate of the %d solver(s) with at least %d answers: %.1f %%; a solver more than %d points below it is flagged\n", st.Judged, verify.RateMinAnswers, 100*st.Median, verify.RateGap)
		} else {
			fmt.Fprintf(a.stdout, "no solver has %d answers yet, so no rate is judged\n", verify.RateMinAnswers)
		}
	}

	if len(st.Disagreeing) > 0 {
		fmt.Fprintf(a.stdout, "\nDisagreements: fix the question, or record a review with\n  certbank verify override --id ID --solver NAME --reason \"...\"\n")
		for _, d := range st.Disagreeing {
			var who []string
			for _, v := range d.Disagree {
				who = append(who, fmt.Sprintf("%q answered %s", v.Solver, v.Answer))
			}
			fmt.Fprintf(a.stdout, "%s:%d: %s: stored %s; %s\n", d.Source.File, d.Source.Line, d.ID, d.Answer, strings.Join(who, "; "))
		}
	}
	if len(st.Miscalibrated) > 0 {
		fmt.Fprintf(a.stdout, "\nMiscalibrated: relabel the question, or rewrite it to its label's level\n")
		for _, m := range st.Miscalibrated {
			var who []string
			for _, c := range m.Ratings {
				who = append(who, fmt.Sprintf("%q rated it %s %s", c.Rater, c.Difficulty, c.Level))
			}
			fmt.Fprintf(a.stdout, "%s:%d: %s: labelled %s; %s\n", m.Source.File, m.Source.Line, m.ID, m.Label, strings.Join(who, "; "))
		}
	}

	if o.database != "" {
		if err := a.printOpenReports(b, o); err != nil {
			return err
		}
	}

	var failed []string
	if o.check && sum.Pending+sum.Disagreeing > 0 {
		failed = append(failed, fmt.Sprintf("%d question(s) pending and %d disagreeing; not every question is verified", sum.Pending, sum.Disagreeing))
	}
	if o.requireCalibration && sum.Unrated+sum.Miscalibrated > 0 {
		failed = append(failed, fmt.Sprintf("%d question(s) unrated and %d miscalibrated; rate them with certbank verify rate-sheet and rate-import, and relabel or rewrite the miscalibrated ones", sum.Unrated, sum.Miscalibrated))
	}
	if len(failed) > 0 {
		return checkFailed{strings.Join(failed, "; and ")}
	}
	return nil
}

// printOpenReports lists the questions (of o.slug, or all) that learners
// reported and no operator has resolved yet, with their file:line.
func (a *app) printOpenReports(b *verify.Bank, o *verifyStatusOptions) error {
	c := b.Content()
	where := map[string]string{}
	for i, q := range c.Questions {
		if (o.slug == "" || q.Certification == o.slug) && i < len(c.Sources) {
			where[q.ID] = fmt.Sprintf("%s:%d", c.Sources[i].File, c.Sources[i].Line)
		}
	}
	var open []store.Report
	err := withStore(context.Background(), o.database, func(st store.Store) error {
		rs, err := st.Reports(context.Background(), store.ReportFilter{Open: true})
		for _, r := range rs {
			if _, ok := where[r.QuestionID]; ok {
				open = append(open, r)
			}
		}
		return err
	})
	if err != nil {
		return err
	}
	if len(open) == 0 {
		fmt.Fprintf(a.stdout, "\nno open learner reports\n")
		return nil
	}
	fmt.Fprintf(a.stdout, "\nOpen learner reports: review the question, then certbank reports resolve ID --note \"...\"\n")
	for _, r := range open {
		fmt.Fprintf(a.stdout, "%s: %s: %s %s: %s\n", where[r.QuestionID], r.QuestionID, r.ID, r.Reason, truncate(oneLine(r.Text), 80))
	}
	return nil
}

// verifyRateSheetOptions are the flags of "certbank verify rate-sheet".
type verifyRateSheetOptions struct {
	slug, dir, unratedBy string
	all, force           bool
	batch                int
}

func (a *app) newVerifyRateSheetCmd(open openBank) *cobra.Command {
	o := &verifyRateSheetOptions{}
	cmd := &cobra.Command{
		Use:   "rate-sheet (--certification SLUG | --all) --dir DIR [--unrated-by RATER] [--batch 50]",
		Short: "Export calibration sheets: each question with its key and the exam, without its difficulty label",
		Long: `Writes the questions of a certification as rating sheets for a blind rater who
knows the exam: DIR/<slug>-01.txt, ... of at most --batch (50) questions each. A
sheet names the exam (name and code), says what easy, medium and hard and recall,
apply and analyse mean, and shows each question with its id, options and key, but
not its difficulty label, objective, tests line, explanation, verification or
calibration entries. At the end a RATINGS block has one "<id>: " line per question;
the rater completes each as "<id>: <easy|medium|hard> <recall|apply|analyse>".
Record the filled sheets with certbank verify rate-import.

--unrated-by RATER leaves out the questions RATER has rated. An existing file is not
overwritten without --force.`,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.runVerifyRateSheet(open, o) },
	}
	fl := cmd.Flags()
	fl.StringVar(&o.slug, "certification", "", "the certification slug")
	fl.BoolVar(&o.all, "all", false, "every certification")
	fl.StringVar(&o.dir, "dir", "", "write the sheets DIR/<slug>-NN.txt (required)")
	fl.IntVar(&o.batch, "batch", verify.DefaultBatch, "questions per sheet")
	fl.StringVar(&o.unratedBy, "unrated-by", "", "leave out the questions rater NAME has rated")
	fl.BoolVar(&o.force, "force", false, "overwrite existing sheet files")
	return cmd
}

func (a *app) runVerifyRateSheet(open openBank, o *verifyRateSheetOptions) error {
	switch {
	case o.all == (o.slug != ""):
		return usagef("give --certification SLUG or --all, with --dir DIR")
	case o.dir == "":
		return usagef("give --dir DIR: the rating sheets are written there as <slug>-01.txt, ...")
	case o.batch < 1:
		return usagef("--batch must be at least 1, not %d", o.batch)
	}
	b, err := open()
	if err != nil {
		return err
	}
	var batches []certBatches
	for _, slug := range slugsFor(b, o.slug) {
		s, err := b.RatingSheet(slug, o.unratedBy)
		if err != nil {
			return verifyErr(err)
		}
		cb := certBatches{slug: slug, questions: len(s.Questions), ext: verify.Text.Ext()}
		for _, p := range s.Split(o.batch) {
			var buf bytes.Buffer
			if err := p.Write(&buf); err != nil {
				return err
			}
			cb.parts = append(cb.parts, buf.Bytes())
		}
		batches = append(batches, cb)
	}
	none := "no questions to rate"
	if o.unratedBy != "" {
		none += fmt.Sprintf(" unrated by %q", o.unratedBy)
	}
	return a.writeBatches(o.dir, o.force, batches, none)
}

// verifyRateImportOptions are the flags and arguments of "certbank verify
// rate-import".
type verifyRateImportOptions struct {
	rater, date string
	files       []string
}

func (a *app) newVerifyRateImportCmd(open openBank) *cobra.Command {
	o := &verifyRateImportOptions{}
	cmd := &cobra.Command{
		Use:   "rate-import --rater NAME [--date YYYY-MM-DD] FILE...",
		Short: "Record filled rating sheets as one rater's calibration entries",
		Long: `Reads filled rating sheets (from certbank verify rate-sheet) and records each
"<id>: <easy|medium|hard> <recall|apply|analyse>" line of their RATINGS block as a
calibration entry {rater: NAME, difficulty, level, date} on its question, editing
the question files in place (a new calibration list goes after the question's
verification list, or at its end). A rater's earlier entry on a question is
replaced, so importing the same sheet twice changes nothing.

Every sheet is checked first: a question of the sheet without its RATINGS line, an
id repeated, not on the sheet or unknown to the bank, a question, option or key that
differs from the bank, and a missing or invalid rating refuse the whole import
(exit 3, one file:line message each, naming the question) and no file changes.

The ratings that contradict a question's label are listed; certbank lint --strict
fails on them until the question is relabelled or rewritten. NAME is published as
quality evidence: describe the rater honestly.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, files []string) error {
			o.files = files
			return a.runVerifyRateImport(open, o)
		},
	}
	cmd.Flags().StringVar(&o.rater, "rater", "", "who rated, honestly described (required)")
	cmd.Flags().StringVar(&o.date, "date", "", "date of the ratings, YYYY-MM-DD (default today)")
	return cmd
}

func (a *app) runVerifyRateImport(open openBank, o *verifyRateImportOptions) error {
	if o.rater == "" {
		return usagef("--rater NAME is required: who rated the sheet, honestly described")
	}
	b, err := open()
	if err != nil {
		return err
	}
	n, err := b.RateImport(o.rater, o.date, o.files...)
	if err != nil {
		return verifyErr(err)
	}
	fmt.Fprintf(a.stdout, "recorded %d ratings of %q: %d new, %d replaced, %d unchanged; %d file(s) written\n",
		n.Ratings, o.rater, n.Added, n.Replaced, n.Unchanged, len(n.Files))
	if len(n.Miscalibrated) > 0 {
		fmt.Fprintf(a.stdout, "%d rating(s) contradict the question's label; relabel or rewrite (certbank verify status lists them, certbank lint --strict fails on them): %s\n",
			len(n.Miscalibrated), strings.Join(n.Miscalibrated, ", "))
	}
	return nil
}

// verifyOverrideOptions are the flags of "certbank verify override".
type verifyOverrideOptions struct {
	id, solver, reason string
}

func (a *app) newVerifyOverrideCmd(open openBank) *cobra.Command {
	o := &verifyOverrideOptions{}
	cmd := &cobra.Command{
		Use:   "override --id ID --solver NAME --reason \"...\"",
		Short: "Record a reviewed decision that a solver's disagreement is resolved",
		Long: `Resolves a disagreement without changing the question: sets override: "<reason>"
on solver NAME's verification entry of question ID, in place. The quality policy
then no longer counts that entry as a disagreement (it does not count as agreeing
either). Say in the reason why the stored answer stands. When the question itself
was wrong, fix it instead.`,
		RunE: func(*cobra.Command, []string) error { return a.runVerifyOverride(open, o) },
	}
	cmd.Flags().StringVar(&o.id, "id", "", "the question id")
	cmd.Flags().StringVar(&o.solver, "solver", "", "the disagreeing solver's name, as recorded")
	cmd.Flags().StringVar(&o.reason, "reason", "", "why the stored answer stands")
	return cmd
}

func (a *app) runVerifyOverride(open openBank, o *verifyOverrideOptions) error {
	if o.id == "" || o.solver == "" || o.reason == "" {
		return usagef("--id, --solver and --reason are all required")
	}
	b, err := open()
	if err != nil {
		return err
	}
	if err := b.Override(o.id, o.solver, o.reason); err != nil {
		return verifyErr(err)
	}
	fmt.Fprintf(a.stdout, "recorded the override on %q's answer to %s\n", o.solver, o.id)
	return nil
}
