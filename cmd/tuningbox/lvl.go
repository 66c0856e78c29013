package main

import (
	"github.com/spf13/cobra"

	"github.com/tuningbox/tuningbox/client"
)

var lvlColumns = []string{"id", "name", "parent", "values"}

func newLvlCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "lvl",
		Short: "Show an environment's hierarchy levels",
	}
	cmd.SetFlagErrorFunc(flagError)
	cmd.AddCommand(newLvlListCmd(), newLvlShowCmd())
	return cmd
}

func newLvlListCmd() *cobra.Command {
	var (
		env    string
		format string
	)
	cmd := &cobra.Command{
		Use:   "list --env ID",
		Short: "List an environment's hierarchy levels, least specific first, with the values documents are stored under",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if env == "" {
				return usagef("--env is required")
			}
			return listObjects(cmd, format, lvlColumns, func(c *client.Client) (any, error) {
				ref, err := c.Ref(cmd.Context(), client.KindEnvironment, env)
				if err != nil {
					return nil, err
				}
				return c.Levels(cmd.Context(), ref)
			})
		},
	}
	cmd.Flags().StringVarP(&env, "env", "e", "", "environment id (required)")
	addListFormat(cmd, &format)
	return cmd
}

func newLvlShowCmd() *cobra.Command {
	var (
		env    string
		format string
	)
	cmd := &cobra.Command{
		Use:   "show --env ID LEVEL",
		Short: "Show one hierarchy level by name or id",
		Args:  exactArgs("LEVEL"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if env == "" {
				return usagef("--env is required")
			}
			return showObject(cmd, format, []string{"id", "name", "environment_id", "parent", "values"}, func(c *client.Client) (any, error) {
				ref, err := c.Ref(cmd.Context(), client.KindEnvironment, env)
				if err != nil {
					return nil, err
				}
				return c.Level(cmd.Context(), ref, args[0])
			})
		},
	}
	cmd.Flags().StringVarP(&env, "env", "e", "", "environment id (required)")
	addListFormat(cmd, &format)
	return cmd
}
