package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/generator"
	"github.com/certbank/certbank/items"
	"github.com/certbank/certbank/paywall/store"
	"github.com/certbank/certbank/verify"
	"github.com/spf13/cobra"
)

// reportsOptions are the flags and arguments of "certbank reports".
type reportsOptions struct {
	ID       string // show and resolve's REPORT argument
	Open     bool
	Question string
	Limit    int
	Note     string
	Now      func() time.Time
}

// newReportsCmd builds "certbank reports": the operators' queue of
// questions learners reported.
func (a *app) newReportsCmd() *cobra.Command {
	var dsn string
	cmd := &cobra.Command{
		Use:   "reports",
		Short: "Review learners' reports of questions: list, show, resolve",
		Long: `Learners report a question they believe wrong from the study hubs, with
POST /api/v1/reports or the MCP report_question tool. Reports are kept in the
service's database, without anything personal. Fix the question (or decide that it
stands) and resolve the report with a note.`,
	}
	cmd.PersistentFlags().StringVar(&dsn, "database", a.envDefault("CERTBANK_DATABASE", defaultDatabase), "sqlite:PATH or a postgres:// URL (env CERTBANK_DATABASE)")
	o := &reportsOptions{Now: time.Now}
	runWith := func(run func(context.Context, store.Store, io.Writer, *reportsOptions) error) func(*cobra.Command, []string) error {
		return func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				o.ID = args[0]
			}
			if c.Name() == "resolve" && strings.TrimSpace(o.Note) == "" {
				return usagef("--note is required: what was done about the report")
			}
			if o.Limit < 0 {
				return usagef("--limit must be 0 (all) or more")
			}
			return withStore(c.Context(), dsn, func(st store.Store) error { return run(c.Context(), st, a.stdout, o) })
		}
	}
	list := &cobra.Command{Use: "list", Short: "List reports, newest first", RunE: runWith(runReportsList)}
	list.Flags().BoolVar(&o.Open, "open", false, "only reports not yet resolved")
	list.Flags().StringVar(&o.Question, "question", "", "only reports of this question id")
	list.Flags().IntVar(&o.Limit, "limit", 0, "at most this many (0: all)")
	show := &cobra.Command{Use: "show REPORT", Short: "Show a report", Args: cobra.ExactArgs(1), RunE: runWith(runReportsShow)}
	resolve := &cobra.Command{Use: "resolve REPORT --note TEXT", Short: "Close a report with a note of what was done", Args: cobra.ExactArgs(1), RunE: runWith(runReportsResolve)}
	resolve.Flags().StringVar(&o.Note, "note", "", "what was done, e.g. \"key corrected to B in 5b0f8a52\" (required)")
	for _, sub := range []*cobra.Command{list, show, resolve} {
		sub.Args = wrapArgs(sub.Args)
		cmd.AddCommand(sub)
	}
	return cmd
}

func runReportsList(ctx context.Context, st store.Store, w io.Writer, o *reportsOptions) error {
	rs, err := st.Reports(ctx, store.ReportFilter{Open: o.Open, QuestionID: o.Question, Limit: o.Limit})
	if err != nil {
		return err
	}
	if len(rs) == 0 {
		fmt.Fprintln(w, "no reports")
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "REPORT\tCREATED\tQUESTION\tREASON\tSTATUS\tTEXT")
	for _, r := range rs {
		status := "open"
		if !r.Open() {
			status = "resolved"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.CreatedAt.Format(time.DateTime), r.QuestionID, r.Reason, status, truncate(oneLine(r.Text), 60))
	}
	return tw.Flush()
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func runReportsShow(ctx context.Context, st store.Store, w io.Writer, o *reportsOptions) error {
	r, err := st.ReportByID(ctx, o.ID)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "report:   %s\nquestion: %s\nreason:   %s\ncreated:  %s\n", r.ID, r.QuestionID, r.Reason, r.CreatedAt.Format(time.RFC3339))
	if r.Open() {
		fmt.Fprintln(w, "status:   open")
	} else {
		fmt.Fprintf(w, "status:   resolved %s: %s\n", r.ResolvedAt.Format(time.RFC3339), r.Resolution)
	}
	if r.Text != "" {
		fmt.Fprintf(w, "text:\n%s\n", r.Text)
	}
	return nil
}

func runReportsResolve(ctx context.Context, st store.Store, w io.Writer, o *reportsOptions) error {
	if err := st.ResolveReport(ctx, o.ID, strings.TrimSpace(o.Note), o.Now().UTC()); err != nil {
		return err
	}
	fmt.Fprintf(w, "resolved %s\n", o.ID)
	return nil
}

// itemsOptions are the flags of "certbank items".
type itemsOptions struct {
	content, dsn, slug string
	min                int
	flagged, json      bool
	since              string
	dryRun             bool   // apply: write nothing
	date               string // apply: the measurement's date
}

