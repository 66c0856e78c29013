package main

import (
	"encoding/json"
	"io"
	"net/url"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tuningbox/tuningbox/client"
	"github.com/tuningbox/tuningbox/shared/puppetyaml"
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
	var (
		catalogFile, dataFile, env, resource string
		level                                []string
	)
	var knownTypes []string
	cmd := &cobra.Command{
		Use:   "apply --catalog FILE (--env ID [--level NAME=VALUE,...] --resource NAME | --data FILE) [--known-types T,...]",
		Short: "Apply override data to a catalog; prints the new catalog and the report",
		Long: `Applies configuration / configuration_options override data to a catalog
(a list of resources {type, title, parameters}) and prints {catalog, report}.
The data is a file (--data) or the effective values of a ConfigDB resource
(--env, --level, --resource, as in "config get"). Files may be JSON or YAML;
"-" reads standard input. --known-types names the resource types that exist
where the catalog is compiled; an entry of any other type missing from the
catalog is then an error (without it the report lists the unchecked types).`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if catalogFile == "" {
				return usagef("--catalog is required")
			}
			fromDB := env != "" || len(level) > 0 || resource != ""
			if (dataFile != "") == fromDB {
				return usagef("give either --data FILE or --env ID [--level NAME=VALUE,...] --resource NAME")
			}
			if fromDB && (env == "" || resource == "") {
				return usagef("--env and --resource are both required to read the data from the ConfigDB")
			}
			levels, err := parseLevels(strings.Join(level, ","))
			if err != nil {
				return err
			}
			catalog, err := readDocument(cmd.InOrStdin(), catalogFile)
			if err != nil {
				return err
			}
			c, err := newAPIClient()
			if err != nil {
				return err
			}
			in := client.OverridesRequest{Catalog: catalog}
			if cmd.Flags().Changed("known-types") {
				in.KnownTypes = append([]string{}, knownTypes...)
			}
			if dataFile != "" {
				if in.Data, err = readDocument(cmd.InOrStdin(), dataFile); err != nil {
					return err
				}
			} else {
				envRef, err := c.Ref(cmd.Context(), client.KindEnvironment, env)
				if err != nil {
					return err
				}
				in.Source = &client.OverridesSource{Env: envRef, Levels: levelPath(levels), Resource: resource}
			}
			result, err := c.ApplyOverrides(cmd.Context(), in)
			if err != nil {
				return err
			}
			out, err := encodeJSON(result)
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(out)
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&catalogFile, "catalog", "", "catalog file: a list of resources {type, title, parameters}")
	f.StringVar(&dataFile, "data", "", "override data file with configuration and configuration_options")
	f.StringVarP(&env, "env", "e", "", "environment id whose values hold the override data")
	f.StringSliceVarP(&level, "level", "l", nil, "level path, e.g. role=compute,nodes=7 or nodes=node-1.example.com (repeatable); global when omitted")
	f.StringVarP(&resource, "resource", "r", "", "resource (data source) name or id holding the override data")
	f.StringSliceVar(&knownTypes, "known-types", nil, "resource types that exist besides the catalog's, e.g. file,package,service: an override of any other type is an error")
	return cmd
}

// levelPath renders levels as the API's level path "name/value/...".
func levelPath(levels client.LevelPath) string {
	segs := make([]string, 0, 2*len(levels))
	for _, l := range levels {
		segs = append(segs, url.PathEscape(l.Name), url.PathEscape(l.Value))
	}
	return strings.Join(segs, "/")
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
	doc, err := puppetyaml.Decode(raw)
	if err != nil {
		return nil, usagef("%s is neither JSON nor YAML: %v", name, err)
	}
	return json.Marshal(doc)
}
