package main

import (
	"path/filepath"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awseventstargets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// StackProps configures the tuningbox stack.
type StackProps struct {
	awscdk.StackProps
	API       APIType
	Functions Functions
	// BinDir holds <name>/bootstrap for every function (make build writes bin/).
	BinDir string
	// Identities adds Keystone tokens and mutual TLS (context values, see Identities).
	Identities Identities
}

// Stack is one tuningbox deployment: storage, a function per endpoint group,
// the optional request authorizer and the API in front of them.
type Stack struct {
	awscdk.Stack
	Storage *Storage
	// Functions by name (the group name, or "authorizer").
	Functions map[string]awslambda.Function
}

// NewStack builds the stack and outputs the API's URL as ApiUrl.
func NewStack(scope constructs.Construct, id string, props *StackProps) *Stack {
	stack := awscdk.NewStack(scope, jsii.String(id), &props.StackProps)
	s := &Stack{Stack: stack, Storage: NewStorage(stack, "Storage"), Functions: map[string]awslambda.Function{}}

	newFunction := func(name string, write bool, blobs BlobAccess, longPoll bool) awslambda.Function {
		fn := NewFunction(stack, constructID(name), FunctionProps{
			CodeDir:    filepath.Join(props.BinDir, name),
			Storage:    s.Storage,
			TableWrite: write,
			Blobs:      blobs,
			LongPoll:   longPoll,
		})
		s.Functions[name] = fn
		return fn
	}
	routes := make([]Route, 0, len(props.Functions.Groups))
	for _, g := range props.Functions.Groups {
		routes = append(routes, Route{Group: g, Function: newFunction(g.Name, true, g.Blobs, g.LongPoll)})
	}
	var authorizer awslambda.IFunction
	if props.Functions.Authorizer {
		// Checking credentials only reads users and tokens.
		fn := newFunction(authorizerName, false, BlobsNone, false)
		props.Identities.configureAuthorizer(stack, fn)
		authorizer = fn
	}

	if props.Functions.GC {
		// The blob garbage collector: one sweep an hour (store.CollectGarbage).
		fn := NewFunction(stack, constructID(gcName), FunctionProps{
			CodeDir:        filepath.Join(props.BinDir, gcName),
			Storage:        s.Storage,
			TableWrite:     true,
			Blobs:          BlobsCollect,
			TimeoutSeconds: 900,
		})
		s.Functions[gcName] = fn
		awsevents.NewRule(stack, jsii.String("GCSchedule"), &awsevents.RuleProps{
			Schedule: awsevents.Schedule_Rate(awscdk.Duration_Hours(jsii.Number(1))),
			Targets:  &[]awsevents.IRuleTarget{awseventstargets.NewLambdaFunction(fn, nil)},
		})
	}

	url := NewAPI(stack, "Api", props.API, routes, authorizer, props.Identities)
	awscdk.NewCfnOutput(stack, jsii.String("ApiUrl"), &awscdk.CfnOutputProps{
		Value:       url,
		Description: jsii.String("Base URL of the tuningbox API"),
	})
	return s
}

// constructID turns a function name into a construct id ("config" -> "Config").
func constructID(name string) string {
	return strings.ToUpper(name[:1]) + name[1:]
}
