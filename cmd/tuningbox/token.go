package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tuningbox/tuningbox/client"
)

var tokenColumns = []string{"id", "user", "description", "created_at"}

func newTokenCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "token",
		Short: "Manage API tokens (admins only)",
		Long: `Manage API tokens. A token acts as its user (same role) and is sent as
"Authorization: Bearer TOKEN" (the CLI reads it from TUNINGBOX_TOKEN). Only its
SHA-256 is stored: the secret is shown once, when it is created.`,
	}
	cmd.SetFlagErrorFunc(flagError)
	cmd.AddCommand(newTokenCreateCmd(), newTokenListCmd(), newTokenRevokeCmd())
	return cmd
}

func newTokenCreateCmd() *cobra.Command {
	var user, description string
	cmd := &cobra.Command{
		Use:   "create [--user NAME] [--description TEXT]",
		Short: "Create a token and print its secret (once)",
		Long: `Create a token for --user (by default the caller) and print the secret alone
on standard output, so that TOKEN=$(tuningbox token create) works; the token's
id, for listing and revoking, goes to standard error.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := newAPIClient()
			if err != nil {
				return err
			}
			created, err := c.CreateToken(cmd.Context(), user, description)
			if err != nil {
				return err
			}
			if created.Secret == "" {
				return fmt.Errorf("unexpected answer: no token secret")
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "token %s for user %s (the secret is not shown again)\n", created.Token.ID, created.Token.User)
			fmt.Fprintln(cmd.OutOrStdout(), created.Secret)
			return nil
		},
	}
	cmd.Flags().StringVar(&user, "user", "", "the user the token acts as (default: the caller)")
	cmd.Flags().StringVar(&description, "description", "", "what the token is for")
	return cmd
}

func newTokenListCmd() *cobra.Command {
	var user, format string
	cmd := &cobra.Command{
		Use:   "list [--user NAME]",
		Short: "List tokens (never their secrets)",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return listObjects(cmd, format, tokenColumns, func(c *client.Client) (any, error) { return c.Tokens(cmd.Context(), user) })
		},
	}
	cmd.Flags().StringVar(&user, "user", "", "only this user's tokens")
	addListFormat(cmd, &format)
	return cmd
}

func newTokenRevokeCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "revoke ID",
		Short: "Revoke a token",
		Args:  exactArgs("ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := newAPIClient()
			if err != nil {
				return err
			}
			return c.RevokeToken(cmd.Context(), args[0])
		},
	}
}
