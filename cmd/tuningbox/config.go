package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/tuningbox/tuningbox/client"
)

func newConfigCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Read and change resource values and overrides, like fuel config",
		Long: `Read and change the documents of a resource (data source) at a level of an environment.

--level names the level path, e.g. nodes=7. The node level (nodes, or node)
takes a registered node by id, FQDN or UUID: the server
resolves it, so every form addresses the same documents. In an environment
with levels above the node (role, ...), --level nodes=FQDN alone reads the
node's placement from the registry. Without --level the environment-wide
(global) document is used.`,
	}
	cmd.SetFlagErrorFunc(flagError)
	cmd.AddCommand(
		newConfigGetCmd(),
		newConfigSetCmd(kindValues),
		newConfigSetCmd(kindOverrides),
		newConfigDeleteCmd(),
		newConfigHistoryCmd(),
		newConfigDiffCmd(),
		newConfigWatchCmd(),
		newConfigRollbackCmd(),
		newConfigImportCmd(),
	)
	return cmd
}

func newConfigGetCmd() *cobra.Command {
	var (
		doc        docFlags
		key        string
		format     string
		version    int
		showLookup bool
		merge      string
		explain    bool
		asOf       string
	)
	cmd := &cobra.Command{
		Use:   "get --env ID [--level nodes=ID|FQDN] --resource NAME [--key a.b] [--format json|yaml|plain]",
		Short: "Print the effective values of a resource (values and overrides of every level merged)",
		Long: `Print the effective values of a resource at a level: the values and overrides of
every level from global down to the given one, merged.

With --key the output is {key: value} (json, yaml) or just the value (plain).
--show-lookup prints each top-level value as [value, "/level/value/"], the
level path where it was last set. --version N reads version N of this level's
values document. --merge deep merges objects recursively (lists: the more
specific level's elements first, duplicates removed); --explain prints, for
every key, its level, version, writer and the layers it shadows; --as-of reads
every document as it was at that instant (RFC 3339).`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if format == formatPlain && key == "" {
				return usagef("--format plain prints one value: give --key")
			}
			c, ref, err := doc.connect(cmd.Context())
			if err != nil {
				return err
			}
			q := client.DocumentQuery{Effective: true, Key: key, ShowLookup: showLookup, Version: version}
			if merge != "" || explain || asOf != "" {
				if q.AsOf, err = parseAsOf(asOf); err != nil {
					return err
				}
				q.Merge, q.Explain = merge, explain
				if ref, err = at13(cmd.Context(), c, ref); err != nil {
					return err
				}
				c = v13(c)
			}
			resp, err := c.Document(cmd.Context(), ref, kindValues, q)
			if err != nil {
				return err
			}
			v, err := decodeJSON(resp.Body)
			if err != nil {
				return err
			}
			if key != "" && format != formatPlain {
				v = map[string]any{key: v}
			}
			return render(cmd.OutOrStdout(), v, format)
		},
	}
	doc.register(cmd)
	f := cmd.Flags()
	f.StringVarP(&key, "key", "k", "", "dot path of one value, e.g. deployment_id or network_scheme.endpoints")
	f.StringVarP(&format, "format", "f", formatJSON, "output format: json, yaml or plain (plain needs --key)")
	f.IntVar(&version, "version", 0, "version of this level's values document (latest when omitted)")
	f.BoolVarP(&showLookup, "show-lookup", "s", false, "show the level path each top-level value comes from")
	f.StringVar(&merge, "merge", "", "deep or shallow (default: the resource definition's, else shallow)")
	f.BoolVar(&explain, "explain", false, "for every key: its level, version, writer and the layers it shadows")
	f.StringVar(&asOf, "as-of", "", "read every document as it was at this RFC 3339 instant")
	return cmd
}

