// Package envexport is the file format of one environment's export
// (tuningbox env export / env import): JSON lines, so that an environment of
// any size is written and read as a stream.
//
//	{"format":"tuningbox-env-export","version":2,"exported_at":...,"environment":{...},"nodes":[...],"cluster":{...},"deploy_templates":{...}}
//	{"document":{"component":...,"resource":...,"kind":...,"path":[...],"versions":[...]}}
//	...
//	{"end":{"documents":N,"versions":M}}
//
// The first line is the header: the format's name and version, the
// environment (configdb.EnvironmentExport: levels, components, definitions),
// its registered nodes (nodes.Node), what its cluster deploys with
// (graphs.ClusterExport: release, plugins and their graphs, the cluster's
// own graphs) and its deploy templates (templates.Export: default steps,
// the templates its nodes' traits name). Version 1 files, of the build
// before, hold neither of the last two and still import.
// Each document line holds one document with every version, its content
// included (configdb.DocumentHistory). The last line counts them: a file
// without it, or whose counts differ, was cut short. Read also takes the
// file gzip-compressed.
package envexport

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"slices"
	"time"

	"github.com/tuningbox/tuningbox/shared/configdb"
	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/graphs"
	"github.com/tuningbox/tuningbox/shared/nodes"
	"github.com/tuningbox/tuningbox/shared/store"
	"github.com/tuningbox/tuningbox/shared/templates"
)

const (
	// Format names the format in every header.
	Format = "tuningbox-env-export"
	// Version is the format version this build writes and the newest it
	// reads: 2 added the cluster and the deploy templates, which a build
	// reading version 1 would drop without a word.
	Version = 2
	// ContentType is the media type of the file.
	ContentType = "application/x-ndjson"
)

// Errors of Read (and of the document sequence it returns), each a 400: the
// file is not what an import needs.
var (
	ErrForeign   = errs.New(errs.Invalid, "not a tuningbox environment export (its first line must be a %q header)", Format)
	ErrNewer     = errs.New(errs.Invalid, "the export is of a newer format than this server reads (version %d); upgrade the server", Version)
	ErrTruncated = errs.New(errs.Invalid, "the export is cut short or damaged: export it again")
)

// Header is the file's first line.
type Header struct {
	Format      string                     `json:"format"`
	Version     int                        `json:"version"`
	ExportedAt  time.Time                  `json:"exported_at"`
	Environment configdb.EnvironmentExport `json:"environment"`
	// Nodes are the environment's registered nodes.
	Nodes []nodes.Node `json:"nodes"`
	// Cluster is what the environment's cluster deploys with (absent when
	// exported without the graphs service, and in version 1).
	Cluster *graphs.ClusterExport `json:"cluster,omitempty"`
	// DeployTemplates are the environment's default deploy steps and the
	// templates it can match (absent like Cluster).
	DeployTemplates *templates.Export `json:"deploy_templates,omitempty"`
}

// Services are what an export reads and an import writes: the ConfigDB, and
// the node registry, graphs and templates when not nil.
type Services struct {
	Config    *configdb.Service
	Nodes     *nodes.Service
	Graphs    *graphs.Service
	Templates *templates.Service
}

// End is the file's last line: what the lines before it hold.
type End struct {
	Documents int `json:"documents"`
	Versions  int `json:"versions"`
}

// line is every line after the header: one of its fields is set.
type line struct {
	Document *configdb.DocumentHistory `json:"document,omitempty"`
	End      *End                      `json:"end,omitempty"`
}

// Write writes the export of an environment (h's environment and nodes, stamped
// with h's ExportedAt) and its documents to w, and returns the counts of its
// last line. A failure of docs stops the file before its last line, so that
// no import takes it.
func Write(w io.Writer, h Header, docs iter.Seq2[configdb.DocumentHistory, error]) (End, error) {
	var end End
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := json.NewEncoder(bw)
	// Documents are stored as they were sent: HTML escaping would change their bytes.
	enc.SetEscapeHTML(false)
	h.Format, h.Version, h.ExportedAt = Format, Version, h.ExportedAt.UTC()
	if h.Nodes == nil {
		h.Nodes = []nodes.Node{}
	}
	if err := enc.Encode(h); err != nil {
		return end, err
	}
	for doc, err := range docs {
		if err != nil {
			return end, err
		}
		if err := enc.Encode(line{Document: &doc}); err != nil {
			return end, err
		}
		end.Documents++
		end.Versions += len(doc.Versions)
	}
	if err := enc.Encode(line{End: &end}); err != nil {
		return end, err
	}
	return end, bw.Flush()
}

