package wire

import (
	"math"
	"time"
)

// Task types. Group, stage and skipped tasks only structure the graph: no
// agent ever runs them.
const (
	TaskTypePuppet          = "puppet"
	TaskTypeShell           = "shell"
	TaskTypeSync            = "sync"
	TaskTypeUploadFile      = "upload_file"
	TaskTypeGroup           = "group"
	TaskTypeStage           = "stage"
	TaskTypeSkipped         = "skipped"
	TaskTypeReboot          = "reboot"
	TaskTypeCopyFiles       = "copy_files"
	TaskTypeRole            = "role"
	TaskTypeMasterShell     = "master_shell"
	TaskTypeMoveToBootstrap = "move_to_bootstrap"
	TaskTypeEraseNode       = "erase_node"
)

// Statuses of a transaction and of a node's progress through it (pending,
// running, ready, error, stopped), and of a task's result (ready, error,
// skipped, dep_failed).
const (
	StatusPending = "pending"
	StatusRunning = "running"
	StatusReady   = "ready"
	StatusError   = "error"
	// StatusSkipped is a task its agent did not run, or one whose failure
	// does not count (fail_on_error false, or a noop run).
	StatusSkipped = "skipped"
	// StatusDepFailed is a task not run because a task it waits for, or
	// an earlier one of its node, failed.
	StatusDepFailed = "dep_failed"
	// StatusStopped is a node that did not finish its tasks because the run stopped.
	StatusStopped = "stopped"
)

const (
	// DefaultClaimTimeout is how long a node has, from the start of its
	// sub-transaction, to claim there when the execution does not say.
	DefaultClaimTimeout = 10 * time.Minute
	// DefaultTaskTimeout is the timeout of a task without parameters.timeout
	// (Nailgun's for shell tasks); the agent kills the task after it.
	DefaultTaskTimeout = 300 * time.Second
)

// Seconds is a number of seconds as a Duration, saturating at the largest
// Duration rather than overflowing (negative: 0).
func Seconds(s float64) time.Duration {
	switch d := s * float64(time.Second); {
	case d >= math.MaxInt64:
		return math.MaxInt64
	case d > 0:
		return time.Duration(d)
	}
	return 0
}