func (a *app) newItemsCmd() *cobra.Command {
	o := &itemsOptions{}
	cmd := &cobra.Command{
		Use:   "items [--certification SLUG] [--flagged] [--json]",
		Short: "Item statistics from learners' graded answers: p, option shares, discrimination, flags, proposed difficulty",
		Long: fmt.Sprintf(`Reads the anonymous graded answers the service recorded (hub practice, mock
exams, the MCP check_answer tool) and prints per question: responses, the share
correct (p), each option's share (and unanswered), the discrimination (the
point-biserial correlation of being right with the rest of the mock-exam
attempt's score) and the option the top third of mock-exam candidates chose most.

It flags, once a question has --min-responses answers (default %d): p below
%.2f or above %.2f, a negative discrimination, and a top third that prefers a
distractor to the key (the classic sign of a wrong key); and it proposes a
difficulty from p (easy from %.2f, hard below %.2f, medium between).`,
			items.MinResponses, items.PLow, items.PHigh, items.EasyFrom, items.HardBelow),
		RunE: func(c *cobra.Command, _ []string) error { return a.runItems(c.Context(), o) },
	}
	apply := &cobra.Command{
		Use:   "apply [--certification SLUG] [--min-responses N] [--dry-run]",
		Short: "Accept the proposed difficulties: relabel the questions and record the measurement in their YAML",
		Long: `For every question with at least --min-responses answers, sets its difficulty label to
the one its share correct proposes and records the measurement in the question file
(edited in place, like verify import):

    measured:
      responses: 112
      p: 0.31
      difficulty: hard
      date: 2026-12-01

The build then publishes these questions as calibrated (calibrated: true in the free
sample feed, calibrated_questions in catalog.json), and certbank lint checks the label
against the measurement instead of the raters' judgement. --dry-run prints what would
change and writes nothing.`,
		RunE: func(c *cobra.Command, _ []string) error { return a.runItemsApply(c.Context(), o) },
	}
	apply.Flags().BoolVar(&o.dryRun, "dry-run", false, "print the changes, write nothing")
	apply.Flags().StringVar(&o.date, "date", "", "date of the measurement, YYYY-MM-DD (default today)")
	cmd.AddCommand(apply)
	apply.Args = wrapArgs(apply.Args)
	f := cmd.PersistentFlags()
	f.StringVar(&o.content, "content", a.envDefault("CERTBANK_CONTENT", "content"), "content directory")
	f.StringVar(&o.dsn, "database", a.envDefault("CERTBANK_DATABASE", defaultDatabase), "sqlite:PATH or a postgres:// URL (env CERTBANK_DATABASE)")
	f.StringVar(&o.slug, "certification", "", "only this certification")
	f.IntVar(&o.min, "min-responses", items.MinResponses, "responses a question needs before it is flagged and a label proposed")
	f.BoolVar(&o.flagged, "flagged", false, "only questions with a flag or a proposal that differs from the label")
	f.BoolVar(&o.json, "json", false, "print JSON")
	f.StringVar(&o.since, "since", "", "only answers recorded on or after this date, YYYY-MM-DD")
	return cmd
}

type itemJSON struct {
	ID             string             `json:"id"`
	Certification  string             `json:"certification"`
	Label          string             `json:"label"`
	Key            string             `json:"key"`
	Responses      int                `json:"responses"`
	P              float64            `json:"p"`
	Shares         map[string]float64 `json:"shares"`
	Discrimination *float64           `json:"discrimination"`
	TopChoice      string             `json:"top_third_choice,omitempty"`
	Flags          []string           `json:"flags"`
	Proposed       string             `json:"proposed_difficulty,omitempty"`
	Source         string             `json:"source"`
}

// itemStats loads the content and the recorded answers and computes the
// statistics of the questions o selects, with each question's file:line.
func (a *app) itemStats(ctx context.Context, o *itemsOptions) ([]items.Stat, map[string]generator.Source, int, error) {
	if o.min < 1 {
		return nil, nil, 0, usagef("--min-responses must be at least 1")
	}
	var since time.Time
	if o.since != "" {
		t, err := time.Parse(time.DateOnly, o.since)
		if err != nil {
			return nil, nil, 0, usagef("--since %q must be a date like 2026-12-01", o.since)
		}
		since = t
	}
	if st, err := os.Stat(o.content); err != nil || !st.IsDir() {
		return nil, nil, 0, usagef("content directory %q not found; pass --content DIR", o.content)
	}
	c, err := generator.Load(os.DirFS(o.content), o.content)
	if err != nil {
		return nil, nil, 0, err
	}
	var qs []*certbank.Question
	where := map[string]generator.Source{}
	for i := range c.Questions {
		q := &c.Questions[i]
		if o.slug != "" && q.Certification != o.slug {
			continue
		}
		qs = append(qs, q)
		if len(c.Sources) > i {
			where[q.ID] = c.Sources[i]
		}
	}
	if o.slug != "" && len(qs) == 0 {
		return nil, nil, 0, usagef("no questions of certification %q in %s", o.slug, o.content)
	}
	var rs []items.Response
	err = withStore(ctx, o.dsn, func(st store.Store) error {
		got, err := st.Responses(ctx, since)
		for _, r := range got {
			rs = append(rs, items.Response{QuestionID: r.QuestionID, Chosen: r.Chosen, Attempt: r.Attempt, Score: r.Score})
		}
		return err
	})
	if err != nil {
		return nil, nil, 0, err
	}
	return items.Analyse(qs, rs, o.min), where, len(rs), nil
}