// newConfigSetCmd builds `config set` (kind values) and `config override` (kind overrides).
func newConfigSetCmd(kind string) *cobra.Command {
	var (
		doc    docFlags
		key    string
		value  string
		typ    string
		format string
		dry    bool
	)
	use, short := "set", "Set a resource's values at a level: a whole document from stdin, or one key"
	if kind == kindOverrides {
		use, short = "override", "Override values at a level without changing the uploaded values: a whole document from stdin, or one key"
	}
	cmd := &cobra.Command{
		Use:   use + " --env ID [--level nodes=ID|FQDN] --resource NAME [--key KEY --type null|int|str|json|yaml|bool [--value V]] [--format json|yaml]",
		Short: short,
		Long: short + `.

Without --key the whole document is read from stdin (--format json or yaml) and
stored as a new version. With --key one value is set: simple types with
--value and --type (without --type the value reads as a YAML scalar: 2 is an
int, true a bool, anything else a string); --type null needs no value;
--type json or yaml without --value reads the value from stdin.
Every change is a new version of the document (see config history).`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var valuePtr *string
			if cmd.Flags().Changed("value") {
				valuePtr = &value
			}
			if key == "" && (valuePtr != nil || typ != "") {
				return usagef("--value and --type go with --key; without --key the document is read from stdin")
			}
			c, ref, err := doc.connect(cmd.Context())
			if err != nil {
				return err
			}
			if key == "" {
				data, err := io.ReadAll(cmd.InOrStdin())
				if err != nil {
					return err
				}
				document, err := parseDocument(data, format)
				if err != nil {
					return usagef("stdin: %v", err)
				}
				version, err := putDocument(cmd.Context(), c, ref, kind, document, dryOut(cmd, dry))
				return printVersion(cmd, dry, version, err)
			}
			path, err := splitKey(key)
			if err != nil {
				return err
			}
			v, err := typedValue(typ, valuePtr, cmd.InOrStdin())
			if err != nil {
				return err
			}
			version, err := setKey(cmd, c, ref, kind, path, v, dryOut(cmd, dry))
			return printVersion(cmd, dry, version, err)
		},
	}
	doc.register(cmd)
	dryRunFlag(cmd, &dry)
	f := cmd.Flags()
	f.StringVarP(&key, "key", "k", "", "dot path of the value to set, e.g. deployment_id")
	f.StringVarP(&value, "value", "v", "", "the value to set")
	f.StringVarP(&typ, "type", "t", "", "type of --value: null, int, str, json, yaml or bool")
	f.StringVarP(&format, "format", "f", formatJSON, "format of the document on stdin: json or yaml")
	return cmd
}

// setKey sets one key of the document of kind at ref's level and returns the
// version it created. A level that has no document yet gets one holding just
// that key; otherwise the API's keys/set (at microversion 1.4) changes the
// stored document atomically, creating missing objects on the way, never
// descending into a scalar.
func setKey(cmd *cobra.Command, c *client.Client, ref client.DocumentRef, kind string, path []string, v any, dry io.Writer) (int, error) {
	current, err := getDocument(cmd.Context(), c, ref, kind, 0)
	if err != nil {
		return 0, err
	}
	if m, ok := current.(map[string]any); ok && len(m) == 0 {
		document := v
		for i := len(path) - 1; i >= 0; i-- {
			document = map[string]any{path[i]: document}
		}
		return putDocument(cmd.Context(), c, ref, kind, document, dry)
	}
	return sendWrite(cmd.Context(), c, ref, kind, docWrite{sets: []client.KeySet{{Path: path, Value: v}}}, dry)
}

// printVersion reports the version a write created ("version N"); a dry run
// has printed its preview already.
func printVersion(cmd *cobra.Command, dry bool, version int, err error) error {
	if err != nil || dry {
		return err
	}
	_, err = fmt.Fprintf(cmd.OutOrStdout(), "version %d\n", version)
	return err
}

func newConfigDeleteCmd() *cobra.Command {
	var (
		doc      docFlags
		key      string
		override bool
		dry      bool
	)
	cmd := &cobra.Command{
		Use:     "delete --env ID [--level nodes=ID|FQDN] --resource NAME --key a.b [--override]",
		Aliases: []string{"del"},
		Short:   "Delete one key from a resource's values (or, with --override, its overrides) at a level",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if key == "" {
				return usagef("--key is required")
			}
			path, err := splitKey(key)
			if err != nil {
				return err
			}
			c, ref, err := doc.connect(cmd.Context())
			if err != nil {
				return err
			}
			kind := kindValues
			if override {
				kind = kindOverrides
			}
			version, err := sendWrite(cmd.Context(), c, ref, kind, docWrite{dels: []client.KeyPath{path}}, dryOut(cmd, dry))
			return printVersion(cmd, dry, version, err)
		},
	}
	doc.register(cmd)
	dryRunFlag(cmd, &dry)
	f := cmd.Flags()
	f.StringVarP(&key, "key", "k", "", "dot path of the value to delete (required)")
	f.BoolVar(&override, "override", false, "delete from the overrides instead of the values")
	return cmd
}
