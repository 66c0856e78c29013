package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tuningbox/tuningbox/client"
)

// registryColumns are what release and plugin tables show; before
// microversion 1.2 "id" is the integer id and "uuid" the UUID, from 1.2 on "id" is the UUID.
var registryColumns = []string{"id", "uuid", "name", "version"}

// releaseMetadataFields are the fields of a release metadata file (Fuel's
// release-metadata.yaml) that `release create --metadata` sends.
var releaseMetadataFields = []string{"roles_metadata", "tags_metadata", "deployment_info_resource"}

// registryKind is what the release and plugin commands differ in.
type registryKind struct {
	owner string      // client.Releases or client.Plugins
	kind  client.Kind // for resolving names
	name  string      // "release" or "plugin"
}

var (
	releaseKind = registryKind{owner: client.Releases, kind: client.KindRelease, name: "release"}
	pluginKind  = registryKind{owner: client.Plugins, kind: client.KindPlugin, name: "plugin"}
)

func newReleaseCmd() *cobra.Command { return newRegistryCmd(releaseKind) }
func newPluginCmd() *cobra.Command  { return newRegistryCmd(pluginKind) }

func newRegistryCmd(k registryKind) *cobra.Command {
	cmd := &cobra.Command{
		Use:   k.name,
		Short: fmt.Sprintf("Manage %ss: what deployment graphs belong to", k.name),
		Long: fmt.Sprintf(`Manage %[1]ss. A %[1]s is named by its id, its UUID, name-version
(e.g. mitaka-9.0) or its name alone when only one version is registered.
Its graphs are managed with tuningbox graph (-%[2]s); an environment's %[1]s is
set with tuningbox env update --%[1]s.`, k.name, k.name[:1]),
	}
	cmd.SetFlagErrorFunc(flagError)
	cmd.AddCommand(newRegistryCreateCmd(k), newRegistryListCmd(k), newRegistryShowCmd(k), newRegistryUpdateCmd(k), newRegistryDeleteCmd(k))
	return cmd
}

func newRegistryCreateCmd(k registryKind) *cobra.Command {
	var name, version, metadata, format string
	use := "create --name NAME --version VERSION"
	if k == releaseKind {
		use += " [--metadata FILE]"
	}
	cmd := &cobra.Command{
		Use:   use,
		Short: "Register a " + k.name,
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if name == "" || version == "" {
				return usagef("--name and --version are required")
			}
			body := map[string]any{"name": name, "version": version}
			if metadata != "" {
				fields, err := readReleaseMetadata(cmd, metadata)
				if err != nil {
					return err
				}
				maps.Copy(body, fields)
			}
			c, err := newAPIClient()
			if err != nil {
				return err
			}
			raw, err := c.CreateRegistryEntry(cmd.Context(), k.owner, body)
			if err != nil {
				return err
			}
			return renderEntry(cmd, format, raw)
		},
	}
	f := cmd.Flags()
	f.StringVar(&name, "name", "", "name, e.g. mitaka (required)")
	f.StringVar(&version, "version", "", "version, e.g. 9.0 (required)")
	if k == releaseKind {
		f.StringVar(&metadata, "metadata", "", "YAML or JSON file with roles_metadata and tags_metadata (Fuel's release-metadata.yaml); - for standard input")
	}
	addListFormat(cmd, &format)
	return cmd
}

// namedEntry reads the release or plugin a user named (id, UUID, name-version
// or name), with the client and the reference the microversion takes.
func namedEntry(cmd *cobra.Command, k registryKind, name string) (*client.Client, string, []byte, error) {
	c, err := newAPIClient()
	if err != nil {
		return nil, "", nil, err
	}
	ref, err := c.Ref(cmd.Context(), k.kind, name)
	if err != nil {
		return nil, "", nil, err
	}
	raw, err := c.RegistryEntry(cmd.Context(), k.owner, ref)
	return c, ref, raw, err
}

// renderEntry prints a release or a plugin as the server answered it.
func renderEntry(cmd *cobra.Command, format string, raw []byte) error {
	v, err := decodeJSON(raw)
	if err != nil {
		return err
	}
	return renderObject(cmd.OutOrStdout(), format, v, registryColumns)
}

