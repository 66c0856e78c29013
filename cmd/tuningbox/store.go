package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tuningbox/tuningbox/shared/store/bolt"
)

func newStoreCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "store",
		Short: "Maintain the store: check the embedded database file",
	}
	cmd.AddCommand(newStoreCheckCmd())
	return cmd
}

func newStoreCheckCmd() *cobra.Command {
	var dataDir string
	cmd := &cobra.Command{
		Use:   "check --data DIR",
		Short: "Verify the embedded database file (the server must be stopped)",
		Long: `Verify DIR/tuningbox.db: its metadata, that the file is as long as its
metadata says (not truncated) and every page (bbolt's consistency check).
Exit status 0 when it is sound, 4 when it is damaged, 1 when it cannot be read.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dataDir == "" {
				return usagef("--data DIR is required")
			}
			rep, err := bolt.Check(dataDir)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: ok, %d bytes, %d index items, %d blobs\n", rep.Path, rep.Bytes, rep.IndexItems, rep.Blobs)
			return nil
		},
	}
	cmd.Flags().StringVar(&dataDir, "data", "", "data directory of the embedded backend")
	return cmd
}
