package app

import "github.com/tuningbox/tuningbox/shared/app/core"

// The configuration, the backend, the secrets and the sweeps are in
// shared/app/core, which the authorizer and gc functions link without the
// domain services; these names keep shared/app's callers as they were.
type Config = core.Config

const (
	DefaultCacheBytes   = core.DefaultCacheBytes
	AdminSecretProperty = core.AdminSecretProperty
)

var (
	LoadConfig          = core.LoadConfig
	OpenBackend         = core.OpenBackend
	ReadSecret          = core.ReadSecret
	FirstAdministrator  = core.FirstAdministrator
	Authorizer          = core.Authorizer
	CollectGarbage      = core.CollectGarbage
	CollectGarbageEvery = core.CollectGarbageEvery
)
