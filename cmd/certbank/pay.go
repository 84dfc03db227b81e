package main

import (
	"context"
	"log/slog"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/paywall"
	"github.com/spf13/pflag"
)

type payFlags struct{}

func (a *app) addPayFlags(f *pflag.FlagSet, p *payFlags) {}

func (a *app) payConfig(ctx context.Context, p payFlags, bank *certbank.Bank, log *slog.Logger) (*paywall.PayConfig, func(), error) {
	return nil, func() {}, nil
}
