package llm

import (
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/openai/openai-go/v3/azure"
	"github.com/openai/openai-go/v3/option"

	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/internal/redact"
)

// How a deployment is reached, one way for the calls, the probe and
// calibration: its endpoint and API version, plain HTTP only to this
// machine, no retries of the SDK's (the router decides those), and its
// auth. A key is read from the variable auth.api_key_env names and an
// Entra ID token as the credential hands it out; each is registered with
// redact.Key before it is used, so no output writes it.

// entraSource hands out the Entra ID credential, made once and only when
// a deployment asks for one.
type entraSource func() (azcore.TokenCredential, error)

// defaultEntra is the environment's credential (azidentity's chain), or
// cred when one is given.
func defaultEntra(cred azcore.TokenCredential) entraSource {
	if cred != nil {
		return func() (azcore.TokenCredential, error) { return cred, nil }
	}
	return sync.OnceValues(func() (azcore.TokenCredential, error) {
		c, err := azidentity.NewDefaultAzureCredential(nil)
		if err != nil {
			return nil, err
		}
		return c, nil
	})
}

// reach is the request options that reach d, and the key it read ("" for
// Entra ID).
func reach(d budget.Deployment, hc *http.Client, getenv func(string) string, entra entraSource) ([]option.RequestOption, string, error) {
	opts := []option.RequestOption{
		azure.WithEndpoint(d.Resource(), d.APIVersion),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(0),
	}
	if plainHTTP(d.Resource()) {
		opts = append(opts, azure.WithUnsafeAllowHTTP())
	}
	switch {
	case d.Auth.APIKeyEnv != "":
		key := getenv(d.Auth.APIKeyEnv)
		if key == "" {
			return nil, "", fmt.Errorf("environment variable %s (auth.api_key_env) is empty or unset", d.Auth.APIKeyEnv)
		}
		redact.Key(key) // whatever a server echoes of it, whole or in pieces, no output writes it
		return append(opts, azure.WithAPIKey(key)), key, nil
	case d.Auth.Entra:
		cred, err := entra()
		if err != nil {
			return nil, "", fmt.Errorf("no Entra ID credential: %w", err)
		}
		return append(opts, azure.WithTokenCredential(secretTokens{cred})), "", nil
	}
	return nil, "", errors.New("no auth: set auth.api_key_env or auth.entra")
}
