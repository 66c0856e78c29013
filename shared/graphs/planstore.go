package graphs

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/tuningbox/tuningbox/shared/graphs/planner"
	"github.com/tuningbox/tuningbox/shared/store"
	"github.com/tuningbox/tuningbox/shared/wire"
)

// How a frozen plan is stored. A plan whose nodes' steps (and, explained,
// their explanations) take at most planPartBytes is one blob: the
// frozenPlan's JSON, as it always was. A larger one (fuel-library's graph on
// 1,000 nodes is about 20 MB) is split: a head blob holds everything but the
// steps and explanations (a storedPlan: tasks, limits, data pins, warnings,
// Parts, StepsAt and WhyAt), and they go to part blobs, each the
// concatenation of some nodes' step lists (each followed by the node's
// explanations) as JSON arrays; StepsAt and WhyAt say where they lie. A claim or a report then reads the head
// (cached: it is small) and decodes its own node's steps from one part (the
// blob cache keeps the parts' bytes), so it costs in proportion to the
// node's own tasks, not to the whole plan.

// planPartBytes is the size from which a plan's steps go to parts, and the
// size of a part unless more parts than an execution's write can reference
// would be needed (see planParts).
const planPartBytes = 1 << 20

// storedPlan is the head of a split plan (Parts set, Nodes absent), or a whole one.
type storedPlan struct {
	frozenPlan
	// Parts are the hashes of the blobs holding the nodes' steps.
	Parts []string `json:"parts,omitempty"`
	// StepsAt: node -> [part, offset, length] of its step list's JSON in Parts.
	StepsAt map[string][3]int `json:"steps_at,omitempty"`
	// WhyAt: node -> where its explanations lie in Parts, after its steps
	// (an explained plan's; the head holds none of them).
	WhyAt map[string][3]int `json:"why_at,omitempty"`
	// StepTasks: node -> the task of each of its steps, so that the tasks a
	// node waits for on others are named without reading their steps.
	StepTasks map[string][]uint32 `json:"step_tasks,omitempty"`
}

// putBlob stores one blob of a plan: its hash, and the operations that
// reference it in the write that stores the plan (none when nothing will).
type putBlob func(ctx context.Context, data []byte) (hash string, ops []store.Op, err error)

// storePlan stores plan and returns its head's hash and the operations that
// reference its blobs; order lists its nodes (every key of plan.Nodes) in the
// order their steps are stored; at most maxParts parts are made (parts grow
// past planPartBytes when needed). A part is stored as soon as it is full,
// so a plan's encoding is never held whole.
func storePlan(ctx context.Context, plan *frozenPlan, order []string, maxParts int, put putBlob) (string, []store.Op, error) {
	total := 0
	for _, n := range order {
		total += len(mustJSON(plan.Nodes[n]))
		if plan.Why != nil {
			total += len(mustJSON(plan.Why[n]))
		}
	}
	if total <= planPartBytes {
		return put(ctx, mustJSON(plan))
	}
	partBytes := max(planPartBytes, (total-1)/max(maxParts, 1)+1)
	head := storedPlan{frozenPlan: *plan, StepsAt: make(map[string][3]int, len(order)), StepTasks: make(map[string][]uint32, len(order))}
	head.Nodes, head.Why = nil, nil
	if plan.Why != nil {
		head.WhyAt = make(map[string][3]int, len(order))
	}
	var ops []store.Op
	var part []byte
	stored := map[string]bool{} // parts alike (nodes with the same steps) are one blob, referenced once
	flush := func() error {
		hash, refs, err := put(ctx, part)
		if !stored[hash] {
			stored[hash], ops = true, append(ops, refs...)
		}
		head.Parts, part = append(head.Parts, hash), part[:0]
		return err
	}
	for _, n := range order {
		steps := mustJSON(plan.Nodes[n])
		var why []byte
		if plan.Why != nil {
			why = mustJSON(plan.Why[n])
		}
		if len(part) > 0 && len(part)+len(steps)+len(why) > partBytes {
			if err := flush(); err != nil {
				return "", nil, err
			}
		}
		head.StepsAt[n] = [3]int{len(head.Parts), len(part), len(steps)}
		head.StepTasks[n] = make([]uint32, len(plan.Nodes[n]))
		for k, step := range plan.Nodes[n] {
			head.StepTasks[n][k] = uint32(step.Task)
		}
		part = append(part, steps...)
		if why != nil {
			head.WhyAt[n] = [3]int{len(head.Parts), len(part), len(why)}
			part = append(part, why...)
		}
	}
	if err := flush(); err != nil {
		return "", nil, err
	}
	hash, refs, err := put(ctx, mustJSON(head))
	return hash, append(ops, refs...), err
}

// planBlobOps is how many index operations each stored blob adds to a write (PutBlob's Ops).
const planBlobOps = 2

