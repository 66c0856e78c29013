package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tuningbox/tuningbox/client"
)

// The ConfigDB features of microversion 1.3 (merge, explain, as_of, diff,
// dry_run, wait) are asked for at 1.3, whatever --api-version says; from 1.2 on
// a path names its environment by UUID, so the document's environment is resolved first.

// v13 asks c's questions at microversion 1.3.
func v13(c *client.Client) *client.Client { return c.At("1.3") }

// at13 returns d with its environment named as 1.3 and later take it: by UUID.
func at13(ctx context.Context, c *client.Client, d client.DocumentRef) (client.DocumentRef, error) {
	env, err := v13(c).Ref(ctx, client.KindEnvironment, d.Environment)
	d.Environment = env
	return d, err
}

// parseAsOf checks an --as-of flag: RFC 3339, e.g. 2026-11-23T19:00:00Z.
func parseAsOf(s string) (string, error) {
	if s == "" {
		return "", nil
	}
	if _, err := time.Parse(time.RFC3339Nano, s); err != nil {
		return "", usagef("--as-of %q: want an RFC 3339 time such as 2026-11-23T19:00:00Z", s)
	}
	return s, nil
}

// diffChanges lists a server diff as the CLI prints diffs, sorted by key path.
func diffChanges(d *client.Diff) []change {
	var out []change
	for p, v := range d.Added {
		out = append(out, change{Path: p, New: v, Op: '+'})
	}
	for p, v := range d.Removed {
		out = append(out, change{Path: p, Old: v, Op: '-'})
	}
	for p, c := range d.Changed {
		out = append(out, change{Path: p, Old: c.From, New: c.To, Op: '~'})
	}
	slices.SortFunc(out, func(a, b change) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// levelMap is a level path as the diff body names it.
func levelMap(levels client.LevelPath) map[string]string {
	m := make(map[string]string, len(levels))
	for _, l := range levels {
		m[l.Name] = l.Value
	}
	return m
}

// withNode returns levels with the node level set to node (added when absent).
func withNode(levels client.LevelPath, node string) client.LevelPath {
	out := slices.Clone(levels)
	for i, l := range out {
		if l.Name == "nodes" || l.Name == "node" {
			out[i].Value = node
			return out
		}
	}
	return append(out, client.LevelValue{Name: "nodes", Value: node})
}

// dryRunFlag registers --dry-run on a command that writes a document.
func dryRunFlag(cmd *cobra.Command, dry *bool) {
	cmd.Flags().BoolVar(dry, "dry-run", false, "store nothing: print the version the write would create and how each affected node's effective document would change")
}

// docWrite is one write of a document: the whole document (put), or some of
// its keys set or deleted.
type docWrite struct {
	put  json.RawMessage
	sets []client.KeySet
	dels []client.KeyPath
}

func (w docWrite) send(ctx context.Context, c *client.Client, ref client.DocumentRef, kind string) (int, error) {
	switch {
	case w.sets != nil:
		return c.SetKeys(ctx, ref, kind, w.sets)
	case w.dels != nil:
		return c.DeleteKeys(ctx, ref, kind, w.dels)
	default:
		return c.PutDocument(ctx, ref, kind, w.put)
	}
}

func (w docWrite) preview(ctx context.Context, c *client.Client, ref client.DocumentRef, kind string) (*client.Preview, error) {
	switch {
	case w.sets != nil:
		return c.PreviewSetKeys(ctx, ref, kind, w.sets)
	case w.dels != nil:
		return c.PreviewDeleteKeys(ctx, ref, kind, w.dels)
	default:
		return c.PreviewPut(ctx, ref, kind, w.put)
	}
}

// keysSetVersion is the microversion a keys/set is sent at, whatever
// --api-version says: from 1.4 it creates the objects missing on the key's
// path, so config set adds facts under keys that do not exist yet.
const keysSetVersion = "1.4"

// sendWrite sends a document write and returns the version it created. With
// dry (not nil) it is a dry run: nothing is stored and the preview is printed to dry.
func sendWrite(ctx context.Context, c *client.Client, ref client.DocumentRef, kind string, w docWrite, dry io.Writer) (int, error) {
	version, sent := "", ref
	switch {
	case w.sets != nil:
		version = keysSetVersion
	case dry != nil:
		version = "1.3"
	}
	if version != "" {
		var err error
		if sent, err = at13(ctx, c, ref); err != nil {
			return 0, err
		}
		c = c.At(version)
	}
	if dry == nil {
		return w.send(ctx, c, sent, kind)
	}
	p, err := w.preview(ctx, c, sent, kind)
	if err != nil {
		return 0, err
	}
	fmt.Fprintf(dry, "dry run: %s %s would become version %d; nothing stored\n", ref, kind, p.Version)
	if len(p.Affected) == 0 {
		fmt.Fprintln(dry, "no node's effective document would change")
	}
	for _, a := range p.Affected {
		fmt.Fprintf(dry, "node %s:\n", a.Node)
		for _, ch := range diffChanges(&a.Changes) {
			var line strings.Builder
			if err := writeDiff(&line, []change{ch}); err != nil {
				return 0, err
			}
			first, _, _ := strings.Cut(line.String(), "\n")
			fmt.Fprintf(dry, "  %s\n", first)
		}
	}
	return p.Version, nil
}

// dryOut is where a dry run's preview goes: the command's output, or nil for a real write.
func dryOut(cmd *cobra.Command, dry bool) io.Writer {
	if dry {
		return cmd.OutOrStdout()
	}
	return nil
}
