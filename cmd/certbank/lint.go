package main

import (
	"github.com/spf13/cobra"
)

func (a *app) newLintCmd() *cobra.Command {
	return &cobra.Command{Use: "lint", Short: "Report item-writing flaws", RunE: func(*cobra.Command, []string) error { return nil }}
}
