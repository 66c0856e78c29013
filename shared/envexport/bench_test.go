package envexport_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/tuningbox/tuningbox/shared/configdb"
	"github.com/tuningbox/tuningbox/shared/envexport"
)

// benchExport is the export of an environment of nodes nodes, each with one
// values document of versions versions (about 1 KB each, each version
// changing a few keys), written by an operator a minute apart.
func benchExport(b *testing.B, nodes, versions int) []byte {
	b.Helper()
	env := configdb.EnvironmentExport{ID: 1, UUID: "6f1c2a52-3c35-4d0f-9f7e-2f4f4c7d9a10", Levels: []string{"nodes"},
		Components: []configdb.ExportedComponent{{Name: "fuel", Definitions: []configdb.ExportedDefinition{{Name: "astute", Content: json.RawMessage(`{}`)}}}}}
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	// In the order an export lists them: by level value, as text.
	ids := make([]string, nodes)
	for n := range ids {
		ids[n] = strconv.Itoa(n + 1)
	}
	slices.Sort(ids)
	docs := func(yield func(configdb.DocumentHistory, error) bool) {
		for _, id := range ids {
			doc := configdb.DocumentHistory{Component: "fuel", Resource: "astute", Kind: configdb.Values, Path: []string{id}}
			for v := range versions {
				fields := map[string]any{"fqdn": "node-" + id + ".example.com", "deployment_id": v, "debug": v%2 == 0}
				for k := range 24 {
					fields[fmt.Sprintf("setting_%02d", k)] = fmt.Sprintf("value-%d-%d", k, (v+k)/4)
				}
				content, err := json.Marshal(fields)
				if err != nil {
					b.Fatal(err)
				}
				sum := sha256.Sum256(content)
				at = at.Add(time.Minute)
				doc.Versions = append(doc.Versions, configdb.VersionContent{Content: content, Version: configdb.Version{
					Version: v + 1, CreatedAt: at, Size: int64(len(content)), SHA256: hex.EncodeToString(sum[:]),
					WrittenBy: &configdb.Writer{Principal: "ops", Role: "admin", RequestID: fmt.Sprintf("req-%s-%d", id, v), Time: at},
				}})
			}
			if !yield(doc, nil) {
				return
			}
		}
	}
	var buf bytes.Buffer
	if _, err := envexport.Write(&buf, envexport.Header{ExportedAt: at, Environment: env}, docs); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

// BenchmarkRoundTrip1000Nodes imports an environment of 1,000 nodes with 10
// versions of each node's document into a fresh bbolt store, exports it
// again and checks the two files are the same: documents, versions and bytes
// of the file, and the seconds each way.
func BenchmarkRoundTrip1000Nodes(b *testing.B) {
	const nodes, versions = 1000, 10
	file := benchExport(b, nodes, versions)
	var importTime, exportTime time.Duration
	for b.Loop() {
		backend := openBolt(b)
		svc := configdb.NewService(backend.Index, backend.Blobs)
		start := time.Now()
		env, counts, err := envexport.Import(context.Background(), bytes.NewReader(file), envexport.Services{Config: svc})
		if err != nil {
			b.Fatal(err)
		}
		importTime += time.Since(start)
		if counts != (configdb.ImportCounts{Documents: nodes, Versions: nodes * versions}) {
			b.Fatalf("imported %+v", counts)
		}
		start = time.Now()
		h, docs, err := envexport.Source(context.Background(), envexport.Services{Config: svc}, strconv.FormatInt(env.ID, 10), exportedAt(b, file))
		if err != nil {
			b.Fatal(err)
		}
		var again bytes.Buffer
		if _, err := envexport.Write(&again, h, docs); err != nil {
			b.Fatal(err)
		}
		exportTime += time.Since(start)
		if !bytes.Equal(again.Bytes(), file) {
			b.Fatal("the round trip changed the export")
		}
	}
	b.ReportMetric(nodes, "documents")
	b.ReportMetric(nodes*versions, "versions")
	b.ReportMetric(float64(len(file)), "file-bytes")
	b.ReportMetric(importTime.Seconds()/float64(b.N), "import-s/op")
	b.ReportMetric(exportTime.Seconds()/float64(b.N), "export-s/op")
}

// exportedAt is the time in the header of file, so that an export made
// again can be compared byte for byte.
func exportedAt(b *testing.B, file []byte) time.Time {
	var h envexport.Header
	if err := json.Unmarshal(file[:bytes.IndexByte(file, '\n')], &h); err != nil {
		b.Fatal(err)
	}
	return h.ExportedAt
}
