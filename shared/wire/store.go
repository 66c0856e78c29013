package wire

// GCReport is the answer of a blob garbage collection sweep (POST /api/v1/store/gc).
type GCReport struct {
	Referenced   int `json:"referenced"`
	Unreferenced int `json:"unreferenced"`
	Removed      int `json:"removed"`
}

// EnvironmentImport is the answer of an environment import (POST
// /api/v1/store/environments/import): the environment's id and UUID (the
// export's where they were free) and what was written.
type EnvironmentImport struct {
	ID        int64  `json:"id"`
	UUID      string `json:"uuid"`
	Documents int    `json:"documents"`
	Versions  int    `json:"versions"`
}
