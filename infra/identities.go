package main

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscertificatemanager"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/tuningbox/tuningbox/shared/keystone"
)

// Identities are the optional ways in besides passwords and API tokens,
// chosen at synth time by context values:
//
//	-c keystone=true                  stack parameters Keystone* for X-Auth-Token
//	-c mtlsDomain=api.example.com     mutual TLS on that custom domain, with
//	-c mtlsCertificateArn=arn:...     its ACM certificate,
//	-c mtlsTruststore=s3://b/ca.pem   the truststore (the Puppet CA's ca.pem) in S3
//	-c mtlsTruststoreVersion=V        (optional) the truststore object's version
type Identities struct {
	Keystone bool
	MTLS     MTLS
}

// MTLS is API Gateway's mutual TLS on a custom domain: it verifies client
// certificates against the truststore and hands the verified certificate to
// the authorizer in the request context. Every client of that domain must
// then present a certificate; the default execute-api endpoint is disabled so
// that it cannot be bypassed.
type MTLS struct {
	Domain, CertificateArn          string
	TruststoreBucket, TruststoreKey string
	TruststoreVersion               string
}

// Enabled reports whether the API is served with mutual TLS.
func (m MTLS) Enabled() bool { return m.Domain != "" }

// ParseIdentities reads the context values above through get.
func ParseIdentities(get func(string) string) (Identities, error) {
	var ids Identities
	switch v := get("keystone"); v {
	case "", "false":
	case "true":
		ids.Keystone = true
	default:
		return ids, fmt.Errorf("keystone %q: want true or false", v)
	}
	m := MTLS{Domain: get("mtlsDomain"), CertificateArn: get("mtlsCertificateArn"), TruststoreVersion: get("mtlsTruststoreVersion")}
	store := get("mtlsTruststore")
	if m.Domain == "" && m.CertificateArn == "" && store == "" {
		return ids, nil
	}
	if m.Domain == "" || m.CertificateArn == "" || store == "" {
		return ids, fmt.Errorf("mutual TLS needs mtlsDomain, mtlsCertificateArn and mtlsTruststore together")
	}
	u, err := url.Parse(store)
	if err != nil || u.Scheme != "s3" || u.Host == "" || strings.Trim(u.Path, "/") == "" {
		return ids, fmt.Errorf("mtlsTruststore %q: want s3://bucket/key", store)
	}
	m.TruststoreBucket, m.TruststoreKey = u.Host, strings.TrimPrefix(u.Path, "/")
	ids.MTLS = m
	return ids, nil
}

// headerless reports whether callers may come without an Authorization
// header (a Keystone token, a client certificate). API Gateway calls an
// authorizer only when all its identity sources are present and caches per
// their values, so such an authorizer is not cached there and keyed on the
// caller's address only; it keeps its own in-memory caches of verified credentials.
func (ids Identities) headerless() bool { return ids.Keystone || ids.MTLS.Enabled() }

// configureAuthorizer adds the stack parameters of the identities and hands
// them to the authorizer function as its TUNINGBOX_* settings.
func (ids Identities) configureAuthorizer(stack awscdk.Stack, fn awslambda.Function) {
	param := func(name, env, def, description string) {
		p := awscdk.NewCfnParameter(stack, jsii.String(name), &awscdk.CfnParameterProps{
			Type: jsii.String("String"), Default: jsii.String(def), Description: jsii.String(description),
		})
		fn.AddEnvironment(jsii.String(env), p.ValueAsString(), nil)
	}
	if ids.Keystone {
		param("KeystoneUrl", "TUNINGBOX_KEYSTONE_URL", "", "Keystone v3 endpoint that validates X-Auth-Token, e.g. https://keystone.example.com:5000/v3")
		param("KeystoneUser", "TUNINGBOX_KEYSTONE_USER", "", "service user tuningbox validates tokens as (needs the service role in its project)")
		// The password stays in Secrets Manager: the authorizer reads it at start.
		secret := awscdk.NewCfnParameter(stack, jsii.String("KeystoneSecretArn"), &awscdk.CfnParameterProps{
			Type: jsii.String("String"), AllowedPattern: jsii.String("arn:aws[a-z-]*:secretsmanager:.+"),
			Description: jsii.String("ARN of the Secrets Manager secret whose string is the Keystone service user's password (its complete ARN, with the random suffix)"),
		})
		fn.AddEnvironment(jsii.String("TUNINGBOX_KEYSTONE_PASSWORD_SECRET"), secret.ValueAsString(), nil)
		fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Actions: jsii.Strings("secretsmanager:GetSecretValue"), Resources: jsii.Strings(*secret.ValueAsString()),
		}))
		param("KeystoneUserDomain", "TUNINGBOX_KEYSTONE_USER_DOMAIN", keystone.DefaultDomain, "domain of the service user")
		param("KeystoneServiceProject", "TUNINGBOX_KEYSTONE_SERVICE_PROJECT", "service", "project of the service user")
		param("KeystoneServiceProjectDomain", "TUNINGBOX_KEYSTONE_SERVICE_PROJECT_DOMAIN", keystone.DefaultDomain, "domain of the service user's project")
		param("KeystoneProject", "TUNINGBOX_KEYSTONE_PROJECT", "", "project (id, or name in KeystoneProjectDomain) whose tokens are accepted")
		param("KeystoneProjectDomain", "TUNINGBOX_KEYSTONE_PROJECT_DOMAIN", keystone.DefaultDomain, "domain of KeystoneProject")
		param("KeystoneRoles", "TUNINGBOX_KEYSTONE_ROLES", keystone.DefaultRoles, "Keystone roles in that project mapped to tuningbox roles")
		param("KeystoneCache", "TUNINGBOX_KEYSTONE_CACHE", keystone.DefaultCacheBound.String(), "longest time a validated token is trusted (a revoked token works at most this long)")
	}
	if ids.MTLS.Enabled() {
		param("ServerCertnames", "TUNINGBOX_SERVER_CERTNAMES", "", "comma-separated certnames whose client certificates read as observers (Puppet servers)")
	}
}

// certificate and bucket are the custom domain's certificate and truststore bucket.
func (m MTLS) certificate(scope constructs.Construct) awscertificatemanager.ICertificate {
	return awscertificatemanager.Certificate_FromCertificateArn(scope, jsii.String("MtlsCertificate"), jsii.String(m.CertificateArn))
}

func (m MTLS) bucket(scope constructs.Construct) awss3.IBucket {
	return awss3.Bucket_FromBucketName(scope, jsii.String("MtlsTruststore"), jsii.String(m.TruststoreBucket))
}

// version is the truststore object's version, nil for the latest.
func (m MTLS) version() *string {
	if m.TruststoreVersion == "" {
		return nil
	}
	return jsii.String(m.TruststoreVersion)
}
