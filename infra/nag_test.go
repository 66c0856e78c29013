package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"
)

// TestAwsSolutionsChecks runs cdk-nag's AwsSolutions rule pack over both API
// types with every function and identity (Keystone, mutual TLS on a custom
// domain: the most resources a deployment has): every finding is fixed in
// the stack or suppressed there with its reason (nag.go), so none is left as
// an error or a warning.
func TestAwsSolutionsChecks(t *testing.T) {
	for _, apiType := range []APIType{APIHTTP, APIREST} {
		t.Run(string(apiType), func(t *testing.T) {
			bin := t.TempDir()
			for _, name := range allFunctions.Names() {
				if err := os.MkdirAll(filepath.Join(bin, name), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(bin, name, "bootstrap"), []byte(name), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			app := awscdk.NewApp(&awscdk.AppProps{Outdir: jsii.String(t.TempDir())})
			awscdk.Aspects_Of(app).Add(cdknag.NewAwsSolutionsChecks(&cdknag.NagPackProps{Verbose: jsii.Bool(true)}), nil)
			var findings []string
			assert(t, "synthesize with cdk-nag", func() {
				s := NewStack(app, stackName, &StackProps{API: apiType, Functions: allFunctions, BinDir: bin, Identities: allIdentities})
				annotations := assertions.Annotations_FromStack(s.Stack)
				rule := assertions.Match_StringLikeRegexp(jsii.String("AwsSolutions-.*"))
				for _, m := range append(*annotations.FindError(jsii.String("*"), rule), *annotations.FindWarning(jsii.String("*"), rule)...) {
					findings = append(findings, fmt.Sprintf("%s: %v", *m.Id, m.Entry.Data))
				}
			})
			slices.Sort(findings)
			for _, f := range findings {
				t.Error(f)
			}
		})
	}
}
