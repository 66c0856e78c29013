package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/tuningbox/tuningbox/client"
	"github.com/tuningbox/tuningbox/shared/store/bolt"
)

func newStoreCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "store",
		Short: "Maintain the store: check, back up and restore the embedded database file",
	}
	cmd.AddCommand(newStoreCheckCmd(), newStoreBackupCmd(), newStoreRestoreCmd())
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
			printCheck(cmd.OutOrStdout(), rep)
			return nil
		},
	}
	cmd.Flags().StringVar(&dataDir, "data", "", "data directory of the embedded backend")
	return cmd
}

func printCheck(w io.Writer, rep bolt.CheckReport) {
	fmt.Fprintf(w, "%s: ok, %d bytes, %d index items, %d blobs\n", rep.Path, rep.Bytes, rep.IndexItems, rep.Blobs)
}

func newStoreBackupCmd() *cobra.Command {
	var to, dataDir string
	cmd := &cobra.Command{
		Use:   "backup --to FILE [--data DIR]",
		Short: "Copy the embedded store to FILE, consistently, while the server serves",
		Long: `Write a consistent copy of the embedded store to FILE: one bbolt read
transaction, so every write is either wholly in it or not at all.

Without --data the running server (--url, an admin's credentials) streams it
from GET /api/v1/store/backup: bbolt locks its file, so the server is the one
reader. With --data DIR and no server running, DIR/tuningbox.db is opened
read-only and copied.

The copy is written beside FILE, checked as start-up checks a database
(metadata, length, every page) and only then renamed to FILE: a broken
download never leaves a FILE. Exit status 4 when the copy is damaged.
Restore it with 'tuningbox store restore FILE --data DIR'.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if to == "" {
				return usagef("--to FILE is required")
			}
			copyTo := func(ctx context.Context, w io.Writer) (int64, error) { return bolt.BackupFile(ctx, dataDir, w) }
			if dataDir == "" {
				// A backup takes as long as the file takes to send: no request timeout.
				c, err := newAPIClient(client.WithTimeout(0))
				if err != nil {
					return err
				}
				copyTo = c.Backup
			}
			var rep bolt.CheckReport
			err := writeFileChecked(cmd.Context(), to, copyTo, func(path string) (err error) {
				rep, err = bolt.CheckFile(path)
				return err
			})
			if err != nil {
				return err
			}
			rep.Path = to
			printCheck(cmd.OutOrStdout(), rep)
			return nil
		},
	}
	cmd.Flags().StringVar(&to, "to", "", "file to write the backup to")
	cmd.Flags().StringVar(&dataDir, "data", "", "copy DIR/tuningbox.db directly (no server may hold it) instead of asking the server")
	return cmd
}

func newStoreRestoreCmd() *cobra.Command {
	var dataDir string
	cmd := &cobra.Command{
		Use:   "restore FILE --data DIR",
		Short: "Replace the embedded store with a backup (the server must be stopped)",
		Long: `Replace DIR/tuningbox.db with the backup FILE. The backup is copied into
DIR and checked as start-up checks a database (metadata, length, every page);
a damaged one is refused (exit status 4) and DIR/tuningbox.db is not touched.
The database it replaces is kept as DIR/tuningbox.db.pre-restore-<UTC time>.
Refused while a server holds DIR/tuningbox.db.`,
		Args: exactArgs("FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if dataDir == "" {
				return usagef("--data DIR is required")
			}
			rep, replaced, err := bolt.Restore(dataDir, args[0])
			if err != nil {
				return err
			}
			printCheck(cmd.OutOrStdout(), rep)
			if replaced != "" {
				fmt.Fprintf(cmd.OutOrStdout(), "the replaced database is kept as %s\n", replaced)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&dataDir, "data", "", "data directory of the embedded backend")
	return cmd
}

// writeFileChecked writes path through write into a temporary file beside
// it, makes it durable, has check (when not nil) accept it and only then
// renames it to path: a failed or cut-short write never leaves a file at path.
func writeFileChecked(ctx context.Context, path string, write func(context.Context, io.Writer) (int64, error), check func(tmpPath string) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".part-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // after the rename, nothing is left to remove
	_, err = write(ctx, f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && check != nil {
		err = check(f.Name())
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return os.Rename(f.Name(), path)
}
