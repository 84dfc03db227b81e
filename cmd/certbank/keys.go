package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/paywall"
	"github.com/certbank/certbank/paywall/store"
	"github.com/spf13/cobra"
)

// keysOptions are the flags and arguments of "certbank keys …".
type keysOptions struct {
	Ref                      string // the KEY argument: a key id, the key itself, or an active key's email
	Name, Email, Tier, Until string
	NewTier                  string // set-tier's TIER argument
	Now                      func() time.Time
}

// newKeysCmd builds "certbank keys": support work on API keys against either
// store. Each subcommand reads its options and runs a run function over the
// store.
func (a *app) newKeysCmd() *cobra.Command {
	var dsn string
	cmd := &cobra.Command{
		Use:   "keys",
		Short: "Manage API keys: list, show, create, set-tier, revoke, rotate",
	}
	cmd.PersistentFlags().StringVar(&dsn, "database", a.envDefault("CERTBANK_DATABASE", defaultDatabase), "sqlite:PATH or a postgres:// URL (env CERTBANK_DATABASE)")
	o := &keysOptions{Tier: certbank.TierFree, Now: time.Now}
	runWith := func(run func(context.Context, store.Store, io.Writer, *keysOptions) error) func(*cobra.Command, []string) error {
		return func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				o.Ref = args[0]
			}
			if len(args) > 1 {
				o.NewTier = args[1]
			}
			if err := o.check(c.Name()); err != nil {
				return err
			}
			return withStore(c.Context(), dsn, func(st store.Store) error { return run(c.Context(), st, a.stdout, o) })
		}
	}
	list := &cobra.Command{Use: "list", Short: "List keys, newest first", RunE: runWith(runKeysList)}
	show := &cobra.Command{Use: "show KEY", Short: "Show a key and its usage this month", Args: cobra.ExactArgs(1), RunE: runWith(runKeysShow)}
	create := &cobra.Command{Use: "create", Short: "Create a key (prints it once)", RunE: runWith(runKeysCreate)}
	create.Flags().StringVar(&o.Name, "name", "", "holder's name")
	create.Flags().StringVar(&o.Email, "email", "", "holder's email (one active key per email)")
	create.Flags().StringVar(&o.Tier, "tier", certbank.TierFree, "tier")
	create.Flags().StringVar(&o.Until, "until", "", "subscription end YYYY-MM-DD (for paid tiers)")
	setTier := &cobra.Command{Use: "set-tier KEY TIER", Short: "Set a key's tier, with --until for subscriptions", Args: cobra.ExactArgs(2), RunE: runWith(runKeysSetTier)}
	setTier.Flags().StringVar(&o.Until, "until", "", "subscription end YYYY-MM-DD (UTC midnight); after it the key is served as Free")
	revoke := &cobra.Command{Use: "revoke KEY", Short: "Revoke a key", Args: cobra.ExactArgs(1), RunE: runWith(runKeysRevoke)}
	rotate := &cobra.Command{Use: "rotate KEY", Short: "Replace a key with a new one, keeping its tier and usage", Args: cobra.ExactArgs(1), RunE: runWith(runKeysRotate)}
	for _, sub := range []*cobra.Command{list, show, create, setTier, revoke, rotate} {
		sub.Args = wrapArgs(sub.Args)
		cmd.AddCommand(sub)
	}
	return cmd
}

// check refuses options that are wrong before any store is opened.
func (o *keysOptions) check(sub string) error {
	until, err := parseUntil(o.Until)
	if err != nil {
		return err
	}
	switch sub {
	case "create":
		if o.Email == "" {
			return usagef("--email is required")
		}
	case "set-tier":
		if o.NewTier != certbank.TierFree && until.IsZero() {
			return usagef("--until DATE is required for the %s tier: subscriptions end", o.NewTier)
		}
	}
	return nil
}

