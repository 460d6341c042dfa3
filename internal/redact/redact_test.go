package redact

import (
	"strings"
	"testing"
)

func TestSecretNames(t *testing.T) {
	for _, n := range []string{
		"password", "Password", "new_password", "passwd", "api_key", "apiKey", "API-Key", "x-api-key",
		"refresh_token", "access_token", "X-Session-Token", "Authentication", "Authorization", "Cookie",
		"Set-Cookie", "secret", "client_secret", "code", "session_id", "sessionId", "auth", "sig",
		"Ocp-Apim-Subscription-Key", "x-csrf-token", "PHPSESSID",
	} {
		if !IsSecretName(n) {
			t.Errorf("%s is not secret", n)
		}
	}
	for _, n := range []string{"", "user", "email", "model", "messages", "max_tokens", "prompt_tokens", "content-type", "q", "page", "tokens", "author", "codec"} {
		if IsSecretName(n) {
			t.Errorf("%s is secret", n)
		}
	}
	var ns Names
	ns.Add("X-Tenant")
	ns.Keep("code")
	if !ns.Secret("x_tenant") || ns.Secret("CODE") || !ns.Secret("password") || (*Names)(nil).Secret("x-tenant") {
		t.Error("Add/Keep")
	}
}

func TestJSON(t *testing.T) {
	in := `{"user":"ann","password":"p1","credentials":{"password":"p2","apiKey":{"v":"p3"}},` +
		`"list":[{"refresh_token":"p4"},{"n":1.50}],"secret":["p5"],"api_key":"p6","ok":true,"none":null,"max_tokens":10}`
	out, changed := (*Names)(nil).JSON([]byte(in))
	if !changed {
		t.Fatal("nothing redacted")
	}
	for _, p := range []string{"p1", "p2", "p3", "p4", "p5", "p6"} {
		if strings.Contains(string(out), `"`+p+`"`) {
			t.Errorf("%s left in %s", p, out)
		}
	}
	want := `{"user":"ann","password":"[redacted]","credentials":{"password":"[redacted]","apiKey":"[redacted]"},` +
		`"list":[{"refresh_token":"[redacted]"},{"n":1.50}],"secret":"[redacted]","api_key":"[redacted]","ok":true,"none":null,"max_tokens":10}`
	if string(out) != want {
		t.Errorf("got  %s\nwant %s", out, want)
	}
	for _, same := range []string{`{"a": 1,  "b": [1, 2]}`, `not json`, `{"password": "x"} trailing`, `"password"`, `[{"a":`} {
		if got, ch := (*Names)(nil).JSON([]byte(same)); ch || string(got) != same {
			t.Errorf("%q became %q", same, got)
		}
	}
	if string(JSON([]byte(`[{"Password":"x"}]`))) != `[{"Password":"[redacted]"}]` {
		t.Error("arrays at the top")
	}
}

func TestQueryAndMultipart(t *testing.T) {
	if got := Query("code=abc&q=desk&session_id=s1&auth=a1&x=1"); got != "code=%5Bredacted%5D&q=desk&session_id=%5Bredacted%5D&auth=%5Bredacted%5D&x=1" {
		t.Errorf("query: %s", got)
	}
	body := "--XB\r\nContent-Disposition: form-data; name=\"user\"\r\n\r\nann\r\n" +
		"--XB\r\nContent-Disposition: form-data; name=\"password\"\r\n\r\nhunter2\r\n--XB--\r\n"
	out, changed := (*Names)(nil).Multipart("XB", []byte(body))
	want := strings.Replace(body, "hunter2", Marker, 1)
	if !changed || string(out) != want {
		t.Errorf("multipart:\n%q\nwant\n%q", out, want)
	}
}

func FuzzJSON(f *testing.F) {
	f.Add([]byte(`{"password":"x","a":[{"token":1}]}`))
	f.Add([]byte(`[1,"a",{"b":null}]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		out, changed := (*Names)(nil).JSON(b)
		if !changed && string(out) != string(b) {
			t.Fatal("unchanged but different")
		}
		if changed {
			if again, _ := (*Names)(nil).JSON(out); string(again) != string(out) {
				t.Fatalf("redacting twice differs from once: %s -> %s", out, again)
			}
		}
	})
}

func TestJSONInsideAString(t *testing.T) {
	in := `{"messages":[{"role":"user","content":"{\"page\":\"x\",\"form\":{\"password\":\"pw1\"}}"}],"max_tokens":5}`
	want := `{"messages":[{"role":"user","content":"{\"page\":\"x\",\"form\":{\"password\":\"[redacted]\"}}"}],"max_tokens":5}`
	if got := string(JSON([]byte(in))); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// The names the HAR recorder redacted before this list are all on it.
func TestTheRecordersOldNamesAreOnTheList(t *testing.T) {
	for _, n := range []string{
		"authorization", "proxy-authorization", "cookie", "set-cookie", "set-cookie2",
		"api-key", "x-api-key", "ocp-apim-subscription-key", "x-auth-token",
		"x-access-token", "x-csrf-token", "x-xsrf-token", "x-amz-security-token",
		"x-goog-api-key", "private-token",
		"api_key", "apikey", "access_token", "id_token", "refresh_token",
		"client_secret", "password", "passwd", "pwd", "secret", "sig", "signature", "token",
	} {
		if !IsSecretName(n) || !Header(n) {
			t.Errorf("%s is not secret", n)
		}
	}
}

func TestExtendAddsNamesForTheWholeProcess(t *testing.T) {
	if IsSecretName("X-Tenant-Ref") {
		t.Fatal("x-tenant-ref is secret before it was added")
	}
	Extend("x_tenant_ref", "", "--")
	for _, n := range []string{"X-Tenant-Ref", "xTenantRef", "x.tenant.ref"} {
		if !IsSecretName(n) {
			t.Errorf("%s is not secret after Extend", n)
		}
	}
	if got := Query("x-tenant-ref=abc&q=desk"); strings.Contains(got, "abc") || !strings.Contains(got, "q=desk") {
		t.Errorf("Query = %s", got)
	}
	if got := string(JSON([]byte(`{"a":{"xTenantRef":"abc"}}`))); strings.Contains(got, "abc") {
		t.Errorf("JSON = %s", got)
	}
	var keep Names
	keep.Keep("x-tenant-ref")
	if keep.Secret("x-tenant-ref") {
		t.Error("a Names that keeps an extended name still finds it secret")
	}
}