func (a *app) runItems(ctx context.Context, o *itemsOptions) error {
	stats, where, answers, err := a.itemStats(ctx, o)
	if err != nil {
		return err
	}
	if o.flagged {
		var keep []items.Stat
		for _, s := range stats {
			if len(s.Flags) > 0 || (s.Proposed != "" && s.Proposed != s.Label) {
				keep = append(keep, s)
			}
		}
		stats = keep
	}
	if o.json {
		out := []itemJSON{}
		for _, s := range stats {
			j := itemJSON{ID: s.ID, Certification: s.Certification, Label: string(s.Label), Key: string(s.Key), Responses: s.Responses,
				P: round3(s.P), Shares: map[string]float64{}, TopChoice: string(s.TopChoice), Flags: s.Flags, Proposed: string(s.Proposed)}
			for i, l := range []string{"A", "B", "C", "D", "unanswered"} {
				j.Shares[l] = round3(s.Shares[i])
			}
			if s.HasDiscrimination {
				d := round3(s.Discrimination)
				j.Discrimination = &d
			}
			if j.Flags == nil {
				j.Flags = []string{}
			}
			if src, ok := where[s.ID]; ok {
				j.Source = fmt.Sprintf("%s:%d", src.File, src.Line)
			}
			out = append(out, j)
		}
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	fmt.Fprintf(a.stdout, "%d answers recorded; %d questions answered\n", answers, len(stats))
	if len(stats) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "QUESTION\tCERTIFICATION\tLABEL\tKEY\tN\tP\tA/B/C/D/-\tDISC\tTOP\tPROPOSED\tFLAGS")
	for _, s := range stats {
		disc := "-"
		if s.HasDiscrimination {
			disc = fmt.Sprintf("%.2f", s.Discrimination)
		}
		shares := fmt.Sprintf("%.0f/%.0f/%.0f/%.0f/%.0f", 100*s.Shares[0], 100*s.Shares[1], 100*s.Shares[2], 100*s.Shares[3], 100*s.Shares[4])
		top := string(s.TopChoice)
		if top == "" {
			top = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%.2f\t%s\t%s\t%s\t%s\t%s\n", s.ID, s.Certification, s.Label, s.Key, s.Responses, s.P, shares, disc, top,
			orDash(string(s.Proposed)), orDash(strings.Join(s.Flags, ",")))
	}
	return tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func round3(f float64) float64 { return math.Round(f*1000) / 1000 }

// runItemsApply relabels the questions with enough answers to the
// difficulty their share correct proposes and records the measurement.
func (a *app) runItemsApply(ctx context.Context, o *itemsOptions) error {
	date := o.date
	if date == "" {
		date = time.Now().UTC().Format(time.DateOnly)
	} else if _, err := time.Parse(time.DateOnly, date); err != nil {
		return usagef("--date %q must be a date like 2026-12-01", date)
	}
	stats, where, _, err := a.itemStats(ctx, o)
	if err != nil {
		return err
	}
	var ms []verify.Measured
	relabel := 0
	for _, s := range stats {
		if s.Proposed == "" {
			continue
		}
		ms = append(ms, verify.Measured{ID: s.ID, M: certbank.Measurement{Responses: s.Responses, P: round3(s.P), Difficulty: s.Proposed, Date: date}})
		if s.Proposed != s.Label {
			relabel++
			fmt.Fprintf(a.stdout, "%s:%d: %s: %s -> %s (p %.2f over %d answers)\n", where[s.ID].File, where[s.ID].Line, s.ID, s.Label, s.Proposed, s.P, s.Responses)
		}
	}
	if len(ms) == 0 {
		fmt.Fprintf(a.stdout, "no question has %d answers yet; nothing to apply\n", o.min)
		return nil
	}
	if o.dryRun {
		fmt.Fprintf(a.stdout, "would record %d measured difficulties (%d relabelled); nothing written (--dry-run)\n", len(ms), relabel)
		return nil
	}
	b, err := verify.Open(o.content)
	if err != nil {
		return verifyErr(err)
	}
	files, err := b.Measure(ms)
	if err != nil {
		return verifyErr(err)
	}
	fmt.Fprintf(a.stdout, "recorded %d measured difficulties (%d relabelled) in %d file(s)\n", len(ms), relabel, len(files))
	return nil
}