// Read reads the header of an export from r and returns it (the environment
// and its nodes) with the documents, read from r as the sequence is ranged
// over. A file that is not an export is ErrForeign, one of a newer format
// ErrNewer, both before any document; a cut-short or damaged one ends the
// sequence with ErrTruncated (after the documents before the damage).
func Read(r io.Reader) (Header, iter.Seq2[configdb.DocumentHistory, error], error) {
	br := bufio.NewReaderSize(r, 64<<10)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return Header{}, nil, fmt.Errorf("%w: %w", ErrTruncated, err)
		}
		br = bufio.NewReaderSize(zr, 64<<10)
	}
	dec := json.NewDecoder(br)
	// The format and version first: a newer header may not decode as this one.
	var (
		raw json.RawMessage
		h   Header
	)
	if err := dec.Decode(&raw); err != nil || json.Unmarshal(raw, &struct {
		Format  *string `json:"format"`
		Version *int    `json:"version"`
	}{&h.Format, &h.Version}) != nil || h.Format != Format || h.Version < 1 {
		return Header{}, nil, ErrForeign
	}
	if h.Version > Version {
		return Header{}, nil, fmt.Errorf("%w: this file is version %d", ErrNewer, h.Version)
	}
	if err := json.Unmarshal(raw, &h); err != nil {
		return Header{}, nil, fmt.Errorf("%w: its header: %v", ErrTruncated, err)
	}
	docs := func(yield func(configdb.DocumentHistory, error) bool) {
		var seen End
		for {
			var l line
			if err := dec.Decode(&l); err != nil {
				yield(configdb.DocumentHistory{}, fmt.Errorf("%w: after %d documents: %w", ErrTruncated, seen.Documents, err))
				return
			}
			switch {
			case l.Document != nil:
				seen.Documents++
				seen.Versions += len(l.Document.Versions)
				if !yield(*l.Document, nil) {
					return
				}
			case l.End == nil:
				yield(configdb.DocumentHistory{}, fmt.Errorf("%w: line %d is neither a document nor the end", ErrTruncated, seen.Documents+2))
				return
			case *l.End != seen:
				yield(configdb.DocumentHistory{}, fmt.Errorf("%w: the end counts %d documents and %d versions, the file holds %d and %d", ErrTruncated, l.End.Documents, l.End.Versions, seen.Documents, seen.Versions))
				return
			default:
				if _, err := dec.Token(); err != io.EOF {
					yield(configdb.DocumentHistory{}, fmt.Errorf("%w: more follows its end", ErrTruncated))
				}
				return
			}
		}
	}
	return h, docs, nil
}

// Source reads environment envRef (id or UUID) for Write: the header, with
// what svc's services hold of the environment, stamped now, and the
// documents, read as they are ranged over.
func Source(ctx context.Context, svc Services, envRef string, now time.Time) (Header, iter.Seq2[configdb.DocumentHistory, error], error) {
	env, docs, err := svc.Config.ExportEnvironment(ctx, envRef)
	if err != nil {
		return Header{}, nil, err
	}
	h := Header{ExportedAt: now, Environment: env}
	if svc.Nodes != nil {
		if h.Nodes, err = svc.Nodes.InEnvironment(ctx, env.ID); err != nil {
			return Header{}, nil, err
		}
	}
	if svc.Graphs != nil {
		cluster, err := svc.Graphs.ExportCluster(ctx, env.ID)
		if err != nil {
			return Header{}, nil, err
		}
		h.Cluster = &cluster
	}
	if svc.Templates != nil {
		var traits []string
		for _, n := range h.Nodes {
			traits = append(traits, n.Traits...)
		}
		slices.Sort(traits)
		deploy, err := svc.Templates.ExportEnvironment(ctx, env.ID, slices.Compact(traits))
		if err != nil {
			return Header{}, nil, err
		}
		h.DeployTemplates = &deploy
	}
	return h, docs, nil
}

// Import reads an export from r and creates its environment with what it
// holds in svc's services, all or nothing (configdb.Service.ImportEnvironment
// with the ImportOps of nodes, graphs and templates). A part of the file
// whose service is nil is refused rather than dropped.
func Import(ctx context.Context, r io.Reader, svc Services) (configdb.Environment, configdb.ImportCounts, error) {
	h, docs, err := Read(r)
	if err != nil {
		return configdb.Environment{}, configdb.ImportCounts{}, err
	}
	switch {
	case svc.Nodes == nil && len(h.Nodes) > 0:
		return configdb.Environment{}, configdb.ImportCounts{}, errs.Invalidf("this import takes no nodes; the export holds %d", len(h.Nodes))
	case svc.Graphs == nil && h.Cluster != nil:
		return configdb.Environment{}, configdb.ImportCounts{}, errs.Invalidf("this import takes no deployment graphs; the export holds its cluster's")
	case svc.Templates == nil && h.DeployTemplates != nil:
		return configdb.Environment{}, configdb.ImportCounts{}, errs.Invalidf("this import takes no deploy templates; the export holds some")
	}
	stage := func(ctx context.Context, env configdb.Environment) (writes [][]store.Op, renamed map[string]string, err error) {
		if len(h.Nodes) > 0 {
			ops, renamedNodes, err := svc.Nodes.ImportOps(ctx, h.Nodes, nodes.Environment{ID: env.ID, UUID: env.UUID})
			if err != nil {
				return nil, nil, err
			}
			writes, renamed = slices.Collect(slices.Chunk(ops, store.MaxWriteBatch)), renamedNodes
		}
		if h.Cluster != nil {
			clusterWrites, err := svc.Graphs.ImportOps(ctx, *h.Cluster, env.ID)
			if err != nil {
				return nil, nil, err
			}
			writes = append(writes, clusterWrites...)
		}
		if h.DeployTemplates != nil {
			templateWrites, err := svc.Templates.ImportOps(ctx, *h.DeployTemplates, env.ID)
			if err != nil {
				return nil, nil, err
			}
			writes = append(writes, templateWrites...)
		}
		return writes, renamed, nil
	}
	return svc.Config.ImportEnvironment(ctx, h.Environment, docs, stage)
}
