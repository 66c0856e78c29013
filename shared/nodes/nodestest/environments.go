// Package nodestest holds test support for code that uses the node registry.
package nodestest

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/nodes"
)

// Environments is a fixed nodes.Environments: environments 1 to Count exist,
// and environment N has the UUID EnvironmentUUID(N).
type Environments struct{ Count int64 }

// EnvironmentUUID is the UUID of environment id in Environments.
func EnvironmentUUID(id int64) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", id) }

// Environment resolves an id or UUID.
func (e Environments) Environment(_ context.Context, ref string) (nodes.Environment, error) {
	id, err := strconv.ParseInt(ref, 10, 64)
	if err != nil {
		tail, ok := strings.CutPrefix(strings.ToLower(ref), "00000000-0000-4000-8000-")
		if !ok {
			return nodes.Environment{}, errs.NotFoundf("environment %s not found", ref)
		}
		id, _ = strconv.ParseInt(tail, 10, 64)
	}
	if id < 1 || id > e.Count {
		return nodes.Environment{}, errs.NotFoundf("environment %s not found", ref)
	}
	return nodes.Environment{ID: id, UUID: EnvironmentUUID(id)}, nil
}
