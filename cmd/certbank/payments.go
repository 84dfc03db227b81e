package main

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/paywall/store"
	"github.com/spf13/cobra"
)

// paymentsOptions are the flags and arguments of "certbank payments …".
type paymentsOptions struct {
	Status, Since string
	Limit         int
	Payer, Nonce  string // show's arguments
}

// filter returns the ledger selection of the options.
func (o *paymentsOptions) filter() (store.PaymentFilter, error) {
	st, err := store.ParseStatus(o.Status)
	f := store.PaymentFilter{Status: st, Limit: o.Limit}
	if err != nil {
		return f, usagef("--status %q must be reserved, pending, settled or failed", o.Status)
	}
	if o.Since != "" {
		t, err := time.Parse(time.DateOnly, o.Since)
		if err != nil {
			return f, usagef("--since %q must be a date like 2026-11-01", o.Since)
		}
		f.Since = t
	}
	return f, nil
}

// newPaymentsCmd builds "certbank payments": the operator's view of the
// pay-per-request ledger. Each subcommand reads its options and runs a run
// function over the store.
func (a *app) newPaymentsCmd() *cobra.Command {
	var dsn string
	o := &paymentsOptions{}
	cmd := &cobra.Command{Use: "payments", Short: "Show the payments ledger: list, show, export"}
	cmd.PersistentFlags().StringVar(&dsn, "database", a.envDefault("CERTBANK_DATABASE", defaultDatabase), "sqlite:PATH or a postgres:// URL (env CERTBANK_DATABASE)")
	runWith := func(run func(context.Context, store.Store, io.Writer, *paymentsOptions) error) func(*cobra.Command, []string) error {
		return func(c *cobra.Command, args []string) error {
			if len(args) == 2 {
				o.Payer, o.Nonce = args[0], args[1]
			}
			if _, err := o.filter(); err != nil {
				return err
			}
			return withStore(c.Context(), dsn, func(st store.Store) error { return run(c.Context(), st, a.stdout, o) })
		}
	}
	list := &cobra.Command{Use: "list", Short: "List payments, newest first", RunE: runWith(runPaymentsList)}
	show := &cobra.Command{Use: "show PAYER NONCE", Short: "Show one payment", Args: cobra.ExactArgs(2), RunE: runWith(runPaymentsShow)}
	export := &cobra.Command{Use: "export", Short: "Export payments as CSV", RunE: runWith(runPaymentsExport)}
	for _, sub := range []*cobra.Command{list, export} {
		sub.Flags().StringVar(&o.Status, "status", "", "only payments in this status: reserved, pending, settled or failed")
		sub.Flags().StringVar(&o.Since, "since", "", "only payments created on or after this date (YYYY-MM-DD)")
		sub.Flags().IntVar(&o.Limit, "limit", 0, "at most this many (0: all)")
	}
	for _, sub := range []*cobra.Command{list, show, export} {
		sub.Args = wrapArgs(sub.Args)
		cmd.AddCommand(sub)
	}
	return cmd
}

// runPaymentsList lists the selected payments, newest first, with the
// settled total.
func runPaymentsList(ctx context.Context, st store.Store, w io.Writer, o *paymentsOptions) error {
	ps, err := o.payments(ctx, st)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tSTATUS\tUSDC\tPAYER\tNONCE\tTRANSACTION")
	var total certbank.USDC
	for _, p := range ps {
		if p.Status == store.Settled {
			total += certbank.USDC(p.Amount)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s…\t%s\n", p.CreatedAt.UTC().Format(time.RFC3339), p.Status, certbank.USDC(p.Amount), p.Payer, p.Nonce[:min(len(p.Nonce), 12)], p.Transaction)
	}
	tw.Flush()
	fmt.Fprintf(w, "%d payments, %s USDC settled\n", len(ps), total)
	return nil
}

// payments reads the payments the flags select.
func (o *paymentsOptions) payments(ctx context.Context, st store.Store) ([]store.Payment, error) {
	f, err := o.filter()
	if err != nil {
		return nil, err
	}
	return st.Payments(ctx, f)
}

// runPaymentsShow shows one payment.
func runPaymentsShow(ctx context.Context, st store.Store, w io.Writer, o *paymentsOptions) error {
	p, err := st.PaymentByNonce(ctx, strings.ToLower(o.Payer), strings.ToLower(o.Nonce))
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "payer:       %s\nnonce:       %s\namount:      %s USDC (%d atomic)\nresource:    %s\nnetwork:     %s\nstatus:      %s\ntransaction: %s\nreason:      %s\ncreated:     %s\nupdated:     %s\n",
		p.Payer, p.Nonce, certbank.USDC(p.Amount), p.Amount, p.Resource, p.Network, p.Status, p.Transaction, p.Reason,
		p.CreatedAt.UTC().Format(time.RFC3339), p.UpdatedAt.UTC().Format(time.RFC3339))
	return nil
}

// runPaymentsExport writes the selected payments as CSV.
func runPaymentsExport(ctx context.Context, st store.Store, w io.Writer, o *paymentsOptions) error {
	ps, err := o.payments(ctx, st)
	if err != nil {
		return err
	}
	cw := csv.NewWriter(w)
	cw.Write([]string{"created_at", "updated_at", "status", "payer", "nonce", "amount_atomic", "amount_usdc", "network", "resource", "transaction", "reason"})
	for _, p := range ps {
		cw.Write([]string{p.CreatedAt.UTC().Format(time.RFC3339Nano), p.UpdatedAt.UTC().Format(time.RFC3339Nano), string(p.Status), p.Payer, p.Nonce,
			strconv.FormatInt(p.Amount, 10), certbank.USDC(p.Amount).String(), p.Network, p.Resource, p.Transaction, p.Reason})
	}
	cw.Flush()
	return cw.Error()
}
