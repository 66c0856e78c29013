// Package envexport is the file format of one environment's export
// (tuningbox env export / env import): JSON lines, so that an environment of
// any size is written and read as a stream.
//
//	{"format":"tuningbox-env-export","version":1,"exported_at":...,"environment":{...}}
//	{"document":{"component":...,"resource":...,"kind":...,"path":[...],"versions":[...]}}
//	...
//	{"end":{"documents":N,"versions":M}}
//
// The first line is the header: the format's name and version, and the
// environment (configdb.EnvironmentExport: levels, components, definitions).
// Each document line holds one document with every version, its content
// included (configdb.DocumentHistory). The last line counts them: a file
// without it, or whose counts differ, was cut short. Read also takes the
// file gzip-compressed.
package envexport

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"time"

	"github.com/tuningbox/tuningbox/shared/configdb"
	"github.com/tuningbox/tuningbox/shared/errs"
)

const (
	// Format names the format in every header.
	Format = "tuningbox-env-export"
	// Version is the format version this build writes and the newest it reads.
	Version = 1
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

// Write writes the export of env and its documents to w, stamped now, and
// returns the counts of its last line. A failure of docs stops the file
// before its last line, so that no import takes it.
func Write(w io.Writer, env configdb.EnvironmentExport, docs iter.Seq2[configdb.DocumentHistory, error], now time.Time) (End, error) {
	var end End
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := json.NewEncoder(bw)
	// Documents are stored as they were sent: HTML escaping would change their bytes.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(Header{Format: Format, Version: Version, ExportedAt: now.UTC(), Environment: env}); err != nil {
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

// Read reads the header of an export from r and returns the environment and
// its documents, read from r as the sequence is ranged over. A file that is
// not an export is ErrForeign, one of a newer format ErrNewer, both before
// any document; a cut-short or damaged one ends the sequence with
// ErrTruncated (after the documents before the damage).
func Read(r io.Reader) (configdb.EnvironmentExport, iter.Seq2[configdb.DocumentHistory, error], error) {
	br := bufio.NewReaderSize(r, 64<<10)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return configdb.EnvironmentExport{}, nil, fmt.Errorf("%w: %w", ErrTruncated, err)
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
		return configdb.EnvironmentExport{}, nil, ErrForeign
	}
	if h.Version > Version {
		return configdb.EnvironmentExport{}, nil, fmt.Errorf("%w: this file is version %d", ErrNewer, h.Version)
	}
	if err := json.Unmarshal(raw, &h); err != nil {
		return configdb.EnvironmentExport{}, nil, fmt.Errorf("%w: its header: %v", ErrTruncated, err)
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
	return h.Environment, docs, nil
}
