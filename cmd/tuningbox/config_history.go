package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tuningbox/tuningbox/client"
)

// listVersions returns the versions of the document of kind at ref, newest first.
func listVersions(ctx context.Context, c *client.Client, ref client.DocumentRef, kind string) ([]client.DocumentVersion, error) {
	versions, err := c.DocumentVersions(ctx, ref, kind)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(versions, func(a, b client.DocumentVersion) int { return b.Version - a.Version })
	return versions, nil
}

// kindFlag adds --override, which switches a command from values to overrides.
func kindFlag(cmd *cobra.Command, override *bool) {
	cmd.Flags().BoolVar(override, "override", false, "work on the overrides instead of the values")
}

func kindOf(override bool) string {
	if override {
		return kindOverrides
	}
	return kindValues
}

func newConfigHistoryCmd() *cobra.Command {
	var (
		doc      docFlags
		override bool
		format   string
		key      string
		limit    int
	)
	cmd := &cobra.Command{
		Use:   "history --env ID [--level nodes=ID|FQDN] --resource NAME [--override] [--key a.b [--limit N]]",
		Short: "List the versions of a resource's values (or overrides) at a level, newest first, or those that changed one key",
		Long: `List the versions of a resource's values (or overrides) at a level, newest
first, each with its author (principal and role; "-" when the write was not
authenticated, or stored before versions recorded their writer).

With --key, list only the versions in which the value at that dot path
changed (microversion 1.3): when, who (principal, role, request id), whether
the key was added, changed or removed, and its old and new values (cut to
60 characters in the table; --format json prints them whole). --limit
stops after that many changes (default 20).`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if key == "" && cmd.Flags().Changed("limit") {
				return usagef("--limit goes with --key")
			}
			if limit <= 0 {
				return usagef("--limit must be positive")
			}
			c, ref, err := doc.connect(cmd.Context())
			if err != nil {
				return err
			}
			if key != "" {
				return keyHistory(cmd, c, ref, kindOf(override), key, limit, format)
			}
			versions, err := listVersions(cmd.Context(), c, ref, kindOf(override))
			if err != nil {
				return err
			}
			if format != formatTable {
				return renderObjects(cmd.OutOrStdout(), format, toObjects(versions), nil)
			}
			rows := make([][]string, len(versions))
			for i, v := range versions {
				rows[i] = []string{fmt.Sprint(v.Version), v.CreatedAt.UTC().Format(time.RFC3339), author(v.WrittenBy), fmt.Sprint(v.Size), v.SHA256}
			}
			return printTable(cmd.OutOrStdout(), []string{"VERSION", "CREATED", "AUTHOR", "BYTES", "SHA256"}, rows)
		},
	}
	doc.register(cmd)
	kindFlag(cmd, &override)
	addListFormat(cmd, &format)
	f := cmd.Flags()
	f.StringVarP(&key, "key", "k", "", "only the versions that changed the value at this dot path, e.g. nova.workers")
	f.IntVar(&limit, "limit", client.DefaultKeyHistoryLimit, "with --key: at most this many changes")
	return cmd
}

// keyHistory prints the versions of the document of kind at ref in which the
// value at key changed, newest first, reading pages until limit changes or
// the end of the history.
func keyHistory(cmd *cobra.Command, c *client.Client, ref client.DocumentRef, kind, key string, limit int, format string) error {
	ref, err := at13(cmd.Context(), c, ref)
	if err != nil {
		return err
	}
	var changes []client.KeyChange
	for before := 0; len(changes) < limit; {
		page, err := v13(c).KeyHistory(cmd.Context(), ref, kind, key, before, min(limit-len(changes), client.MaxKeyHistoryLimit))
		if err != nil {
			return err
		}
		changes = append(changes, page.Changes...)
		if before = page.Before; before == 0 {
			break
		}
	}
	if format != formatTable {
		return renderObjects(cmd.OutOrStdout(), format, toObjects(changes), nil)
	}
	rows := make([][]string, len(changes))
	for i, ch := range changes {
		request := "-"
		if ch.WrittenBy != nil && ch.WrittenBy.RequestID != "" {
			request = ch.WrittenBy.RequestID
		}
		rows[i] = []string{fmt.Sprint(ch.Version), ch.CreatedAt.UTC().Format(time.RFC3339), author(ch.WrittenBy), request, ch.Change, shortJSON(ch.Old), shortJSON(ch.New)}
	}
	return printTable(cmd.OutOrStdout(), []string{"VERSION", "CREATED", "AUTHOR", "REQUEST", "CHANGE", "OLD", "NEW"}, rows)
}

