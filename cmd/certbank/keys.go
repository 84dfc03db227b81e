package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/paywall"
	"github.com/certbank/certbank/paywall/store"
	"github.com/spf13/cobra"
)

// newKeysCmd builds "certbank keys": support work on API keys against either
// store.
func (a *app) newKeysCmd() *cobra.Command {
	var dsn string
	cmd := &cobra.Command{
		Use:   "keys",
		Short: "Manage API keys: list, show, create, set-tier, revoke, rotate",
	}
	cmd.PersistentFlags().StringVar(&dsn, "database", a.envDefault("CERTBANK_DATABASE", defaultDatabase), "sqlite:PATH or a postgres:// URL (env CERTBANK_DATABASE)")
	find := func(ctx context.Context, st store.Store, ref string) (store.Key, error) {
		if strings.HasPrefix(ref, paywall.KeyPrefix) && len(ref) > len(paywall.KeyPrefix)+8 {
			return st.KeyByHash(ctx, paywall.HashKey(ref))
		}
		k, err := st.KeyByID(ctx, ref)
		if certbank.ErrorCode(err) != certbank.NotFound {
			return k, err
		}
		keys, err := st.Keys(ctx)
		if err != nil {
			return store.Key{}, err
		}
		for _, k := range keys {
			if strings.EqualFold(k.Email, ref) && k.Active() {
				return k, nil
			}
		}
		return store.Key{}, usagef("no key %q: give a key id (key_…), the key itself, or the email of an active key", ref)
	}
	printKey := func(k store.Key) {
		until := "-"
		if !k.TierUntil.IsZero() {
			until = k.TierUntil.UTC().Format(time.DateOnly)
		}
		status := "active"
		if !k.Active() {
			status = "revoked " + k.RevokedAt.UTC().Format(time.DateOnly)
		}
		fmt.Fprintf(a.stdout, "id:       %s\nprefix:   %s…\nname:     %s\nemail:    %s\ntier:     %s (until %s)\ncreated:  %s\nstatus:   %s\n",
			k.ID, k.Prefix, k.Name, k.Email, k.Tier, until, k.CreatedAt.UTC().Format(time.RFC3339), status)
	}

	list := &cobra.Command{Use: "list", Short: "List keys, newest first", RunE: func(c *cobra.Command, _ []string) error {
		return withStore(c.Context(), dsn, func(st store.Store) error {
			keys, err := st.Keys(c.Context())
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tPREFIX\tEMAIL\tTIER\tUNTIL\tCREATED\tSTATUS")
			for _, k := range keys {
				until, status := "-", "active"
				if !k.TierUntil.IsZero() {
					until = k.TierUntil.UTC().Format(time.DateOnly)
				}
				if !k.Active() {
					status = "revoked"
				}
				fmt.Fprintf(tw, "%s\t%s…\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.Prefix, k.Email, k.Tier, until, k.CreatedAt.UTC().Format(time.DateOnly), status)
			}
			return tw.Flush()
		})
	}}
	show := &cobra.Command{Use: "show KEY", Short: "Show a key and its usage this month", Args: cobra.ExactArgs(1), RunE: func(c *cobra.Command, args []string) error {
		return withStore(c.Context(), dsn, func(st store.Store) error {
			k, err := find(c.Context(), st, args[0])
			if err != nil {
				return err
			}
			printKey(k)
			month := time.Now().UTC().Format("2006-01")
			req, qs, err := st.MonthlyUsage(c.Context(), k.ID, month)
			if err != nil {
				return err
			}
			var seen int
			err = st.UpdateUsage(c.Context(), func(tx store.UsageTx) error {
				us, err := tx.Load(c.Context(), []string{k.ID}, month)
				if u := us[k.ID]; u != nil {
					seen = u.SeenCount
				}
				return err
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "usage:    %d requests and %d questions in %s; %d unique questions served\n", req, qs, month, seen)
			return nil
		})
	}}
	var name, email, tier, until string
	create := &cobra.Command{Use: "create", Short: "Create a key (prints it once)", RunE: func(c *cobra.Command, _ []string) error {
		if email == "" {
			return usagef("--email is required")
		}
		u, err := parseUntil(until)
		if err != nil {
			return err
		}
		return withStore(c.Context(), dsn, func(st store.Store) error {
			key, hash, prefix := paywall.NewAPIKey()
			k := store.Key{ID: paywall.NewKeyID(), Hash: hash, Prefix: prefix, Name: name, Email: strings.ToLower(email), Tier: tier, TierUntil: u, CreatedAt: time.Now().UTC()}
			if err := st.CreateKey(c.Context(), k); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "%s\n(key id %s; shown once, store it now)\n", key, k.ID)
			return nil
		})
	}}
	create.Flags().StringVar(&name, "name", "", "holder's name")
	create.Flags().StringVar(&email, "email", "", "holder's email (one active key per email)")
	create.Flags().StringVar(&tier, "tier", certbank.TierFree, "tier")
	create.Flags().StringVar(&until, "until", "", "subscription end YYYY-MM-DD (for paid tiers)")
	setTier := &cobra.Command{Use: "set-tier KEY TIER", Short: "Set a key's tier, with --until for subscriptions", Args: cobra.ExactArgs(2), RunE: func(c *cobra.Command, args []string) error {
		u, err := parseUntil(until)
		if err != nil {
			return err
		}
		if args[1] != certbank.TierFree && u.IsZero() {
			return usagef("--until DATE is required for the %s tier: subscriptions end", args[1])
		}
		return withStore(c.Context(), dsn, func(st store.Store) error {
			k, err := find(c.Context(), st, args[0])
			if err != nil {
				return err
			}
			if err := st.SetTier(c.Context(), k.ID, args[1], u); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "%s is now %s", k.ID, args[1])
			if !u.IsZero() {
				fmt.Fprintf(a.stdout, " until %s (then Free)", u.Format(time.DateOnly))
			}
			fmt.Fprintln(a.stdout)
			return nil
		})
	}}
	setTier.Flags().StringVar(&until, "until", "", "subscription end YYYY-MM-DD (UTC midnight); after it the key is served as Free")
	revoke := &cobra.Command{Use: "revoke KEY", Short: "Revoke a key", Args: cobra.ExactArgs(1), RunE: func(c *cobra.Command, args []string) error {
		return withStore(c.Context(), dsn, func(st store.Store) error {
			k, err := find(c.Context(), st, args[0])
			if err != nil {
				return err
			}
			if err := st.RevokeKey(c.Context(), k.ID, time.Now().UTC()); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "revoked %s (%s)\n", k.ID, k.Email)
			return nil
		})
	}}
	rotate := &cobra.Command{Use: "rotate KEY", Short: "Replace a key with a new one, keeping its tier and usage", Args: cobra.ExactArgs(1), RunE: func(c *cobra.Command, args []string) error {
		return withStore(c.Context(), dsn, func(st store.Store) error {
			k, err := find(c.Context(), st, args[0])
			if err != nil {
				return err
			}
			key, hash, prefix := paywall.NewAPIKey()
			if err := st.RotateKey(c.Context(), k.ID, hash, prefix); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "%s\n(new key for %s; the old one no longer works; shown once)\n", key, k.ID)
			return nil
		})
	}}
	for _, sub := range []*cobra.Command{list, show, create, setTier, revoke, rotate} {
		sub.Args = wrapArgs(sub.Args)
		cmd.AddCommand(sub)
	}
	return cmd
}

func parseUntil(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return time.Time{}, usagef("--until %q must be a date like 2027-01-31", s)
	}
	return t.UTC(), nil
}

func (a *app) newMigrateCmd() *cobra.Command {
	var dsn string
	cmd := &cobra.Command{Use: "migrate", Short: "Apply the database schema migrations (serve also applies them at start)", RunE: func(c *cobra.Command, _ []string) error {
		st, name, err := openStore(c.Context(), dsn)
		if err != nil {
			return err
		}
		defer st.Close()
		fmt.Fprintf(a.stdout, "%s: schema up to date\n", name)
		return nil
	}}
	cmd.Flags().StringVar(&dsn, "database", a.envDefault("CERTBANK_DATABASE", defaultDatabase), "sqlite:PATH or a postgres:// URL")
	return cmd
}
