// Package lambdaruntime is a Lambda Runtime API (2018-06-01) written with the
// standard library: Server runs one bootstrap process's event loop, for the
// local API Gateway (localstack/gateway) and for this package's tests. The
// tests build each function for the host, run it against Server, feed it the
// API Gateway fixtures in events/, compare the answers with the golden files,
// and measure init time (process start to the first /next call) and invoke time.
//
//	go test -v ./localstack/lambdaruntime
package lambdaruntime
