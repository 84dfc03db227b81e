package main

import (
	"fmt"
	"os"
	"time"

	"github.com/certbank/certbank/generator"
	"github.com/spf13/cobra"
)

type buildOptions struct {
	content string
	out     string
	bank    string
	date    string
	payTo   string
}

func (a *app) newBuildCmd() *cobra.Command {
	o := buildOptions{}
	cmd := &cobra.Command{
		Use:   "build",
		Short: "Compile content/ into the static site (public/) and the private bank bundle",
		Long: `Loads and validates every YAML file under --content (all problems are reported
at once as file:line, exit code 3), publishes the questions that pass the quality
policy, and writes the static site to --out through a staging directory (a failed
build leaves the old site untouched) and the bank bundle, with every answer, to
--bank outside the site.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			start := time.Now()
			out, err := loadAndBuild(o.content, o.date, o.payTo)
			if err != nil {
				return err
			}
			if err := out.Write(o.out, o.bank); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "built %d files and %d published questions in %s → %s (bank bundle: %s)\n",
				len(out.Files), len(out.Bank.Questions), time.Since(start).Round(time.Millisecond), o.out, o.bank)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.content, "content", a.envDefault("CERTBANK_CONTENT", "content"), "content directory (env CERTBANK_CONTENT)")
	f.StringVar(&o.out, "out", a.envDefault("CERTBANK_PUBLIC", "public"), "output directory of the static site (env CERTBANK_PUBLIC)")
	f.StringVar(&o.bank, "bank", a.envDefault("CERTBANK_BANK", ".certbank/bank.json"), "path of the private bank bundle, outside --out (env CERTBANK_BANK)")
	f.StringVar(&o.payTo, "pay-to", a.envDefault("CERTBANK_PAY_TO", ""), "the address you are paid to, overriding site.yaml's payment.pay_to (env CERTBANK_PAY_TO)")
	f.StringVar(&o.date, "date", a.envDefault("CERTBANK_BUILD_DATE", ""), "build date YYYY-MM-DD (default: the newest date in the content)")
	return cmd
}

// loadAndBuild loads the content directory and renders the site in memory.
// The payee is decided by buildPayee.
func loadAndBuild(dir, date, payTo string) (*generator.Output, error) {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, usagef("content directory %q not found; pass --content DIR", dir)
	}
	c, err := generator.Load(os.DirFS(dir), dir)
	if err != nil {
		return nil, err
	}
	if c.Site.Payment.PayTo, err = buildPayee(payTo, &c.Site); err != nil {
		return nil, err
	}
	return generator.Build(c, generator.Options{Date: date})
}
