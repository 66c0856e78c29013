package wire

// GCReport is the answer of a blob garbage collection sweep (POST /api/v1/store/gc).
type GCReport struct {
	Referenced   int `json:"referenced"`
	Unreferenced int `json:"unreferenced"`
	Removed      int `json:"removed"`
}
