package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tuningbox/tuningbox/client"
	"github.com/tuningbox/tuningbox/shared/puppetyaml"
)

func newConfigImportCmd() *cobra.Command {
	var (
		env, node string
		level     []string
		dryRun    bool
	)
	cmd := &cobra.Command{
		Use:   "import --env ID --node FQDN [--level lvl=val,...] DIR",
		Short: "Upload every YAML file under a /etc/hiera-shaped directory into its data source at the node's level",
		Long: `Upload every YAML file under DIR (an /etc/hiera-shaped tree) into the data
source named by its path without the extension, at the node's level:
astute.yaml -> astute, globals.yaml -> globals, override/plugins.yaml ->
override/plugins, override/configuration/role.yaml -> override/configuration/role.

Per-key files follow the Hiera backend's split: override/class/<class>.yaml
becomes key <class> of data source override/class (when override/class is a
data source of the environment and override/class/<class> is not); so does
Fuel's per-FQDN override/node/<fqdn>.yaml, key <fqdn> of override/node.

A warning names every file the hierarchy of puppet/tuningbox/README.md would
not read: a data source it does not list, or a per-key file of a data source
it reads whole (override/node/<fqdn>.yaml: that hierarchy reads the node's own
override/node, from override/node.yaml; the README shows the per-FQDN
alternative).

A data source becomes a new version only when its content differs from the
stored document; unchanged ones are skipped. --level names the levels before the
node when the environment has more than one (e.g. role=controller).
Each data source must be defined in a component of the environment.`,
		Args: exactArgs("DIR"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if env == "" || node == "" {
				return usagef("--env and --node are required")
			}
			files, err := hieraFiles(args[0])
			if err != nil {
				return err
			}
			c, err := newAPIClient()
			if err != nil {
				return err
			}
			levels, err := parseLevels(strings.Join(level, ","))
			if err != nil {
				return err
			}
			levels = append(levels, client.LevelValue{Name: nodesLevel, Value: node})
			envRef, err := c.Ref(cmd.Context(), client.KindEnvironment, env)
			if err != nil {
				return err
			}
			return importFiles(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), c, envRef, levels, files, dryRun)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&env, "env", "e", "", "environment id (required)")
	f.StringVar(&node, "node", "", "FQDN (or id) of the node the files come from (required)")
	f.StringSliceVarP(&level, "level", "l", nil, "levels before the node's, e.g. role=controller (repeatable)")
	f.BoolVar(&dryRun, "dry-run", false, "store nothing: report what would be uploaded and how each affected node's effective document would change")
	return cmd
}

// hieraFile is one YAML file of the tree and the data source it goes to.
type hieraFile struct {
	Path     string
	Resource string
}

// hieraFiles lists the .yaml and .yml files under dir (symlinked files
// included, as /etc/hiera/astute.yaml usually is), sorted by data source.
// Hidden files and directories are skipped.
func hieraFiles(dir string) ([]hieraFile, error) {
	var files []hieraFile
	seen := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if path != dir && strings.HasPrefix(name, ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		ext := filepath.Ext(name)
		if d.IsDir() || (ext != ".yaml" && ext != ".yml") {
			return nil
		}
		if info, err := os.Stat(path); err != nil || !info.Mode().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		resource := filepath.ToSlash(strings.TrimSuffix(rel, ext))
		if other, dup := seen[resource]; dup {
			return fmt.Errorf("%s and %s both map to data source %s", other, rel, resource)
		}
		seen[resource] = rel
		files = append(files, hieraFile{Path: path, Resource: resource})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, usagef("no .yaml files under %s", dir)
	}
	slices.SortFunc(files, func(a, b hieraFile) int { return strings.Compare(a.Resource, b.Resource) })
	return files, nil
}

// definedSources lists the data sources (resource definition names) of the
// environment's components.
func definedSources(ctx context.Context, c *client.Client, env string) (map[string]bool, error) {
	environment, err := c.Environment(ctx, env)
	if err != nil {
		return nil, fmt.Errorf("environment %s: %w", env, err)
	}
	defined := map[string]bool{}
	for _, id := range environment.Components {
		component, err := c.Component(ctx, string(id))
		if err != nil {
			return nil, fmt.Errorf("component %v of environment %s: %w", id, env, err)
		}
		for _, d := range component.ResourceDefinitions {
			defined[d.Name] = true
		}
	}
	return defined, nil
}

// upload is the document of one data source and the files it is made of.
type upload struct {
	resource string
	// whole is the file holding the whole document ("" when none).
	whole string
	// keyed maps a top-level key to the file holding its value: Fuel kept
	// per-node, per-class and per-module data as override/node/<fqdn>.yaml,
	// and the Hiera backend's split reads it as key <fqdn> of override/node.
	keyed map[string]string
}

