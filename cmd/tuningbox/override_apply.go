package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"
)

// newOverrideCmd groups the Puppet resource override commands (spec 001).
func newOverrideCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "override",
		Short: "Puppet resource overrides: apply configuration data to a catalog",
	}
	cmd.AddCommand(newOverrideApplyCmd())
	return cmd
}

func newOverrideApplyCmd() *cobra.Command {
	var catalogFile, dataFile, env, resource string
	var levels []string
	cmd := &cobra.Command{
		Use:   "apply --catalog FILE (--env ID [--level NAME=VALUE]... --resource NAME | --data FILE)",
		Short: "Apply override data to a catalog; prints the new catalog and the report",
		Long: `Applies configuration / configuration_options override data to a catalog
(a list of resources {type, title, parameters}) and prints {catalog, report}.
The data is a file (--data, YAML or JSON) or the effective values of a ConfigDB
resource (--env, --level from least to most specific, --resource).
Files may be JSON or YAML; "-" reads standard input.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if catalogFile == "" {
				return usagef("--catalog is required")
			}
			fromDB := env != "" || resource != "" || len(levels) > 0
			if (dataFile != "") == fromDB {
				return usagef("give either --data FILE or --env ID [--level NAME=VALUE]... --resource NAME")
			}
			body := map[string]any{}
			catalog, err := readDocument(cmd.InOrStdin(), catalogFile)
			if err != nil {
				return err
			}
			body["catalog"] = catalog
			if dataFile != "" {
				if body["data"], err = readDocument(cmd.InOrStdin(), dataFile); err != nil {
					return err
				}
			} else {
				if env == "" || resource == "" {
					return usagef("--env and --resource are both required to read the data from the ConfigDB")
				}
				levelPath, err := levelPath(levels)
				if err != nil {
					return err
				}
				body["source"] = map[string]string{"env": env, "levels": levelPath, "resource": resource}
			}
			client, err := newAPIClient()
			if err != nil {
				return err
			}
			resp, err := client.do(cmd.Context(), request{Method: http.MethodPost, Path: "/api/v1/config/overrides/apply", Body: body})
			if err != nil {
				return err
			}
			var out bytes.Buffer
			if err := json.Indent(&out, resp.Body, "", "  "); err != nil {
				return fmt.Errorf("the server answered invalid JSON: %w", err)
			}
			out.WriteByte('\n')
			_, err = cmd.OutOrStdout().Write(out.Bytes())
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&catalogFile, "catalog", "", "catalog file: a list of resources {type, title, parameters}")
	f.StringVar(&dataFile, "data", "", "override data file with configuration and configuration_options")
	f.StringVar(&env, "env", "", "environment id or UUID whose values hold the override data")
	f.StringArrayVar(&levels, "level", nil, "level NAME=VALUE, repeated from least to most specific")
	f.StringVar(&resource, "resource", "", "resource definition (id or name) holding the override data")
	return cmd
}

// levelPath turns NAME=VALUE flags into the API's level path "name/value/...".
func levelPath(levels []string) (string, error) {
	segs := make([]string, 0, 2*len(levels))
	for _, l := range levels {
		name, value, ok := strings.Cut(l, "=")
		if !ok || name == "" || value == "" {
			return "", usagef("--level %q: expected NAME=VALUE", l)
		}
		segs = append(segs, url.PathEscape(name), url.PathEscape(value))
	}
	return strings.Join(segs, "/"), nil
}

// readDocument reads a JSON or YAML file ("-" is standard input) as JSON.
func readDocument(stdin io.Reader, name string) (json.RawMessage, error) {
	var raw []byte
	var err error
	if name == "-" {
		raw, err = io.ReadAll(stdin)
	} else {
		raw, err = os.ReadFile(name)
	}
	if err != nil {
		return nil, err
	}
	if json.Valid(raw) {
		return raw, nil
	}
	var doc any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, usagef("%s is neither JSON nor YAML: %v", name, err)
	}
	out, err := json.Marshal(jsonCompatible(doc))
	if err != nil {
		return nil, usagef("%s cannot be sent as JSON: %v", name, err)
	}
	return out, nil
}

// jsonCompatible turns YAML mappings with non-string keys (yes: 1, 80: x) into
// JSON objects with the keys written out.
func jsonCompatible(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, item := range v {
			v[k] = jsonCompatible(item)
		}
		return v
	case map[any]any:
		out := make(map[string]any, len(v))
		for k, item := range v {
			out[fmt.Sprint(k)] = jsonCompatible(item)
		}
		return out
	case []any:
		for i, item := range v {
			v[i] = jsonCompatible(item)
		}
		return v
	default:
		return v
	}
}
