// Package lambdaruntime tests the real Lambda bootstrap binaries outside AWS:
// its tests build each function for the host, run it against a Lambda Runtime
// API (2018-06-01) written with the standard library, feed it the API Gateway
// fixtures in events/, compare the answers with the golden files, and measure
// init time (process start to the first /next call) and invoke time.
//
//	go test -v ./localstack/lambdaruntime
package lambdaruntime
