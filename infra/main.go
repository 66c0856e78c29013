// Command infra is the CDK app of tuningbox, a Go module of its own so that
// the root module needs neither the CDK's dependencies nor Node: `make synth`
// writes cdk.out/Tuningbox.template.json, `make deploy` deploys it. It runs
// from the repository root (cdk.json builds it as infra/infra) and deploys
// every function that exists under functions/, from the bootstraps `make
// build` writes to bin/. Context: -c apiType=rest puts a REST API in front instead of
// an HTTP API (for a WAF web ACL or a private endpoint: docs/aws.md); -c keystone=true and the mtls* values
// add Keystone tokens and mutual TLS (see Identities).
package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"
)

// stackName names the stack and its template (cdk.out/Tuningbox.template.json).
const stackName = "Tuningbox"

func main() {
	err := run("functions", "bin")
	jsii.Close()
	if err != nil {
		fmt.Fprintln(os.Stderr, "infra:", err)
		os.Exit(1)
	}
}

func run(functionsDir, binDir string) error {
	// The CDK CLI names the output directory in CDK_OUTDIR; run directly
	// (infra/infra from the root), the app writes to cdk.out like the CLI would.
	var appProps awscdk.AppProps
	if os.Getenv("CDK_OUTDIR") == "" {
		appProps.Outdir = jsii.String("cdk.out")
	}
	app := awscdk.NewApp(&appProps)
	apiType, err := ParseAPIType(contextString(app, "apiType"))
	if err != nil {
		return err
	}
	identities, err := ParseIdentities(func(key string) string { return contextString(app, key) })
	if err != nil {
		return err
	}
	functions, err := discoverFunctions(functionsDir)
	if err != nil {
		return err
	}
	var missing []error
	for _, name := range functions.Names() {
		if _, err := os.Stat(filepath.Join(binDir, name, "bootstrap")); err != nil {
			missing = append(missing, fmt.Errorf("%w (run make build)", err))
		}
	}
	if err := errors.Join(missing...); err != nil {
		return err
	}
	NewStack(app, stackName, &StackProps{
		StackProps: awscdk.StackProps{Description: jsii.String("tuningbox: configuration database API on Lambda")},
		API:        apiType,
		Functions:  functions,
		BinDir:     binDir,
		Identities: identities,
	})
	app.Synth(nil)
	return nil
}

// contextString returns a context value given with -c or in cdk.json ("" when unset).
func contextString(app awscdk.App, key string) string {
	v, ok := app.Node().TryGetContext(jsii.String(key)).(string)
	if !ok {
		return ""
	}
	return v
}
