package main

import (
	"fmt"
	"os"

	"github.com/certbank/certbank/generator"
	"github.com/spf13/cobra"
)

// lintOptions are the flags of "certbank lint".
type lintOptions struct {
	content string
	strict  bool
}

func (a *app) newLintCmd() *cobra.Command {
	o := &lintOptions{}
	cmd := &cobra.Command{
		Use:   "lint",
		Short: "Report item-writing flaws in the question bank",
		Long: `Checks every question for item-writing flaws (see docs/authoring.md): the key as the
longest option too often, "all/none of the above", negative stems without emphasis,
duplicate options, near-duplicate questions across the bank, answer-letter imbalance,
explanations that skip a distractor, vendor names in neutral certifications, cues,
superseded references, calibration contradicted by a blind rater, and stem and option
lengths. Flaws are warnings; with --strict they fail the run (exit 3).`,
		RunE: func(*cobra.Command, []string) error { return a.runLint(o) },
	}
	cmd.Flags().StringVar(&o.content, "content", a.envDefault("CERTBANK_CONTENT", "content"), "content directory")
	cmd.Flags().BoolVar(&o.strict, "strict", false, "fail (exit 3) on any finding")
	return cmd
}

func (a *app) runLint(o *lintOptions) error {
	if st, err := os.Stat(o.content); err != nil || !st.IsDir() {
		return usagef("content directory %q not found; pass --content DIR", o.content)
	}
	c, err := generator.Load(os.DirFS(o.content), o.content)
	if err != nil {
		return err
	}
	findings := generator.Lint(c)
	for _, f := range findings {
		fmt.Fprintln(a.stdout, f.String())
	}
	fmt.Fprintf(a.stdout, "%d questions in %d certifications, %d finding(s)\n", len(c.Questions), len(c.Certifications), len(findings))
	if o.strict && len(findings) > 0 {
		return checkFailed{fmt.Sprintf("%d item-writing finding(s); --strict fails on any", len(findings))}
	}
	return nil
}
