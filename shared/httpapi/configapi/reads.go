package configapi

import (
	"time"

	"github.com/tuningbox/tuningbox/shared/configdb"
	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/httpapi/routes"
)

// waitFor reads a document read's ?wait=SECONDS (microversion 1.3): how long
// to hold the read while its ETag matches If-None-Match, at most
// configdb.MaxWait.
func waitFor(q routes.Query) (time.Duration, error) {
	seconds, ok := q.Seconds("wait")
	if !ok {
		return 0, nil
	}
	if seconds < 0 {
		return 0, errs.Invalidf("wait must be a number of seconds (at most %v are waited)", configdb.MaxWait.Seconds())
	}
	return time.Duration(min(seconds, configdb.MaxWait.Seconds()) * float64(time.Second)), nil
}
