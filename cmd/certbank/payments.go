package main

import (
	"context"
	"encoding/csv"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/paywall/store"
	"github.com/spf13/cobra"
)

// newPaymentsCmd builds "certbank payments": the operator's view of the
// pay-per-request ledger.
func (a *app) newPaymentsCmd() *cobra.Command {
	var dsn, status, since string
	var limit int
	cmd := &cobra.Command{Use: "payments", Short: "Show the payments ledger: list, show, export"}
	cmd.PersistentFlags().StringVar(&dsn, "database", a.envDefault("CERTBANK_DATABASE", defaultDatabase), "sqlite:PATH or a postgres:// URL (env CERTBANK_DATABASE)")
	filter := func() (store.PaymentFilter, error) {
		st, err := store.ParseStatus(status)
		f := store.PaymentFilter{Status: st, Limit: limit}
		if err != nil {
			return f, usagef("--status %q must be reserved, pending, settled or failed", status)
		}
		if since != "" {
			t, err := time.Parse(time.DateOnly, since)
			if err != nil {
				return f, usagef("--since %q must be a date like 2026-11-01", since)
			}
			f.Since = t
		}
		return f, nil
	}
	payments := func(ctx context.Context) (ps []store.Payment, err error) {
		f, err := filter()
		if err != nil {
			return nil, err
		}
		err = withStore(ctx, dsn, func(st store.Store) (err error) {
			ps, err = st.Payments(ctx, f)
			return err
		})
		return ps, err
	}
	list := &cobra.Command{Use: "list", Short: "List payments, newest first", RunE: func(c *cobra.Command, _ []string) error {
		ps, err := payments(c.Context())
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "TIME\tSTATUS\tUSDC\tPAYER\tNONCE\tTRANSACTION")
		var total certbank.USDC
		for _, p := range ps {
			if p.Status == store.Settled {
				total += certbank.USDC(p.Amount)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s…\t%s\n", p.CreatedAt.UTC().Format(time.RFC3339), p.Status, certbank.USDC(p.Amount), p.Payer, p.Nonce[:min(len(p.Nonce), 12)], p.Transaction)
		}
		tw.Flush()
		fmt.Fprintf(a.stdout, "%d payments, %s USDC settled\n", len(ps), total)
		return nil
	}}
	show := &cobra.Command{Use: "show PAYER NONCE", Short: "Show one payment", Args: cobra.ExactArgs(2), RunE: func(c *cobra.Command, args []string) error {
		var p store.Payment
		err := withStore(c.Context(), dsn, func(st store.Store) (err error) {
			p, err = st.PaymentByNonce(c.Context(), strings.ToLower(args[0]), strings.ToLower(args[1]))
			return err
		})
		if err != nil {
			return err
		}
		fmt.Fprintf(a.stdout, "payer:       %s\nnonce:       %s\namount:      %s USDC (%d atomic)\nresource:    %s\nnetwork:     %s\nstatus:      %s\ntransaction: %s\nreason:      %s\ncreated:     %s\nupdated:     %s\n",
			p.Payer, p.Nonce, certbank.USDC(p.Amount), p.Amount, p.Resource, p.Network, p.Status, p.Transaction, p.Reason,
			p.CreatedAt.UTC().Format(time.RFC3339), p.UpdatedAt.UTC().Format(time.RFC3339))
		return nil
	}}
	export := &cobra.Command{Use: "export", Short: "Export payments as CSV", RunE: func(c *cobra.Command, _ []string) error {
		ps, err := payments(c.Context())
		if err != nil {
			return err
		}
		w := csv.NewWriter(a.stdout)
		w.Write([]string{"created_at", "updated_at", "status", "payer", "nonce", "amount_atomic", "amount_usdc", "network", "resource", "transaction", "reason"})
		for _, p := range ps {
			w.Write([]string{p.CreatedAt.UTC().Format(time.RFC3339Nano), p.UpdatedAt.UTC().Format(time.RFC3339Nano), string(p.Status), p.Payer, p.Nonce,
				fmt.Sprint(p.Amount), certbank.USDC(p.Amount).String(), p.Network, p.Resource, p.Transaction, p.Reason})
		}
		w.Flush()
		return w.Error()
	}}
	for _, sub := range []*cobra.Command{list, export} {
		sub.Flags().StringVar(&status, "status", "", "only payments in this status: reserved, pending, settled, failed")
		sub.Flags().StringVar(&since, "since", "", "only payments created on or after this date (YYYY-MM-DD)")
		sub.Flags().IntVar(&limit, "limit", 0, "at most this many (0: all)")
	}
	for _, sub := range []*cobra.Command{list, show, export} {
		sub.Args = wrapArgs(sub.Args)
		cmd.AddCommand(sub)
	}
	return cmd
}
