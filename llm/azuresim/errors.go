package azuresim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
)

// azureError is the body Azure sends with an error status.
type azureError struct {
	Error errorBody `json:"error"`
}

type errorBody struct {
	Code    any    `json:"code"`
	Message string `json:"message"`
	Type    string `json:"type,omitempty"`
	Param   any    `json:"param,omitempty"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func unauthorized(w http.ResponseWriter) {
	writeJSON(w, http.StatusUnauthorized, azureError{errorBody{
		Code:    "401",
		Message: "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.",
	}})
}

func notFound(w http.ResponseWriter) {
	writeJSON(w, http.StatusNotFound, azureError{errorBody{Code: "404", Message: "Resource not found"}})
}

func deploymentNotFound(w http.ResponseWriter) {
	writeJSON(w, http.StatusNotFound, azureError{errorBody{
		Code:    "DeploymentNotFound",
		Message: "The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again.",
	}})
}

// badRequest is Azure's invalid_request_error; param names the field.
func badRequest(w http.ResponseWriter, param, format string, args ...any) {
	var p any
	if param != "" {
		p = param
	}
	writeJSON(w, http.StatusBadRequest, azureError{errorBody{
		Code: "invalid_request_error", Type: "invalid_request_error", Param: p,
		Message: fmt.Sprintf(format, args...),
	}})
}

func serverError(w http.ResponseWriter) {
	writeJSON(w, http.StatusInternalServerError, azureError{errorBody{
		Code:    "InternalServerError",
		Message: "The server had an error while processing your request. Sorry about that!",
	}})
}

// tooMany is the 429 body for cause, in the words Azure uses for each.
func tooMany(w http.ResponseWriter, op, apiVersion string, cause Cause, retrySeconds int64) {
	what := "token rate limit of your current AIServices S0 pricing tier"
	switch cause {
	case CauseRequests:
		what = "call rate limit of your current AIServices S0 pricing tier"
	case CauseAdjustment:
		what = "the maximum usage size allowed during peak load"
	}
	writeJSON(w, http.StatusTooManyRequests, azureError{errorBody{
		Code: "429",
		Message: fmt.Sprintf("Requests to the %s Operation under Azure OpenAI API version %s have exceeded %s. Please retry after %d %s.",
			op, apiVersion, what, retrySeconds, plural(retrySeconds, "second")),
	}})
}

func plural(n int64, s string) string {
	if n == 1 {
		return s
	}
	return s + "s"
}

// unsupportedMediaType is the 415 for a body not declared as JSON.
func unsupportedMediaType(w http.ResponseWriter, ct string) {
	writeJSON(w, http.StatusUnsupportedMediaType, azureError{errorBody{
		Code: "UnsupportedMediaType", Type: "invalid_request_error",
		Message: fmt.Sprintf("Unsupported Content-Type %q: send the request body as application/json.", ct),
	}})
}

// headersTooLarge is the 431 for headers past the simulator's limit.
func headersTooLarge(w http.ResponseWriter) {
	w.Header().Set("Connection", "close")
	writeJSON(w, http.StatusRequestHeaderFieldsTooLarge, azureError{errorBody{
		Code:    "RequestHeaderFieldsTooLarge",
		Message: fmt.Sprintf("The request's headers are larger than the %d bytes allowed.", maxHeader),
	}})
}

// statusError is Azure's error body for a bare status.
func statusError(w http.ResponseWriter, code int) {
	writeJSON(w, code, azureError{errorBody{Code: strconv.Itoa(code), Message: http.StatusText(code)}})
}