// planParts is how many parts each of an execution's plans may have so that
// their blob references fit in its one atomic write beside fixed other operations.
func planParts(plans, fixed int) int {
	return max(1, (store.MaxWriteBatch-fixed)/plans/planBlobOps-1)
}

// referencedBlob stores a blob for an index write that references it (store.PutBlob).
func (s *Service) referencedBlob(ctx context.Context, data []byte) (string, []store.Op, error) {
	ref, err := store.PutBlob(ctx, s.idx, s.blobs, data)
	return ref.Hash, ref.Ops, err
}

// unreferencedBlob stores a blob that no index item will reference: the
// garbage collector removes it after its grace period.
func (s *Service) unreferencedBlob(ctx context.Context, data []byte) (string, []store.Op, error) {
	hash, err := s.blobs.Put(ctx, data)
	return hash, nil, err
}

// loadPlan returns a stored plan: its tasks, limits, data pins, warnings,
// and the steps of nodes (a plan stored whole has every node's). Callers
// must not change it: it is shared through the cache.
func (s *Service) loadPlan(ctx context.Context, hash string, nodes ...string) (*frozenPlan, error) {
	head, err := s.planHead(ctx, hash)
	if err != nil {
		return nil, err
	}
	if head.Parts == nil {
		return &head.frozenPlan, nil
	}
	plan := head.frozenPlan // a copy holding the nodes asked for
	plan.Nodes = make(map[string][]planner.NodeStep, len(nodes))
	for _, n := range nodes {
		at, ok := head.StepsAt[n]
		if !ok {
			continue
		}
		part, err := s.blobs.Get(ctx, head.Parts[at[0]])
		if err != nil {
			return nil, fmt.Errorf("plan %s: part %d: %w", hash, at[0], err)
		}
		var steps []planner.NodeStep
		if err := json.Unmarshal(part[at[1]:at[1]+at[2]], &steps); err != nil {
			return nil, fmt.Errorf("plan %s: steps of node %s: %w", hash, n, err)
		}
		plan.Nodes[n] = steps
		if at, ok := head.WhyAt[n]; ok {
			if plan.Why == nil {
				plan.Why = make(map[string][]*wire.Why, len(nodes))
			}
			var why []*wire.Why
			if err := json.Unmarshal(part[at[1]:at[1]+at[2]], &why); err != nil {
				return nil, fmt.Errorf("plan %s: explanations of node %s: %w", hash, n, err)
			}
			plan.Why[n] = why
		}
	}
	return &plan, nil
}

// loadPlanShowing returns a stored plan with the steps of nodes, and the
// tasks of the steps of the nodes they wait for (their waits left out), so
// that serialize can name every task waited for (a compact wait names its
// task from the plan's tasks).
func (s *Service) loadPlanShowing(ctx context.Context, hash string, nodes []string) (*frozenPlan, error) {
	plan, err := s.loadPlan(ctx, hash, nodes...)
	if err != nil {
		return nil, err
	}
	head, err := s.planHead(ctx, hash)
	if err != nil || head.Parts == nil {
		return plan, err
	}
	for _, n := range nodes {
		for _, step := range plan.Nodes[n] {
			for _, other := range waitedNodes(step.After, step.AfterAny) {
				if _, ok := plan.Nodes[other]; !ok {
					tasks := head.StepTasks[other]
					steps := make([]planner.NodeStep, len(tasks))
					for k, t := range tasks {
						steps[k].Task = int(t)
					}
					plan.Nodes[other] = steps
				}
			}
		}
	}
	return plan, nil
}

// planHead returns a stored plan's head (a whole plan when it was stored
// whole), through the cache of decoded plans.
func (s *Service) planHead(ctx context.Context, hash string) (*storedPlan, error) {
	if d, ok := s.plans.Get(hash); ok {
		return d.plan, nil
	}
	raw, err := s.blobs.Get(ctx, hash)
	if err != nil {
		return nil, fmt.Errorf("plan %s: %w", hash, err)
	}
	// The tasks decode through the cache of task lists (the outer field wins over the embedded one).
	var stored struct {
		Tasks json.RawMessage `json:"tasks"`
		storedPlan
	}
	if bytes.HasPrefix(bytes.TrimSpace(raw), []byte("[")) {
		stored.Tasks = raw // stored before tasks were resolved per node: a bare task list
	} else if err := json.Unmarshal(raw, &stored); err != nil {
		return nil, fmt.Errorf("plan %s: %w", hash, err)
	}
	head := &stored.storedPlan
	if head.Tasks, err = s.decodeTasks(stored.Tasks); err != nil {
		return nil, fmt.Errorf("plan %s: %w", hash, err)
	}
	s.plans.Add(hash, decodedPlan{plan: head, size: int64(len(raw))})
	return head, nil
}