// author names who wrote a version: "principal (role)", "-" when not known.
func author(by *client.Writer) string {
	switch {
	case by == nil:
		return "-"
	case by.Role == "":
		return by.Principal
	}
	return by.Principal + " (" + by.Role + ")"
}

// shortJSON is a value of a key's history as a table cell: "-" for none,
// else its JSON cut to 60 characters.
func shortJSON(raw json.RawMessage) string {
	const most = 60
	if raw == nil {
		return "-"
	}
	if s := []rune(string(raw)); len(s) > most {
		return string(s[:most-1]) + "…"
	}
	return string(raw)
}

func newConfigDiffCmd() *cobra.Command {
	var (
		doc      docFlags
		override bool
		from, to int
		toNode   string
		toEnv    string
		asOf     string
	)
	cmd := &cobra.Command{
		Use:   "diff --env ID [--level nodes=ID|FQDN] --resource NAME (--from N [--to M] [--override] | --to-node N | --to-env E | --as-of T)",
		Short: "Show what changed between two versions of a resource's values, two nodes, two environments or two instants, key by key",
		Long: `Show what changed between two versions of a resource's values (or overrides)
at a level, one line per key path: "+ key: value" added, "- key: value" removed,
"~ key: old -> new" changed. Nested objects are compared key by key; lists and
scalars as whole values. --to defaults to the latest version.

With --to-node, --to-env or --as-of the server compares effective documents
(POST /api/v1/config/diff): this level's against the same level of node
--to-node, or of environment --to-env, and --as-of T compares this level as
it was at T (RFC 3339) with now.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if toNode != "" || toEnv != "" || asOf != "" {
				return effectiveDiff(cmd, doc, toNode, toEnv, asOf)
			}
			if from <= 0 {
				return usagef("--from must name a version (1, 2, ...)")
			}
			if to < 0 {
				return usagef("--to must name a version (1, 2, ...)")
			}
			c, ref, err := doc.connect(cmd.Context())
			if err != nil {
				return err
			}
			kind := kindOf(override)
			if to == 0 {
				versions, err := listVersions(cmd.Context(), c, ref, kind)
				if err != nil {
					return err
				}
				if len(versions) == 0 {
					return fmt.Errorf("%s has no %s versions: %w", ref, kind, client.ErrNotFound)
				}
				to = versions[0].Version
			}
			old, err := getDocument(cmd.Context(), c, ref, kind, from)
			if err != nil {
				return fmt.Errorf("version %d: %w", from, err)
			}
			cur, err := getDocument(cmd.Context(), c, ref, kind, to)
			if err != nil {
				return fmt.Errorf("version %d: %w", to, err)
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "--- %s %s, version %d\n+++ %s %s, version %d\n", ref, kind, from, ref, kind, to)
			return writeDiff(w, diffDocuments(old, cur))
		},
	}
	doc.register(cmd)
	kindFlag(cmd, &override)
	f := cmd.Flags()
	f.IntVar(&from, "from", 0, "older version (required)")
	f.IntVar(&to, "to", 0, "newer version (latest when omitted)")
	f.StringVar(&toNode, "to-node", "", "compare with this node's effective document (id, FQDN or UUID)")
	f.StringVar(&toEnv, "to-env", "", "compare with the same level of this environment")
	f.StringVar(&asOf, "as-of", "", "compare this level as it was at this RFC 3339 instant with now")
	return cmd
}

// effectiveDiff asks the server for the diff of two effective documents.
func effectiveDiff(cmd *cobra.Command, doc docFlags, toNode, toEnv, asOf string) error {
	asOf, err := parseAsOf(asOf)
	if err != nil {
		return err
	}
	c, ref, err := doc.connect(cmd.Context())
	if err != nil {
		return err
	}
	// The labels name the environments as given, the sides as 1.3 takes them.
	toRef := ref
	if toEnv != "" {
		toRef.Environment = toEnv
	}
	if toNode != "" {
		toRef.Levels = withNode(ref.Levels, toNode)
	}
	from13, err := at13(cmd.Context(), c, ref)
	if err != nil {
		return err
	}
	to13, err := at13(cmd.Context(), c, toRef)
	if err != nil {
		return err
	}
	fromSide := client.DiffSide{Environment: from13.Environment, Levels: levelMap(ref.Levels), Resource: ref.Resource, Effective: true, AsOf: asOf}
	toSide := fromSide
	toSide.AsOf = ""
	toSide.Environment, toSide.Levels = to13.Environment, levelMap(toRef.Levels)
	d, err := v13(c).DiffDocuments(cmd.Context(), fromSide, toSide)
	if err != nil {
		return err
	}
	w := cmd.OutOrStdout()
	fromLabel, toLabel := ref.String(), toRef.String()
	if asOf != "" {
		fromLabel += " as of " + asOf
		toLabel += " now"
	}
	fmt.Fprintf(w, "--- %s, effective\n+++ %s, effective\n", fromLabel, toLabel)
	return writeDiff(w, diffChanges(d))
}

// change is one key-level difference between two documents.
type change struct {
	Path     string
	Old, New any
	// Op is '+' (added), '-' (removed) or '~' (changed).
	Op byte
}

// diffDocuments compares two JSON documents key by key, recursing into
// objects; lists and scalars are compared as whole values. The result is
// sorted by key path.
func diffDocuments(old, cur any) []change {
	var changes []change
	var walk func(path string, a, b any)
	walk = func(path string, a, b any) {
		am, aObj := a.(map[string]any)
		bm, bObj := b.(map[string]any)
		if aObj && bObj {
			keys := slices.Collect(maps.Keys(am))
			for k := range bm {
				if _, ok := am[k]; !ok {
					keys = append(keys, k)
				}
			}
			slices.Sort(keys)
			for _, k := range keys {
				av, inA := am[k]
				bv, inB := bm[k]
				p := joinPath(path, k)
				switch {
				case !inB:
					changes = append(changes, change{Path: p, Old: av, Op: '-'})
				case !inA:
					changes = append(changes, change{Path: p, New: bv, Op: '+'})
				default:
					walk(p, av, bv)
				}
			}
			return
		}
		if !sameJSON(a, b) {
			changes = append(changes, change{Path: path, Old: a, New: b, Op: '~'})
		}
	}
	walk("", old, cur)
	return changes
}

func sameJSON(a, b any) bool {
	ab, errA := canonicalJSON(a)
	bb, errB := canonicalJSON(b)
	return errA == nil && errB == nil && string(ab) == string(bb)
}

// writeDiff prints changes one per line and a summary.
func writeDiff(w io.Writer, changes []change) error {
	var added, removed, changed int
	for _, c := range changes {
		path := c.Path
		if path == "" {
			path = "(document)"
		}
		switch c.Op {
		case '+':
			added++
			fmt.Fprintf(w, "+ %s: %s\n", path, compact(c.New))
		case '-':
			removed++
			fmt.Fprintf(w, "- %s: %s\n", path, compact(c.Old))
		default:
			changed++
			fmt.Fprintf(w, "~ %s: %s -> %s\n", path, compact(c.Old), compact(c.New))
		}
	}
	if len(changes) == 0 {
		_, err := fmt.Fprintln(w, "no differences")
		return err
	}
	_, err := fmt.Fprintf(w, "%d changed, %d added, %d removed\n", changed, added, removed)
	return err
}

func compact(v any) string {
	b, err := canonicalJSON(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSpace(string(b))
}

func newConfigRollbackCmd() *cobra.Command {
	var (
		doc      docFlags
		override bool
		to       int
		dry      bool
	)
	cmd := &cobra.Command{
		Use:   "rollback --env ID [--level nodes=ID|FQDN] --resource NAME --to N [--override]",
		Short: "Write version N of a resource's values (or overrides) at a level as a new version",
		Long: `Write the content of version N of a resource's values (or overrides) at a level
as a new version. History is kept: the versions after N stay readable, and a
rollback can itself be rolled back.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if to <= 0 {
				return usagef("--to must name a version (1, 2, ...)")
			}
			c, ref, err := doc.connect(cmd.Context())
			if err != nil {
				return err
			}
			kind := kindOf(override)
			content, err := getDocument(cmd.Context(), c, ref, kind, to)
			if err != nil {
				return fmt.Errorf("version %d: %w", to, err)
			}
			version, err := putDocument(cmd.Context(), c, ref, kind, content, dryOut(cmd, dry))
			if err != nil || dry {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s %s: version %d written as version %d\n", ref, kind, to, version)
			return err
		},
	}
	doc.register(cmd)
	kindFlag(cmd, &override)
	cmd.Flags().IntVar(&to, "to", 0, "version whose content to restore (required)")
	dryRunFlag(cmd, &dry)
	return cmd
}
