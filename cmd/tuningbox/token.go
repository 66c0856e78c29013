package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"

	"github.com/spf13/cobra"
)

const tokensPath = "/api/v1/tokens"

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
			resp, err := c.do(cmd.Context(), request{Method: http.MethodPost, Path: tokensPath,
				Body: map[string]string{"user": user, "description": description}})
			if err != nil {
				return err
			}
			var created struct {
				Token struct {
					ID   string `json:"id"`
					User string `json:"user"`
				} `json:"token"`
				Secret string `json:"secret"`
			}
			if err := json.Unmarshal(resp.Body, &created); err != nil || created.Secret == "" {
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
			var query url.Values
			if user != "" {
				query = url.Values{"user": {user}}
			}
			tokens, err := listNamed(cmd.Context(), tokensPath, query, "tokens")
			if err != nil {
				return err
			}
			return renderObjects(cmd.OutOrStdout(), format, tokens, tokenColumns)
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
			_, err = c.do(cmd.Context(), request{Method: http.MethodDelete, Path: tokensPath + "/" + url.PathEscape(args[0])})
			return err
		},
	}
}
