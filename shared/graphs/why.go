package graphs

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/graphs/planner"
	"github.com/tuningbox/tuningbox/shared/wire"
)

// Why the nodes' old data is what it is (planner.PlanNode.History).
const (
	historyFirst  = "first deployment: no successful run of this graph on the node, so $%old is {} and changed() is true"
	historyForced = "forced run: the node's old data is ignored, so $%old is {} and changed() is true"
)

// historySince says whose data $%old is.
func historySince(pin DataPin, unchanged bool) string {
	if unchanged {
		return fmt.Sprintf("$%%old is the data of the node's last successful run (%s), the same as now", pin.At.Format("2006-01-02T15:04:05Z07:00"))
	}
	return fmt.Sprintf("$%%old is the data of the node's last successful run (%s)", pin.At.Format("2006-01-02T15:04:05Z07:00"))
}

// whyOn is the explanation of task i on node (nil when the plan is not explained).
func (p *frozenPlan) whyOn(node string, i int) *wire.Why {
	if p.Why == nil {
		return nil
	}
	return p.Why[node][i]
}

// maxOriginNodes bounds the nodes whose changed keys an explained plan
// traces to the document versions that wrote them: each is a read of the
// key's history, now and at the node's last run.
const maxOriginNodes = 100

// plainPath is a data-diff argument that reads one key of the data ($.a.b).
var plainPath = regexp.MustCompile(`^\$((?:\.[A-Za-z_][A-Za-z0-9_-]*)+)$`)

// originate fills, in an explained plan of at most maxOriginNodes nodes,
// each changed key's Written (the version that wrote its value now) and
// Deployed (the one that had written it at the node's last successful run).
func (s *Service) originate(ctx context.Context, cluster int64, frozen *frozenPlan, nodes []planner.PlanNode) error {
	if len(nodes) > maxOriginNodes {
		frozen.Warnings = append(frozen.Warnings, fmt.Sprintf("changed keys are traced to the versions that wrote them for at most %d nodes: name them with nodes=", maxOriginNodes))
		return nil
	}
	origin := func(node, key string, at time.Time) (*wire.KeyOrigin, error) {
		o, err := s.clusters.KeyOrigin(ctx, clusterName(cluster), frozen.Resource, node, key, at)
		switch {
		case errs.Is(err, errs.Conflict):
			return nil, nil // no value then: added or deleted
		case err != nil:
			return nil, err
		}
		return &o, nil
	}
	for _, n := range nodes {
		type traced struct{ written, deployed *wire.KeyOrigin }
		seen := map[string]traced{}
		for _, why := range frozen.Why[n.ID] {
			if why == nil || why.Condition == nil {
				continue
			}
			for i := range why.Condition.Calls {
				call := &why.Condition.Calls[i]
				m := plainPath.FindStringSubmatch(call.Arg)
				if call.Result != true || !strings.HasPrefix(call.Function, "changed") || m == nil {
					continue
				}
				key := m[1][1:]
				t, ok := seen[key]
				if !ok {
					var err error
					if t.written, err = origin(n.ID, key, time.Time{}); err != nil {
						return err
					}
					if pin, deployed := frozen.Old[n.ID]; deployed {
						if t.deployed, err = origin(n.ID, key, pin.At); err != nil {
							return err
						}
					}
					seen[key] = t
				}
				call.Written, call.Deployed = t.written, t.deployed
			}
		}
	}
	return nil
}
