package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

// flagError makes a bad flag a usage error (exit status 2).
func flagError(_ *cobra.Command, err error) error { return usagef("%v", err) }

// noArgs refuses positional arguments as a usage error.
func noArgs(_ *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usagef("unexpected argument %q", args[0])
	}
	return nil
}

// exactArgs wants n positional arguments, named in the message.
func exactArgs(names ...string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != len(names) {
			return usagef("want %d argument(s): %s", len(names), strings.Join(names, " "))
		}
		return nil
	}
}

// printTable writes rows under a header, columns aligned.
func printTable(w io.Writer, header []string, rows [][]string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	return tw.Flush()
}

// cell renders a JSON value for a table: strings as they are, lists
// comma-separated, anything else as compact JSON.
func cell(v any) string {
	switch t := v.(type) {
	case nil:
		return ""
	case string:
		return t
	case json.Number:
		return t.String()
	case []any:
		parts := make([]string, len(t))
		for i, item := range t {
			parts[i] = cell(item)
		}
		return strings.Join(parts, ",")
	}
	b, err := canonicalJSON(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// listFormat is the --format of list and show commands.
func addListFormat(cmd *cobra.Command, format *string) {
	cmd.Flags().StringVarP(format, "format", "f", formatTable, "output format: table, json or yaml")
}

// renderObjects prints objects (decoded JSON) as a table of columns, or as json/yaml.
func renderObjects(w io.Writer, format string, objects []any, columns []string) error {
	if format != formatTable {
		if format == formatPlain {
			return usagef("unknown --format %q (want table, json or yaml)", format)
		}
		return render(w, objects, format)
	}
	rows := make([][]string, 0, len(objects))
	for _, o := range objects {
		m, _ := o.(map[string]any)
		row := make([]string, len(columns))
		for i, c := range columns {
			row[i] = cell(m[c])
		}
		rows = append(rows, row)
	}
	header := make([]string, len(columns))
	for i, c := range columns {
		header[i] = strings.ToUpper(c)
	}
	return printTable(w, header, rows)
}

// renderObject prints one object as a two-column field/value table, or as json/yaml.
func renderObject(w io.Writer, format string, object any, fields []string) error {
	if format != formatTable {
		if format == formatPlain {
			return usagef("unknown --format %q (want table, json or yaml)", format)
		}
		return render(w, object, format)
	}
	m, _ := object.(map[string]any)
	rows := make([][]string, 0, len(fields))
	for _, f := range fields {
		rows = append(rows, []string{f, cell(m[f])})
	}
	return printTable(w, []string{"FIELD", "VALUE"}, rows)
}

// listOf decodes a JSON list answer.
func listOf(body []byte) ([]any, error) {
	v, err := decodeJSON(body)
	if err != nil {
		return nil, err
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("unexpected answer: want a JSON list")
	}
	return list, nil
}
