package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
)

// deployment does what CloudFormation does at the stack's creation besides
// the resources the gateway emulates itself: it creates the template's
// Secrets Manager secrets (with their generated strings) in the emulated
// Secrets Manager (AWS_ENDPOINT_URL_SECRETS_MANAGER or AWS_ENDPOINT_URL), and
// sends every custom resource's Create event to its Lambda function, waiting
// for the answer at the event's ResponseURL. refs holds what each created
// resource's Ref resolves to (a secret's ARN).
type deployment struct {
	t      *template
	prefix string // names the secrets, unique per gateway run (the table's name)
	refs   map[string]string
}

// deploy creates the secrets, then runs the custom resources, and returns
// the outputs it can resolve (AdminSecretArn, AdminUserName).
func (g *gateway) deploy(ctx context.Context, prefix string) (map[string]string, error) {
	d := &deployment{t: g.api.template, prefix: prefix, refs: map[string]string{}}
	var secrets, custom []string
	for id, r := range d.t.Resources {
		switch {
		case r.Type == "AWS::SecretsManager::Secret":
			secrets = append(secrets, id)
		case strings.HasPrefix(r.Type, "Custom::") || r.Type == "AWS::CloudFormation::CustomResource":
			custom = append(custom, id)
		}
	}
	if len(secrets) > 0 {
		awsCfg, err := config.LoadDefaultConfig(ctx)
		if err != nil {
			return nil, err
		}
		sm := secretsmanager.NewFromConfig(awsCfg)
		for _, id := range slices.Sorted(slices.Values(secrets)) {
			if err := d.createSecret(ctx, sm, id); err != nil {
				return nil, fmt.Errorf("secret %s: %w", id, err)
			}
		}
	}
	for _, id := range slices.Sorted(slices.Values(custom)) {
		if err := d.createCustom(ctx, g, id); err != nil {
			return nil, fmt.Errorf("custom resource %s: %w", id, err)
		}
	}
	outputs := map[string]string{}
	for name, o := range d.t.Outputs {
		if v, err := d.resolve(o.Value); err == nil {
			outputs[name] = v
		}
	}
	return outputs, nil
}

// resolve evaluates a property value: a string, a Ref to a parameter (its
// default) or to a created resource, or an Fn::Join of those.
func (d *deployment) resolve(v any) (string, error) {
	switch v := v.(type) {
	case string:
		return v, nil
	case map[string]any:
		if ref, ok := v["Ref"].(string); ok {
			if p, ok := d.t.Parameters[ref]; ok && p.Default != nil {
				return fmt.Sprint(p.Default), nil
			}
			if value, ok := d.refs[ref]; ok {
				return value, nil
			}
			return "", fmt.Errorf("cannot resolve Ref %s", ref)
		}
		if join, ok := v["Fn::Join"].([]any); ok && len(join) == 2 {
			sep, _ := join[0].(string)
			parts, _ := join[1].([]any)
			out := make([]string, len(parts))
			for i, part := range parts {
				s, err := d.resolve(part)
				if err != nil {
					return "", err
				}
				out[i] = s
			}
			return strings.Join(out, sep), nil
		}
	}
	return "", fmt.Errorf("cannot resolve %v", v)
}

// createSecret creates a secret as CloudFormation does: its SecretString, or
// its GenerateSecretString's template with a generated string under its key.
func (d *deployment) createSecret(ctx context.Context, sm *secretsmanager.Client, id string) error {
	p := d.t.Resources[id].Properties
	var value string
	if s, ok := p["SecretString"]; ok {
		v, err := d.resolve(s)
		if err != nil {
			return err
		}
		value = v
	} else {
		gen, _ := p["GenerateSecretString"].(map[string]any)
		length := 32
		if n, ok := gen["PasswordLength"].(float64); ok {
			length = int(n)
		}
		if gen["ExcludePunctuation"] != true {
			return fmt.Errorf("only generated strings without punctuation are emulated")
		}
		generated := rand.Text() + rand.Text() // base32: letters and digits
		if length > len(generated) {
			return fmt.Errorf("PasswordLength %d: at most %d is emulated", length, len(generated))
		}
		generated = generated[:length]
		key, _ := gen["GenerateStringKey"].(string)
		if key == "" {
			value = generated
		} else {
			tmpl, err := d.resolve(gen["SecretStringTemplate"])
			if err != nil {
				return err
			}
			var doc map[string]any
			if err := json.Unmarshal([]byte(tmpl), &doc); err != nil {
				return fmt.Errorf("SecretStringTemplate: %w", err)
			}
			doc[key] = generated
			raw, _ := json.Marshal(doc)
			value = string(raw)
		}
	}
	out, err := sm.CreateSecret(ctx, &secretsmanager.CreateSecretInput{Name: aws.String(d.prefix + "-" + id), SecretString: aws.String(value)})
	if err != nil {
		return err
	}
	d.refs[id] = aws.ToString(out.ARN)
	return nil
}

// createCustom sends a custom resource's Create event to its function and
// waits for the answer the function PUTs to the event's ResponseURL.
func (d *deployment) createCustom(ctx context.Context, g *gateway, id string) error {
	r := d.t.Resources[id]
	fn := g.functions[d.t.functionIn(r.Properties["ServiceToken"])]
	if fn == nil {
		return fmt.Errorf("its ServiceToken is no Lambda function of the template")
	}
	props := map[string]any{}
	for k, v := range r.Properties {
		if k == "ServiceToken" {
			continue
		}
		s, err := d.resolve(v)
		if err != nil {
			return fmt.Errorf("property %s: %w", k, err)
		}
		props[k] = s
	}
	answers := make(chan []byte, 1)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		select {
		case answers <- body:
		default:
		}
	})}
	go srv.Serve(ln)
	defer srv.Close()
	event, _ := json.Marshal(map[string]any{
		"RequestType": "Create", "RequestId": rand.Text(), "ResponseURL": "http://" + ln.Addr().String() + "/cloudformation-response",
		"ResourceType": r.Type, "LogicalResourceId": id, "StackId": "arn:aws:cloudformation:us-east-1:000000000000:stack/Tuningbox/" + d.prefix,
		"ResourceProperties": props,
	})
	ctx, cancel := context.WithTimeout(ctx, fn.spec.timeout+5*time.Second)
	defer cancel()
	if _, err := fn.invoke(ctx, event); err != nil {
		return err
	}
	select {
	case body := <-answers:
		var answer struct{ Status, Reason string }
		if err := json.Unmarshal(body, &answer); err != nil || answer.Status != "SUCCESS" {
			return fmt.Errorf("answered %s %s", answer.Status, answer.Reason)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("no answer at the ResponseURL")
	}
}
