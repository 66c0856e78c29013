package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/tuningbox/tuningbox/shared/httpapi/routes"
)

// operation is one operation of the API's OpenAPI document.
type operation struct {
	id, method, path string
	// statuses are the statuses the document declares for it (its success answers).
	statuses []int
	// embeddedOnly: only the embedded store serves it (routes.EmbeddedOnlyExtension).
	embeddedOnly bool
}

// operations are the document's operations, found for a request as the
// server finds them: by the route table's matcher (routes.Find), whose route
// ids are the document's operation ids.
type operations struct {
	all  []operation
	byID map[string]int // operation id -> index in all
}

// loadOperations reads the OpenAPI document (as GET /api/v1/openapi.json serves it).
func loadOperations(file string) (*operations, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Paths map[string]map[string]struct {
			OperationID  string                     `json:"operationId"`
			Responses    map[string]json.RawMessage `json:"responses"`
			EmbeddedOnly bool                       `json:"x-tuningbox-embedded-only"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	ops := &operations{byID: map[string]int{}}
	for path, item := range doc.Paths {
		for method, o := range item {
			op := operation{id: o.OperationID, method: strings.ToUpper(method), path: path, embeddedOnly: o.EmbeddedOnly}
			for code := range o.Responses {
				if status, err := strconv.Atoi(code); err == nil {
					op.statuses = append(op.statuses, status)
				}
			}
			ops.byID[op.id] = len(ops.all)
			ops.all = append(ops.all, op)
		}
	}
	return ops, nil
}

// find returns the index of the operation a request of method on target (the
// escaped path and its query, which tells an effective read from a plain
// one) takes, -1 for none.
func (o *operations) find(method, target string) int {
	r, err := http.NewRequest(method, "http://gateway"+target, nil)
	if err != nil {
		return -1
	}
	m, ok := routes.Find(r)
	if !ok {
		return -1
	}
	if i, ok := o.byID[m.ID]; ok {
		return i
	}
	return -1
}

// answerLine is how a gateway logs an answer of a function to the routes log:
// "STATUS METHOD TARGET" (the escaped path, without the REST API's stage, and
// its query).
func answerLine(status int, method, target string) string {
	return fmt.Sprintf("%d %s %s", status, method, target)
}

// printCoverage prints "gateway: N of M operations": the operations of the
// OpenAPI document that one of the logged answers took with a status the
// document declares for it, of those a route of the template reaches (the
// stack routes no GET /metrics: the others are named). It fails unless
// every such operation was, or when a route of the template reaches no
// operation.
func printCoverage(templatePath, openAPIPath, routesLog string) error {
	a, err := loadAPI(templatePath, "table", "bucket", nil)
	if err != nil {
		return err
	}
	ops, err := loadOperations(openAPIPath)
	if err != nil {
		return err
	}
	covered := make([]bool, len(ops.all))
	seen := make([]map[int]bool, len(ops.all)) // the statuses each operation answered
	if f, err := os.Open(routesLog); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) != 3 {
				continue
			}
			status, _ := strconv.Atoi(fields[0])
			i := ops.find(fields[1], fields[2])
			if i < 0 {
				continue
			}
			if seen[i] == nil {
				seen[i] = map[int]bool{}
			}
			seen[i][status] = true
			covered[i] = covered[i] || slices.Contains(ops.all[i].statuses, status)
		}
		f.Close()
	}
	// The operations the template routes, and the routes that reach one.
	routed := make([]bool, len(ops.all))
	reached := map[*route]bool{}
	var unrouted []string
	var embedded []string
	for i, op := range ops.all {
		if op.embeddedOnly {
			embedded = append(embedded, op.id)
			continue
		}
		if rt, _ := a.match(op.method, strings.NewReplacer("{", "", "}", "").Replace(op.path)); rt != nil {
			routed[i], reached[rt] = true, true
		} else {
			unrouted = append(unrouted, op.id)
		}
	}
	var problems []string
	n, m := 0, 0
	for i, op := range ops.all {
		if !routed[i] {
			continue
		}
		m++
		if covered[i] {
			n++
			continue
		}
		var got []int
		for s := range seen[i] {
			got = append(got, s)
		}
		slices.Sort(got)
		problems = append(problems, fmt.Sprintf("%s (%s %s) never answered %v (answered %v)", op.id, op.method, op.path, op.statuses, got))
	}
	// Every route of the template must reach an operation.
	for _, rt := range a.routes {
		if !reached[rt] {
			problems = append(problems, "template route "+rt.key+" reaches no operation")
		}
	}
	slices.Sort(problems)
	slices.Sort(unrouted)
	fmt.Printf("gateway: %d of %d operations (%d template routes; not routed by the template: %v; the embedded store's only: %v)\n", n, m, len(a.routes), unrouted, embedded)
	if len(problems) > 0 {
		return fmt.Errorf("%d problems:\n  %s", len(problems), strings.Join(problems, "\n  "))
	}
	return nil
}
