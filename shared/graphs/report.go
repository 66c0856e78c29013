package graphs

import (
	"fmt"
	"strings"
)

// MaxReportMessage bounds the message a result keeps. A node's results share
// one index item, so, as with the output, a failed task's result keeps up to
// MaxReportMessage bytes of its message and any other result 256; a
// longer message keeps its head and its tail around a note of what was cut
// (what went wrong is said first or last). The transaction's message quotes
// the failed task's as kept.
const MaxReportMessage = 4 << 10

// keptMessage returns a report's message as its result keeps it.
func keptMessage(msg, status string) string {
	if status == StatusError {
		return cutMiddle(msg, MaxReportMessage)
	}
	return cutMiddle(msg, keptOutput)
}

// cutMiddle returns s if it has at most limit bytes, else its head and tail
// (cut at whole characters) around a note of how many bytes were cut, in at
// most limit bytes.
func cutMiddle(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	const note = " [... %d bytes cut ...] "
	// The note with len(s) is at least as long as with the count it will show.
	keep := max(limit-len(fmt.Sprintf(note, len(s))), 0)
	head, tail := s[:keep/2], s[len(s)-(keep-keep/2):]
	head, tail = strings.ToValidUTF8(head, ""), strings.ToValidUTF8(tail, "")
	return head + fmt.Sprintf(note, len(s)-len(head)-len(tail)) + tail
}
