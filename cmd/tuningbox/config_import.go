package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
)

func newConfigImportCmd() *cobra.Command {
	var (
		env, node, level string
		dryRun           bool
	)
	cmd := &cobra.Command{
		Use:   "import --env ID --node FQDN [--level lvl=val,...] DIR",
		Short: "Upload every YAML file under a /etc/hiera-shaped directory into its data source at the node's level",
		Long: `Upload every YAML file under DIR (an /etc/hiera-shaped tree) into the data
source named by its path without the extension, at the node's level:
astute.yaml -> astute, globals.yaml -> globals, override/plugins.yaml ->
override/plugins, override/configuration/role.yaml -> override/configuration/role.

A file becomes a new version only when its content differs from the stored
document; unchanged files are skipped. --level names the levels before the
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
			levels, err := parseLevels(level)
			if err != nil {
				return err
			}
			levels = append(levels, levelPair{Name: nodesLevel, Value: node})
			if levels, err = resolveNodeLevels(cmd.Context(), c, levels); err != nil {
				return err
			}
			if _, err := c.do(cmd.Context(), request{Method: http.MethodGet, Path: configBase + "/environments/" + url.PathEscape(env)}); err != nil {
				return fmt.Errorf("environment %s: %w", env, err)
			}
			return importFiles(cmd.Context(), cmd.OutOrStdout(), c, env, levels, files, dryRun)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&env, "env", "e", "", "environment id (required)")
	f.StringVar(&node, "node", "", "FQDN (or id) of the node the files come from (required)")
	f.StringVarP(&level, "level", "l", "", "levels before the node's, e.g. role=controller")
	f.BoolVar(&dryRun, "dry-run", false, "only report what would be uploaded")
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

// importFiles uploads each file whose content differs from the stored
// document, reporting one line per file and a summary. Failures of single
// files do not stop the others; any failure makes the command fail.
func importFiles(ctx context.Context, w io.Writer, c *apiClient, env string, levels []levelPair, files []hieraFile, dryRun bool) error {
	var updated, unchanged, failed int
	verb := "updated"
	if dryRun {
		verb = "would update"
	}
	for _, f := range files {
		ref := docRef{Env: env, Levels: levels, Resource: f.Resource}
		changed, version, err := importFile(ctx, c, ref, f.Path, dryRun)
		switch {
		case err != nil:
			failed++
			fmt.Fprintf(w, "%-40s failed: %v\n", f.Resource, err)
		case changed && dryRun:
			updated++
			fmt.Fprintf(w, "%-40s %s\n", f.Resource, verb)
		case changed:
			updated++
			fmt.Fprintf(w, "%-40s %s (version %s)\n", f.Resource, verb, version)
		default:
			unchanged++
			fmt.Fprintf(w, "%-40s unchanged\n", f.Resource)
		}
	}
	fmt.Fprintf(w, "environment %s at %s: %d %s, %d unchanged, %d failed\n", env, formatLevels(levels), updated, verb, unchanged, failed)
	if failed > 0 {
		return fmt.Errorf("%d of %d files failed to import", failed, len(files))
	}
	return nil
}

// importFile uploads one file unless the stored document already has its
// content; it reports whether the content changed and the version written.
func importFile(ctx context.Context, c *apiClient, ref docRef, path string, dryRun bool) (bool, string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return false, "", err
	}
	doc, err := decodeYAML(data)
	if err != nil {
		return false, "", err
	}
	if doc == nil {
		doc = map[string]any{}
	}
	if _, ok := doc.(map[string]any); !ok {
		return false, "", errors.New("a Hiera data file must hold a mapping")
	}
	current, _, err := getDocument(ctx, c, ref, kindValues, 0)
	var apiErr *apiError
	if errors.As(err, &apiErr) && apiErr.Status == http.StatusNotFound {
		return false, "", fmt.Errorf("data source %s is not defined in environment %s (%s)", ref.Resource, ref.Env, apiErr.Message)
	}
	if err != nil {
		return false, "", err
	}
	if sameJSON(current, doc) {
		return false, "", nil
	}
	if dryRun {
		return true, "", nil
	}
	version, err := putDocument(ctx, c, ref, kindValues, doc)
	return true, version, err
}