// readReleaseMetadata reads the roles_metadata and tags_metadata of a release metadata file.
func readReleaseMetadata(cmd *cobra.Command, file string) (map[string]any, error) {
	v, err := readValue(cmd.InOrStdin(), file)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, usagef("%s: want a mapping with %s", file, strings.Join(releaseMetadataFields, " and "))
	}
	fields := map[string]any{}
	for _, name := range releaseMetadataFields {
		if value, ok := m[name]; ok {
			fields[name] = value
		}
	}
	if len(fields) == 0 {
		return nil, usagef("%s has neither %s", file, strings.Join(releaseMetadataFields, " nor "))
	}
	return fields, nil
}

func newRegistryUpdateCmd(k registryKind) *cobra.Command {
	var name, version, metadata, format string
	cmd := &cobra.Command{
		Use:   "update ID|UUID|NAME [--name NAME] [--version VERSION] [--metadata FILE]",
		Short: "Change a " + k.name + "'s name, version or role metadata",
		Long: `Change a ` + k.name + `: the options given replace the name, the version or
the metadata (roles_metadata, tags_metadata, deployment_info_resource of
FILE, each replaced whole); the rest stays as it is.`,
		Args: exactArgs("ID|UUID|NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if name == "" && version == "" && metadata == "" {
				return usagef("nothing to change: give --name, --version or --metadata")
			}
			c, ref, raw, err := namedEntry(cmd, k, args[0])
			if err != nil {
				return err
			}
			var body map[string]any
			if err := json.Unmarshal(raw, &body); err != nil {
				return err
			}
			delete(body, "id")
			delete(body, "uuid")
			for field, value := range map[string]string{"name": name, "version": version} {
				if value != "" {
					body[field] = value
				}
			}
			if metadata != "" {
				fields, err := readReleaseMetadata(cmd, metadata)
				if err != nil {
					return err
				}
				maps.Copy(body, fields)
			}
			if raw, err = c.UpdateRegistryEntry(cmd.Context(), k.owner, ref, body); err != nil {
				return err
			}
			return renderEntry(cmd, format, raw)
		},
	}
	f := cmd.Flags()
	f.StringVar(&name, "name", "", "new name")
	f.StringVar(&version, "version", "", "new version")
	f.StringVar(&metadata, "metadata", "", "YAML or JSON file with roles_metadata, tags_metadata or deployment_info_resource; - for standard input")
	addListFormat(cmd, &format)
	return cmd
}

func newRegistryListCmd(k registryKind) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List " + k.owner,
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := newAPIClient()
			if err != nil {
				return err
			}
			raws, err := c.RegistryEntries(cmd.Context(), k.owner)
			if err != nil {
				return err
			}
			items := make([]any, len(raws))
			for i, raw := range raws {
				if items[i], err = decodeJSON(raw); err != nil {
					return err
				}
			}
			return renderObjects(cmd.OutOrStdout(), format, items, registryColumns)
		},
	}
	addListFormat(cmd, &format)
	return cmd
}

func newRegistryShowCmd(k registryKind) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "show ID|UUID|NAME",
		Short: "Show a " + k.name,
		Args:  exactArgs("ID|UUID|NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, _, raw, err := namedEntry(cmd, k, args[0])
			if err != nil {
				return err
			}
			v, err := decodeJSON(raw)
			if err != nil {
				return err
			}
			fields := registryColumns
			if m, ok := v.(map[string]any); ok && format == formatTable {
				fields = registryFields(m)
			}
			return renderObject(cmd.OutOrStdout(), format, v, fields)
		},
	}
	addListFormat(cmd, &format)
	return cmd
}

// registryFields are the fields `show` prints: the usual columns, then
// whatever else the server sends (a release's metadata), in name order.
func registryFields(m map[string]any) []string {
	fields := append([]string{}, registryColumns...)
	for _, name := range slices.Sorted(maps.Keys(m)) {
		if !slices.Contains(registryColumns, name) {
			fields = append(fields, name)
		}
	}
	return fields
}

func newRegistryDeleteCmd(k registryKind) *cobra.Command {
	return &cobra.Command{
		Use:   "delete ID|UUID|NAME",
		Short: "Delete a " + k.name + " and its graphs",
		Args:  exactArgs("ID|UUID|NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return deleteObject(cmd, k.name+" "+args[0], func(c *client.Client) error {
				ref, err := c.Ref(cmd.Context(), k.kind, args[0])
				if err != nil {
					return err
				}
				return c.DeleteRegistryEntry(cmd.Context(), k.owner, ref)
			})
		},
	}
}
