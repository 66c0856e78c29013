package envexport_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/tuningbox/tuningbox/shared/app"
	"github.com/tuningbox/tuningbox/shared/app/server"
	"github.com/tuningbox/tuningbox/shared/configdb"
	"github.com/tuningbox/tuningbox/shared/envexport"
	"github.com/tuningbox/tuningbox/shared/graphs"
	"github.com/tuningbox/tuningbox/shared/graphs/planner"
	"github.com/tuningbox/tuningbox/shared/nodes"
	"github.com/tuningbox/tuningbox/shared/puppetyaml"
	"github.com/tuningbox/tuningbox/shared/store"
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

// deployedSource is a bbolt store holding file's environment (1) with what
// its cluster deploys with: its nodes registered (one per document, ids 1 to
// nodes, each with a trait), Fuel's release (testdata/fuel: its metadata
// and default, provision and deletion graphs), a plugin with a graph, a
// graph of the cluster's own, default deploy steps and a deploy template.
func deployedSource(b *testing.B, file []byte, nodeCount int) envexport.Services {
	b.Helper()
	ctx := context.Background()
	svc := appServices(b, openBolt(b))
	if _, _, err := envexport.Import(ctx, bytes.NewReader(file), svc); err != nil {
		b.Fatal(err)
	}
	for id := 1; id <= nodeCount; id++ {
		if _, err := svc.Nodes.Create(ctx, nodes.NewNode{ID: int64(id), FQDN: fmt.Sprintf("node-%d.example.com", id), Environment: "1",
			Roles: []string{"compute"}, Traits: []string{"CUSTOM_RAID"}}); err != nil {
			b.Fatal(err)
		}
	}
	var metadata planner.EntryMetadata
	yamlJSON(b, "release-metadata.yaml", &metadata)
	release, err := svc.Graphs.CreateEntry(ctx, graphs.Release, graphs.EntryInput{Name: "mitaka", Version: "9.0", EntryMetadata: metadata})
	if err != nil {
		b.Fatal(err)
	}
	for _, graphType := range []string{"default", "provision", "deletion"} {
		var tasks json.RawMessage
		yamlJSON(b, "tasks-"+graphType+".yaml", &tasks)
		if _, err := svc.Graphs.CreateGraph(ctx, graphs.Owner{Kind: graphs.Release, ID: release.ID}, graphType, graphs.GraphInput{Tasks: tasks}, false); err != nil {
			b.Fatal(err)
		}
	}
	plugin, err := svc.Graphs.CreateEntry(ctx, graphs.Plugin, graphs.EntryInput{Name: "ldap", Version: "3.0.0"})
	if err != nil {
		b.Fatal(err)
	}
	for owner, tasks := range map[graphs.Owner]string{
		{Kind: graphs.Plugin, ID: plugin.ID}: `[{"id":"ldap","type":"shell","requires":["netconfig"]}]`,
		{Kind: graphs.Cluster, ID: 1}:        `[{"id":"fixes","type":"shell","requires":["ldap"]}]`,
	} {
		if _, err := svc.Graphs.CreateGraph(ctx, owner, "default", graphs.GraphInput{Tasks: json.RawMessage(tasks)}, false); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := svc.Graphs.SetCluster(ctx, 1, graphs.ClusterInput{ReleaseID: &release.ID, Plugins: []int64{plugin.ID}}); err != nil {
		b.Fatal(err)
	}
	if _, err := svc.Templates.Create(ctx, []byte(`{"name":"CUSTOM_RAID","steps":[{"interface":"raid","step":"create_configuration","args":{},"priority":10}]}`)); err != nil {
		b.Fatal(err)
	}
	if _, err := svc.Templates.SetDefaults(ctx, 1, []byte(`{"steps":[{"interface":"deploy","step":"deploy_start","args":{},"priority":50}]}`)); err != nil {
		b.Fatal(err)
	}
	return svc
}

// yamlJSON decodes Fuel's file name (testdata/fuel/release) into v, through JSON.
func yamlJSON(b *testing.B, name string, v any) {
	b.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "fuel", "release", name))
	if err != nil {
		b.Fatal(err)
	}
	// As Fuel read it (Ruby's Psych: a repeated key keeps its last value).
	doc, err := puppetyaml.Decode(data)
	if err != nil {
		b.Fatal(err)
	}
	js, err := json.Marshal(doc)
	if err != nil {
		b.Fatal(err)
	}
	if err := json.Unmarshal(js, v); err != nil {
		b.Fatal(err)
	}
}

func appServices(b *testing.B, backend store.Backend) envexport.Services {
	b.Helper()
	cfg, err := app.LoadConfig(func(string) string { return "" })
	if err != nil {
		b.Fatal(err)
	}
	svc, err := server.EnvironmentServices(backend, cfg)
	if err != nil {
		b.Fatal(err)
	}
	return svc
}

// BenchmarkRoundTripDeployed1000Nodes is BenchmarkRoundTrip1000Nodes with
// what the environment's cluster deploys with (deployedSource), through the
// services the server builds: the file's bytes (gzip-compressed too), and
// the seconds of an import into a fresh bbolt store and of its export.
func BenchmarkRoundTripDeployed1000Nodes(b *testing.B) {
	const nodeCount, versions = 1000, 10
	source := deployedSource(b, benchExport(b, nodeCount, versions), nodeCount)
	file := exportOf(b, source, time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC))
	var importTime, exportTime time.Duration
	for b.Loop() {
		target := appServices(b, openBolt(b))
		start := time.Now()
		_, counts, err := envexport.Import(context.Background(), bytes.NewReader(file), target)
		if err != nil {
			b.Fatal(err)
		}
		importTime += time.Since(start)
		if counts != (configdb.ImportCounts{Documents: nodeCount, Versions: nodeCount * versions}) {
			b.Fatalf("imported %+v", counts)
		}
		start = time.Now()
		again := exportOf(b, target, exportedAt(b, file))
		exportTime += time.Since(start)
		if !bytes.Equal(again, file) {
			b.Fatal("the round trip changed the export")
		}
	}
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	zw.Write(file)
	zw.Close()
	b.ReportMetric(nodeCount, "documents")
	b.ReportMetric(nodeCount*versions, "versions")
	b.ReportMetric(float64(len(file)), "file-bytes")
	b.ReportMetric(float64(zipped.Len()), "gzip-bytes")
	b.ReportMetric(importTime.Seconds()/float64(b.N), "import-s/op")
	b.ReportMetric(exportTime.Seconds()/float64(b.N), "export-s/op")
}

func exportOf(b *testing.B, svc envexport.Services, at time.Time) []byte {
	b.Helper()
	h, docs, err := envexport.Source(context.Background(), svc, "1", at)
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := envexport.Write(&buf, h, docs); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}