// findKey finds a key by id, by the key itself, or by an active key's email.
func findKey(ctx context.Context, st store.Store, ref string) (store.Key, error) {
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

func printKey(w io.Writer, k store.Key) {
	until := "-"
	if !k.TierUntil.IsZero() {
		until = k.TierUntil.UTC().Format(time.DateOnly)
	}
	status := "active"
	if !k.Active() {
		status = "revoked " + k.RevokedAt.UTC().Format(time.DateOnly)
	}
	fmt.Fprintf(w, "id:       %s\nprefix:   %s…\nname:     %s\nemail:    %s\ntier:     %s (until %s)\ncreated:  %s\nstatus:   %s\n",
		k.ID, k.Prefix, k.Name, k.Email, k.Tier, until, k.CreatedAt.UTC().Format(time.RFC3339), status)
}

// runKeysList lists every key, newest first.
func runKeysList(ctx context.Context, st store.Store, w io.Writer, _ *keysOptions) error {
	keys, err := st.Keys(ctx)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
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
}

// runKeysShow shows a key and its usage this month.
func runKeysShow(ctx context.Context, st store.Store, w io.Writer, o *keysOptions) error {
	k, err := findKey(ctx, st, o.Ref)
	if err != nil {
		return err
	}
	printKey(w, k)
	month := o.Now().UTC().Format("2006-01")
	req, qs, err := st.MonthlyUsage(ctx, k.ID, month)
	if err != nil {
		return err
	}
	var seen int
	err = st.UpdateUsage(ctx, func(tx store.UsageTx) error {
		us, err := tx.Load(ctx, []string{k.ID}, month)
		if u := us[k.ID]; u != nil {
			seen = u.SeenCount
		}
		return err
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "usage:    %d requests and %d questions in %s; %d unique questions served\n", req, qs, month, seen)
	return nil
}

// runKeysCreate creates a key and prints it, once.
func runKeysCreate(ctx context.Context, st store.Store, w io.Writer, o *keysOptions) error {
	u, err := parseUntil(o.Until)
	if err != nil {
		return err
	}
	key, hash, prefix := paywall.NewAPIKey()
	k := store.Key{ID: paywall.NewKeyID(), Hash: hash, Prefix: prefix, Name: o.Name, Email: strings.ToLower(o.Email), Tier: o.Tier, TierUntil: u, CreatedAt: o.Now().UTC()}
	if err := st.CreateKey(ctx, k); err != nil {
		return err
	}
	fmt.Fprintf(w, "%s\n(key id %s; shown once, store it now)\n", key, k.ID)
	return nil
}

// runKeysSetTier sets a key's tier and the end of its subscription.
func runKeysSetTier(ctx context.Context, st store.Store, w io.Writer, o *keysOptions) error {
	u, err := parseUntil(o.Until)
	if err != nil {
		return err
	}
	k, err := findKey(ctx, st, o.Ref)
	if err != nil {
		return err
	}
	if err := st.SetTier(ctx, k.ID, o.NewTier, u); err != nil {
		return err
	}
	fmt.Fprintf(w, "%s is now %s", k.ID, o.NewTier)
	if !u.IsZero() {
		fmt.Fprintf(w, " until %s (then Free)", u.Format(time.DateOnly))
	}
	fmt.Fprintln(w)
	return nil
}

// runKeysRevoke revokes a key.
func runKeysRevoke(ctx context.Context, st store.Store, w io.Writer, o *keysOptions) error {
	k, err := findKey(ctx, st, o.Ref)
	if err != nil {
		return err
	}
	if err := st.RevokeKey(ctx, k.ID, o.Now().UTC()); err != nil {
		return err
	}
	fmt.Fprintf(w, "revoked %s (%s)\n", k.ID, k.Email)
	return nil
}

// runKeysRotate replaces a key, keeping its id, tier and usage.
func runKeysRotate(ctx context.Context, st store.Store, w io.Writer, o *keysOptions) error {
	k, err := findKey(ctx, st, o.Ref)
	if err != nil {
		return err
	}
	key, hash, prefix := paywall.NewAPIKey()
	if err := st.RotateKey(ctx, k.ID, hash, prefix); err != nil {
		return err
	}
	fmt.Fprintf(w, "%s\n(new key for %s; the old one no longer works; shown once)\n", key, k.ID)
	return nil
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

// migrateOptions are the flags of "certbank migrate".
type migrateOptions struct {
	dsn string
}

func (a *app) newMigrateCmd() *cobra.Command {
	o := &migrateOptions{}
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Apply the database schema migrations (serve also applies them at start)",
		RunE:  func(c *cobra.Command, _ []string) error { return a.runMigrate(c.Context(), o) },
	}
	cmd.Flags().StringVar(&o.dsn, "database", a.envDefault("CERTBANK_DATABASE", defaultDatabase), "sqlite:PATH or a postgres:// URL")
	return cmd
}

// runMigrate opens the store, which applies the migrations, and reports it.
func (a *app) runMigrate(ctx context.Context, o *migrateOptions) error {
	st, name, err := openStore(ctx, o.dsn)
	if err != nil {
		return err
	}
	defer st.Close()
	fmt.Fprintf(a.stdout, "%s: schema up to date\n", name)
	return nil
}
