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
)

// The OpenAPI extensions of the served document (shared/httpapi/routes):
// a parameter that spans several path segments, and an operation also
// served with a trailing slash.
const (
	multiSegmentExtension  = "x-tuningbox-multi-segment"
	trailingSlashExtension = "x-tuningbox-trailing-slash"
)

// operation is one operation of the API's OpenAPI document.
type operation struct {
	id, method, path string
	// statuses are the statuses the document declares for it (its success answers).
	statuses []int
}

// operations route requests to the document's operations as the server
// routes them: http.ServeMux patterns built back from the document's paths.
type operations struct {
	all       []operation
	byPattern map[string]int // mux pattern -> index in all
	mux       *http.ServeMux
}

// loadOperations reads the OpenAPI document (as GET /api/v1/openapi.json serves it).
func loadOperations(file string) (*operations, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Paths map[string]map[string]struct {
			OperationID string `json:"operationId"`
			Parameters  []struct {
				Name         string `json:"name"`
				In           string `json:"in"`
				MultiSegment bool   `json:"x-tuningbox-multi-segment"`
			} `json:"parameters"`
			TrailingSlash bool                       `json:"x-tuningbox-trailing-slash"`
			Responses     map[string]json.RawMessage `json:"responses"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	ops := &operations{byPattern: map[string]int{}, mux: http.NewServeMux()}
	for path, item := range doc.Paths {
		for method, o := range item {
			op := operation{id: o.OperationID, method: strings.ToUpper(method), path: path}
			for code := range o.Responses {
				if status, err := strconv.Atoi(code); err == nil {
					op.statuses = append(op.statuses, status)
				}
			}
			pattern := path
			for _, p := range o.Parameters {
				if p.In == "path" && p.MultiSegment {
					pattern = strings.Replace(pattern, "{"+p.Name+"}", "{"+p.Name+"...}", 1)
				}
			}
			patterns := []string{op.method + " " + pattern}
			if o.TrailingSlash {
				patterns = append(patterns, op.method+" "+pattern+"/{$}")
			}
			for _, p := range patterns {
				ops.byPattern[p] = len(ops.all)
				ops.mux.HandleFunc(p, func(http.ResponseWriter, *http.Request) {})
			}
			ops.all = append(ops.all, op)
		}
	}
	return ops, nil
}

// find returns the index of the operation a request of method on the escaped path takes, -1 for none.
func (o *operations) find(method, escapedPath string) int {
	r, err := http.NewRequest(method, "http://gateway"+escapedPath, nil)
	if err != nil {
		return -1
	}
	_, pattern := o.mux.Handler(r)
	if i, ok := o.byPattern[pattern]; ok {
		return i
	}
	return -1
}

// answerLine is how a gateway logs an answer of a function to the routes log:
// "STATUS METHOD PATH" (the escaped path, without the REST API's stage).
func answerLine(status int, method, escapedPath string) string {
	return fmt.Sprintf("%d %s %s", status, method, escapedPath)
}

// printCoverage prints "gateway: N of M operations": the operations of the
// OpenAPI document that one of the logged answers took with a status the
// document declares for it. It fails unless every operation was, or when a
// route of the template reaches no operation.
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
	var problems []string
	n := 0
	for i, op := range ops.all {
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
	reached := map[*route]bool{}
	for _, op := range ops.all {
		if rt, _ := a.match(op.method, strings.NewReplacer("{", "", "}", "").Replace(op.path)); rt != nil {
			reached[rt] = true
		}
	}
	for _, rt := range a.routes {
		if !reached[rt] {
			problems = append(problems, "template route "+rt.key+" reaches no operation")
		}
	}
	slices.Sort(problems)
	fmt.Printf("gateway: %d of %d operations (%d template routes)\n", n, len(ops.all), len(a.routes))
	if len(problems) > 0 {
		return fmt.Errorf("%d problems:\n  %s", len(problems), strings.Join(problems, "\n  "))
	}
	return nil
}