// planUploads groups files into data sources. A file D/N.yaml goes to key N
// of data source D when D/N is not a data source of the environment but D is;
// every other file is the whole document of the data source its path names.
func planUploads(files []hieraFile, defined map[string]bool) []*upload {
	byResource := map[string]*upload{}
	var uploads []*upload
	get := func(resource string) *upload {
		u, ok := byResource[resource]
		if !ok {
			u = &upload{resource: resource, keyed: map[string]string{}}
			byResource[resource] = u
			uploads = append(uploads, u)
		}
		return u
	}
	for _, f := range files {
		if dir, key, ok := cutLast(f.Resource); ok && !defined[f.Resource] && defined[dir] {
			get(dir).keyed[key] = f.Path
			continue
		}
		get(f.Resource).whole = f.Path
	}
	slices.SortFunc(uploads, func(a, b *upload) int { return strings.Compare(a.resource, b.resource) })
	return uploads
}

func cutLast(resource string) (dir, key string, ok bool) {
	i := strings.LastIndex(resource, "/")
	if i < 0 {
		return "", "", false
	}
	return resource[:i], resource[i+1:], true
}

// document reads the upload's files into one document.
func (u *upload) document() (map[string]any, error) {
	doc := map[string]any{}
	if u.whole != "" {
		var err error
		if doc, err = readHieraFile(u.whole); err != nil {
			return nil, err
		}
	}
	for _, key := range slices.Sorted(maps.Keys(u.keyed)) {
		file := u.keyed[key]
		if _, dup := doc[key]; dup {
			return nil, fmt.Errorf("key %q is both in %s and in %s", key, u.whole, file)
		}
		v, err := readHieraFile(file)
		if err != nil {
			return nil, err
		}
		doc[key] = v
	}
	return doc, nil
}

// readHieraFile reads a Hiera data file: a YAML mapping, or nothing.
func readHieraFile(path string) (map[string]any, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	v, err := puppetyaml.Decode(data)
	if e := (*puppetyaml.Error)(nil); errors.As(err, &e) && e.Line > 0 {
		return nil, fmt.Errorf("%s:%d: %s", path, e.Line, e.Msg)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if v == nil {
		return map[string]any{}, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: a Hiera data file must hold a mapping", path)
	}
	return m, nil
}

// importFiles uploads each data source whose content differs from the stored
// document, reporting one line per data source and a summary, and warns on
// warn about every file the recommended Hiera hierarchy would not read.
// Failures of single data sources do not stop the others; any failure makes
// the command fail.
func importFiles(ctx context.Context, w, warn io.Writer, c *client.Client, env string, levels client.LevelPath, files []hieraFile, dryRun bool) error {
	defined, err := definedSources(ctx, c, env)
	if err != nil {
		return err
	}
	uploads := planUploads(files, defined)
	warnUnread(warn, uploads)
	var updated, unchanged, failed int
	verb := "updated"
	if dryRun {
		verb = "would update"
	}
	for _, u := range uploads {
		ref := client.DocumentRef{Environment: env, Levels: levels, Resource: u.resource}
		var dry io.Writer
		if dryRun {
			dry = w
		}
		changed, version, err := importUpload(ctx, c, ref, u, defined, dry)
		if errors.Is(err, client.ErrNotFound) {
			// Data sources were checked above: the environment or the node is unknown, for every file.
			return err
		}
		switch {
		case err != nil:
			failed++
			fmt.Fprintf(w, "%-40s failed: %v\n", u.resource, err)
		case changed && dryRun:
			updated++
			fmt.Fprintf(w, "%-40s %s\n", u.resource, verb)
		case changed:
			updated++
			fmt.Fprintf(w, "%-40s %s (version %d)\n", u.resource, verb, version)
		default:
			unchanged++
			fmt.Fprintf(w, "%-40s unchanged\n", u.resource)
		}
	}
	fmt.Fprintf(w, "environment %s at %s: %d %s, %d unchanged, %d failed\n", env, levels, updated, verb, unchanged, failed)
	if failed > 0 {
		return fmt.Errorf("%d of %d data sources failed to import", failed, len(uploads))
	}
	return nil
}

// importUpload writes one data source unless the stored document already has
// its content; it reports whether the content changed and the version written.
// A dry run (dry not nil) stores nothing and prints the server's preview to dry.
func importUpload(ctx context.Context, c *client.Client, ref client.DocumentRef, u *upload, defined map[string]bool, dry io.Writer) (bool, int, error) {
	if !defined[u.resource] {
		return false, 0, fmt.Errorf("data source %s is not defined in environment %s", u.resource, ref.Environment)
	}
	doc, err := u.document()
	if err != nil {
		return false, 0, err
	}
	current, err := getDocument(ctx, c, ref, kindValues, 0)
	if err != nil {
		return false, 0, err
	}
	if sameJSON(current, doc) {
		return false, 0, nil
	}
	version, err := putDocument(ctx, c, ref, kindValues, doc, dry)
	return true, version, err
}
