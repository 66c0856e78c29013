package httpapi

import "net/http"

// StatusRecorder is a ResponseWriter that remembers the status code the
// handler answered with (0 while nothing was written).
type StatusRecorder struct {
	http.ResponseWriter
	Status int
}

// WriteHeader records the first status written.
func (s *StatusRecorder) WriteHeader(code int) {
	if s.Status == 0 {
		s.Status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

// Write records 200 when the body comes without a status.
func (s *StatusRecorder) Write(b []byte) (int, error) {
	if s.Status == 0 {
		s.Status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (s *StatusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }
