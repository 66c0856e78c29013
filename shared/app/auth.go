package app

import "context"

// configEnvironmentIDs resolves environment references for the audit log.
type configEnvironmentIDs struct{ s *services }

func (c configEnvironmentIDs) EnvironmentID(ctx context.Context, ref string) (int64, error) {
	env, err := c.s.config.GetEnvironment(ctx, ref)
	return env.ID, err
}
