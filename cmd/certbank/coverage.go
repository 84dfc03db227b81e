package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/coverage"
	"github.com/certbank/certbank/generator"
	"github.com/spf13/cobra"
)

// coverageOptions are the flags and arguments of "certbank coverage".
type coverageOptions struct {
	content string
	slugs   []string
	target  int // 0: each certification's target_questions
	json    bool
	check   bool
}

func (a *app) newCoverageCmd() *cobra.Command {
	o := &coverageOptions{}
	cmd := &cobra.Command{
		Use:   "coverage [SLUG…] [--target N] [--check] [--json]",
		Short: "Show each certification's questions against its plan: domains, difficulties, objectives, keys",
		Long: `Prints, per certification, how many questions it has and how many its plan asks
for: per domain (the blueprint weights, largest remainder), per difficulty (30/50/20 %),
per objective (every objective at least floor(target / objectives / 2)), the answer-letter
balance, and the objectives with no question yet.

The target is the certification's target_questions (site.yaml, default 500, overridable
in certification.yaml); --target N checks a milestone on the way with the same spread and
mix scaled to N questions. --check exits 3 when a certification is short or off-mix.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.slugs = args
			return a.runCoverage(o)
		},
	}
	cmd.Flags().StringVar(&o.content, "content", a.envDefault("CERTBANK_CONTENT", "content"), "content directory (env CERTBANK_CONTENT)")
	cmd.Flags().IntVar(&o.target, "target", 0, "check a milestone of N questions instead of each certification's target")
	cmd.Flags().BoolVar(&o.json, "json", false, "print the reports as JSON")
	cmd.Flags().BoolVar(&o.check, "check", false, "exit 3 when a certification is short or off-mix")
	return cmd
}

// loadFor loads the content and returns the certifications named by slugs
// (all when empty) with their questions.
func loadFor(content string, slugs []string) (*generator.Content, []*certbank.Certification, map[string][]*certbank.Question, error) {
	if st, err := os.Stat(content); err != nil || !st.IsDir() {
		return nil, nil, nil, usagef("content directory %q not found; pass --content DIR", content)
	}
	c, err := generator.Load(os.DirFS(content), content)
	if err != nil {
		return nil, nil, nil, err
	}
	qs := map[string][]*certbank.Question{}
	for i := range c.Questions {
		q := &c.Questions[i]
		qs[q.Certification] = append(qs[q.Certification], q)
	}
	var certs []*certbank.Certification
	if len(slugs) == 0 {
		for i := range c.Certifications {
			certs = append(certs, &c.Certifications[i])
		}
	}
	for _, s := range slugs {
		cert := c.Certification(s)
		if cert == nil {
			return nil, nil, nil, usagef("no certification %q in %s; use one of: %s", s, content, strings.Join(certbank.Slugs, ", "))
		}
		certs = append(certs, cert)
	}
	return c, certs, qs, nil
}

func (a *app) runCoverage(o *coverageOptions) error {
	if o.target < 0 {
		return usagef("--target must be a positive number of questions, not %d", o.target)
	}
	_, certs, qs, err := loadFor(o.content, o.slugs)
	if err != nil {
		return err
	}
	var reports []*coverage.Report
	failing := 0
	for _, cert := range certs {
		target := o.target
		if target == 0 {
			target = cert.TargetQuestions
		}
		r := coverage.Measure(cert, qs[cert.Slug], target)
		reports = append(reports, r)
		if !r.OK() {
			failing++
		}
	}
	if o.json {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(reports); err != nil {
			return err
		}
	} else {
		for _, r := range reports {
			writeReport(a.stdout, r)
		}
		fmt.Fprintf(a.stdout, "%d of %d certification(s) meet their plan\n", len(reports)-failing, len(reports))
	}
	if o.check && failing > 0 {
		return checkFailed{fmt.Sprintf("%d certification(s) short or off-mix; see the tables above (certbank plan SLUG -n N lists what to write next)", failing)}
	}
	return nil
}

// writeReport prints one certification's shortfall table.
func writeReport(w io.Writer, r *coverage.Report) {
	verdict := "meets the plan"
	if !r.OK() {
		verdict = fmt.Sprintf("%d problem(s)", len(r.Problems))
	}
	fmt.Fprintf(w, "%s: %d/%d questions, %s\n", r.Slug, r.Have, r.Target, verdict)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(kind, name string, have, want int, mark string) {
		fmt.Fprintf(tw, "  %s\t%s\t%d/%d\t%s\n", kind, name, have, want, mark)
	}
	short := func(have, want int) string {
		if have < want {
			return fmt.Sprintf("short %d", want-have)
		}
		return ""
	}
	for _, d := range r.Domains {
		row("domain", d.Name, d.Have, d.Want, short(d.Have, d.Want))
	}
	for _, d := range r.Difficulties {
		row("difficulty", d.Name, d.Have, d.Want, short(d.Have, d.Want))
	}
	for _, l := range r.Letters {
		row("key", l.Name, l.Have, l.Want, "")
	}
	for _, ob := range r.Objectives {
		row("objective", ob.Code+" "+truncate(ob.Name, 60), ob.Have, ob.Min, short(ob.Have, ob.Min))
	}
	tw.Flush()
	if len(r.Empty) > 0 {
		fmt.Fprintf(w, "  objectives with no question yet: %s\n", strings.Join(r.Empty, ", "))
	}
	for _, p := range r.Problems {
		fmt.Fprintf(w, "  ! %s\n", p)
	}
	fmt.Fprintln(w)
}

func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// planOptions are the flags and arguments of "certbank plan".
type planOptions struct {
	content string
	slug    string
	n       int
	target  int
	json    bool
}

func (a *app) newPlanCmd() *cobra.Command {
	o := &planOptions{}
	cmd := &cobra.Command{
		Use:   "plan SLUG -n N [--target N] [--json]",
		Short: "List the next N question slots (objective × difficulty) that most reduce a certification's shortfall",
		Long: `Prints the next N questions to write for a certification: each slot is an objective
of the exam guide at a difficulty, chosen greedily to fill the domain furthest below its
blueprint share, then the objective with the fewest questions, at the difficulty furthest
below the 30/50/20 mix. Under each objective it lists what the bank already tests there
(the questions' tests lines), so that a writer tests something new. Hand each writer its
slots and that list (docs/authoring.md, "From plan to published batch").`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.slug = args[0]
			return a.runPlan(o)
		},
	}
	cmd.Flags().StringVar(&o.content, "content", a.envDefault("CERTBANK_CONTENT", "content"), "content directory (env CERTBANK_CONTENT)")
	cmd.Flags().IntVarP(&o.n, "number", "n", 10, "how many slots")
	cmd.Flags().IntVar(&o.target, "target", 0, "plan toward a milestone of N questions instead of the certification's target")
	cmd.Flags().BoolVar(&o.json, "json", false, "print the slots as JSON")
	return cmd
}

func (a *app) runPlan(o *planOptions) error {
	if o.n < 1 || o.n > 1000 {
		return usagef("-n must be between 1 and 1000, not %d", o.n)
	}
	if o.target < 0 {
		return usagef("--target must be a positive number of questions, not %d", o.target)
	}
	_, certs, qs, err := loadFor(o.content, []string{o.slug})
	if err != nil {
		return err
	}
	cert := certs[0]
	target := o.target
	if target == 0 {
		target = cert.TargetQuestions
	}
	slots := coverage.Plan(cert, qs[cert.Slug], target, o.n)
	if o.json {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(slots)
	}
	fmt.Fprintf(a.stdout, "%s: %d slot(s) toward %d questions (has %d)\n", cert.Slug, len(slots), target, len(qs[cert.Slug]))
	// One block per objective, in the order the plan first reaches it.
	var order []string
	group := map[string][]coverage.Slot{}
	for _, s := range slots {
		if _, ok := group[s.Objective]; !ok {
			order = append(order, s.Objective)
		}
		group[s.Objective] = append(group[s.Objective], s)
	}
	for _, code := range order {
		g := group[code]
		count := map[certbank.Difficulty]int{}
		for _, s := range g {
			count[s.Difficulty]++
		}
		var mix []string
		for _, d := range certbank.Difficulties {
			if count[d] > 0 {
				mix = append(mix, fmt.Sprintf("%d %s", count[d], d))
			}
		}
		fmt.Fprintf(a.stdout, "\n%s %s\n  domain: %s\n  write: %s\n", code, g[0].Name, g[0].Domain, strings.Join(mix, ", "))
		if len(g[0].Covered) == 0 {
			fmt.Fprintln(a.stdout, "  already tested: nothing yet")
			continue
		}
		fmt.Fprintln(a.stdout, "  already tested (test something else):")
		for _, t := range g[0].Covered {
			fmt.Fprintf(a.stdout, "    - %s\n", t)
		}
	}
	return nil
}
