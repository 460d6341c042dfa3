package budget

import (
	"fmt"
	"math"
	"net"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/headroom-agent/headroom/budget/models"
	"github.com/headroom-agent/headroom/internal/loopback"
	"github.com/headroom-agent/headroom/internal/yamlconf"
)

// Config is headroom's one config file: the Azure OpenAI deployments the
// router spends and how carefully it spends them. The zero value of every
// field but Deployments works; Validate fills the defaults in place.
type Config struct {
	// Redis is redis://host:port/db, or a Redis Cluster:
	// redis://host1:port1?addr=host2:port2&addr=host3:port3 by several
	// nodes, or redis+cluster://host:port by one (such as ElastiCache's
	// configuration endpoint); rediss for TLS. Empty keeps the budget in
	// this process, which is right for one process and wrong for a fleet.
	Redis string `yaml:"redis"`
	// RedisEnv names the environment variable that holds the Redis URL
	// instead, for a URL with a password in it: the variable comes from a
	// secret (a Kubernetes Secret, ECS secrets), the file does not.
	RedisEnv string `yaml:"redis_env"`
	// Margin is the share of each token limit reservations may use: our
	// estimate and Azure's differ a little. 0 means DefaultMargin.
	Margin float64 `yaml:"margin"`
	// Refund is what happens to the unused part of an estimate; hold
	// (the default) is what Azure is believed to do.
	Refund Policy `yaml:"refund"`
	// Window is the token window, Azure's minute unless compressed for
	// tests against the simulator; at least MinWindow. 0 means DefaultWindow.
	Window time.Duration `yaml:"window"`
	// InteractiveFloor is the share of each deployment kept for interactive
	// calls, so a batch job cannot starve a person waiting. In [0, 1);
	// nil means DefaultInteractiveFloor, new(0.0) none.
	InteractiveFloor *float64 `yaml:"interactive_floor"`
	// AffinityThreshold keeps a session on its last deployment (prompt
	// cache, stored Responses items) while that deployment's headroom
	// fraction is at least this. In [0, 1]; nil means
	// DefaultAffinityThreshold, new(0.0) always keeps affinity.
	AffinityThreshold *float64 `yaml:"affinity_threshold"`
	// RedisPrefix namespaces the budget's keys in Redis (default hr), so
	// fleets with separate budgets can share one Redis.
	RedisPrefix string `yaml:"redis_prefix"`
	// learning.Calibration is how each deployment's model is learned from Azure's
	// headers; the zero value learns.
	Calibration CalibrationSettings `yaml:"calibration"`
	Deployments []Deployment        `yaml:"deployments"`
}

// CalibrationSettings tune the learned model (see learning.Calibration).
type CalibrationSettings struct {
	// Learn, when false, keeps the model as configured: the margin, and
	// a fixed 5 ms pacing allowance per request. nil means true.
	Learn *bool `yaml:"learn"`
	// SafetyFloor is the least share of each limit kept back once the
	// estimate has proved right; 0 means learning.DefaultSafetyFloor. At most
	// 1 − margin, the share kept back before anything is learned.
	SafetyFloor float64 `yaml:"safety_floor"`
	// ColdLag is the pacing allowance before any lag is measured; 0 means
	// learning.DefaultColdLag.
	ColdLag time.Duration `yaml:"cold_lag"`
}

func (c *Config) windowOr() time.Duration {
	if c.Window > 0 {
		return c.Window
	}
	return DefaultWindow
}

// Learns reports whether the model is learned.
func (s CalibrationSettings) Learns() bool { return s.Learn == nil || *s.Learn }

// Defaults filled in by Validate.
const (
	DefaultInteractiveFloor  = 0.10
	DefaultAffinityThreshold = 0.2
	DefaultAPIVersion        = "2024-10-21"
	DefaultPool              = "default"
)

// Deployment types. Only Standard deployments share quota across names.
const (
	TypeStandard       = "standard"
	TypeGlobalStandard = "global-standard"
	TypeDataZone       = "data-zone"
	TypeProvisioned    = "provisioned"
)

// Deployment is one Azure OpenAI deployment: an allowance of tokens and
// requests per minute at one endpoint.
type Deployment struct {
	// Name identifies the deployment in logs, metrics and the store;
	// unique within the file.
	Name string `yaml:"name"`
	// Endpoint is the Azure OpenAI resource, https://NAME.openai.azure.com;
	// http is allowed only on loopback hosts, for the simulator.
	Endpoint string `yaml:"endpoint"`
	// Deployment is the name Azure knows it by; default Name.
	Deployment string `yaml:"deployment"`
	// APIVersion is sent with every call; default DefaultAPIVersion.
	APIVersion string `yaml:"api_version"`
	// Model decides how requests are shaped (its family, from the table
	// in budget/models);
	// ModelVersion with it, what a pool may mix.
	Model        string `yaml:"model"`
	ModelVersion string `yaml:"model_version"`
	// Family is chat or reasoning, for a model the family table does not
	// know (a fine-tune, a new release); filled in from the table
	// otherwise. An unknown model without it is an error.
	Family models.Family `yaml:"family"`
	// Region and Subscription place a Standard deployment in its quota:
	// Azure counts Standard quota per subscription, region and model.
	Region       string `yaml:"region"`
	Subscription string `yaml:"subscription"`
	// Type is standard (the default), global-standard, data-zone or
	// provisioned.
	Type string `yaml:"type"`
	// TPM is the token limit per minute as deployed; required.
	TPM int64 `yaml:"tpm"`
	// RPM is the request limit; 0 means the one Azure sells with TPM
	// (DefaultRPM).
	RPM  int64 `yaml:"rpm"`
	Auth Auth  `yaml:"auth"`
	// Weight tilts the random pick between the two best deployments;
	// 0 means 1.
	Weight float64 `yaml:"weight"`
	// ImageAdmission is what Azure's admission charges for each image a
	// call carries, as budget calibrate measured it; 0 means the model's
	// published count (budget/models), which is all the documentation
	// gives. A pool reserves the largest of its members'.
	ImageAdmission int64 `yaml:"image_admission"`
	// Priority breaks headroom ties: lower is preferred.
	Priority int `yaml:"priority"`
	// Pool is the routing pool the deployment serves; a call goes to one
	// pool, so every member must be the same model. Default DefaultPool.
	Pool string `yaml:"pool"`

	// QuotaKey is the store key the deployment's counters live under: its
	// Name, or one key shared by Standard deployments that are one quota
	// under several names, so they are counted once.
	QuotaKey string `yaml:"-"`
	// QuotaTPM and QuotaRPM are the limits of that quota: the largest any
	// member declares.
	QuotaTPM int64 `yaml:"-"`
	QuotaRPM int64 `yaml:"-"`
}

// Auth says where a deployment's credential comes from. Secrets live in
// the environment or in Entra ID, never in the file.
type Auth struct {
	// APIKeyEnv names the environment variable that holds the key.
	APIKeyEnv string `yaml:"api_key_env"`
	// Entra uses Microsoft Entra ID (azidentity's default credential chain).
	Entra bool `yaml:"entra"`
}

// Warning is a problem worth telling the user that does not stop the run.
type Warning struct {
	File  string // empty for a config built in code
	Line  int    // 0 when unknown
	Field string
	Msg   string
}

// String reads like a yamlconf error: file:line: field: msg.
func (w Warning) String() string {
	var b strings.Builder
	if w.File != "" {
		b.WriteString(w.File)
		if w.Line > 0 {
			b.WriteString(":" + strconv.Itoa(w.Line))
		}
		b.WriteString(": ")
	}
	if w.Field != "" {
		b.WriteString(w.Field + ": ")
	}
	b.WriteString(w.Msg)
	return b.String()
}

// CheckFile is Validate for a config decoded from file, where line gives
// the line a field (such as deployments[1].tpm) is written on: errors and
// warnings read file:line: field: what is wrong.
func (c *Config) CheckFile(file string, line func(field string) int) ([]Warning, error) {
	bad := func(field, format string, args ...any) error {
		return &yamlconf.Error{File: file, Line: line(field), Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	warn := func(field, format string, args ...any) Warning {
		return Warning{File: file, Line: line(field), Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	return c.check(bad, warn)
}

// Validate checks a Config built in code and fills its defaults in place.
// Errors are field: what is wrong.
func (c *Config) Validate() ([]Warning, error) {
	bad := func(field, format string, args ...any) error {
		return fmt.Errorf("%s: %s", field, fmt.Sprintf(format, args...))
	}
	warn := func(field, format string, args ...any) Warning {
		return Warning{Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	return c.check(bad, warn)
}

// Limits are what the store enforces for the deployment: its quota's,
// which several Standard deployments may share.
func (d Deployment) Limits(margin float64) Limits {
	if d.QuotaTPM == 0 { // not validated: the deployment's own limits
		return Limits{Tokens: d.TPM, Requests: d.RPM, Margin: margin}
	}
	return Limits{Tokens: d.QuotaTPM, Requests: d.QuotaRPM, Margin: margin}
}

// Resource is the endpoint normalised, so that spellings of one Azure
// resource get one client and one key space for stored Responses items.
func (d Deployment) Resource() string {
	u, err := url.Parse(d.Endpoint)
	if err != nil || u.Host == "" {
		return strings.TrimRight(d.Endpoint, "/")
	}
	host := strings.ToLower(u.Host)
	scheme := strings.ToLower(u.Scheme)
	if p := u.Port(); (scheme == "https" && p == "443") || (scheme == "http" && p == "80") {
		host = strings.TrimSuffix(host, ":"+p)
	}
	return scheme + "://" + host + strings.TrimRight(u.EscapedPath(), "/")
}

// Pools returns the routing pools by name, deployments in file order. The
// pointers are into c.Deployments.
func (c *Config) Pools() map[string][]*Deployment {
	pools := map[string][]*Deployment{}
	for i := range c.Deployments {
		d := &c.Deployments[i]
		name := d.Pool
		if name == "" {
			name = DefaultPool
		}
		pools[name] = append(pools[name], d)
	}
	return pools
}

type (
	errorf func(field, format string, args ...any) error
	warnf  func(field, format string, args ...any) Warning
)

// check validates c and fills its defaults; bad and warn say where (with a
// line for files, without for configs built in code).
func (c *Config) check(bad errorf, warn warnf) ([]Warning, error) {
	var ws []Warning
	if c.Margin == 0 {
		c.Margin = DefaultMargin
	}
	if !(c.Margin > 0 && c.Margin <= 1) {
		return nil, bad("margin", "%v is not a share of the limit: use a number above 0 and at most 1, such as 0.85", c.Margin)
	}
	if f := c.Calibration.SafetyFloor; f < 0 || f > 1-c.Margin+1e-9 {
		return nil, bad("calibration.safety_floor", "%v is not a share of the limit at most 1 − margin (%.2f): the floor is the least kept back, and the margin's %.2f is kept back before anything is learned", f, 1-c.Margin, 1-c.Margin)
	}
	if c.Calibration.ColdLag < 0 || c.Calibration.ColdLag > c.windowOr()/60 {
		return nil, bad("calibration.cold_lag", "%v: use a duration from 0 to the 1 s request window (%v)", c.Calibration.ColdLag, c.windowOr()/60)
	}
	if p := c.RedisPrefix; p != "" && strings.ContainsAny(p, "{}:* \t\n") {
		return nil, bad("redis_prefix", "%q: use letters, digits, - or _ (braces, colons, spaces and * have meanings in Redis keys and patterns)", p)
	}
	switch c.Refund {
	case "":
		c.Refund = Hold
	case Hold, Refund:
	default:
		return nil, bad("refund", "%q is not a refund policy: use hold or refund", c.Refund)
	}
	switch {
	case c.Window == 0:
		c.Window = DefaultWindow
	case c.Window < MinWindow:
		return nil, bad("window", "%v is too short: the 1 s request window would be under a millisecond (use at least %v, or leave it out for %v)", c.Window, MinWindow, DefaultWindow)
	}
	if c.InteractiveFloor == nil {
		c.InteractiveFloor = new(DefaultInteractiveFloor)
	}
	if f := *c.InteractiveFloor; !(f >= 0 && f < 1) {
		return nil, bad("interactive_floor", "%v is not a share: use a number from 0 up to, not including, 1 (default %v)", f, DefaultInteractiveFloor)
	}
	if c.AffinityThreshold == nil {
		c.AffinityThreshold = new(DefaultAffinityThreshold)
	}
	if a := *c.AffinityThreshold; !(a >= 0 && a <= 1) {
		return nil, bad("affinity_threshold", "%v is not a headroom fraction: use a number from 0 to 1 (default %v)", a, DefaultAffinityThreshold)
	}
	switch {
	case c.Redis != "" && c.RedisEnv != "":
		return nil, bad("redis_env", "redis and redis_env both name the store: keep one")
	case c.RedisEnv != "" && (!envName.MatchString(c.RedisEnv) || strings.Contains(c.RedisEnv, "://")):
		return nil, bad("redis_env", "not an environment variable's name: write the name (such as REDIS_URL) and put the URL in that variable")
	case c.Redis != "":
		w, err := checkRedis(c.Redis, bad, warn)
		if err != nil {
			return nil, err
		}
		ws = append(ws, w...)
	}

	if len(c.Deployments) == 0 {
		return nil, bad("deployments", "no deployments: declare at least one, with name, endpoint, tpm and auth")
	}
	names := map[string]int{}
	for i := range c.Deployments {
		d := &c.Deployments[i]
		f := fmt.Sprintf("deployments[%d]", i)
		if d.Name == "" {
			return nil, bad(f+".name", "a deployment needs a name")
		}
		if j, ok := names[d.Name]; ok {
			return nil, bad(f+".name", "%q is already the name of deployments[%d]: names must be unique", d.Name, j)
		}
		if strings.HasPrefix(d.Name, quotaKeyPrefix) {
			return nil, bad(f+".name", "names starting with %q are kept for shared quotas: rename the deployment", quotaKeyPrefix)
		}
		names[d.Name] = i
		if err := d.check(f, bad); err != nil {
			return nil, err
		}
	}
	if err := c.checkPools(bad); err != nil {
		return nil, err
	}
	return append(ws, c.assignQuotas(warn)...), nil
}

// RedisURL is the store's URL: Redis, or the value of the variable
// RedisEnv names, checked as Redis is; "" keeps the budget in this
// process.
func (c *Config) RedisURL() (string, error) {
	if c.RedisEnv == "" {
		return c.Redis, nil
	}
	v := strings.TrimSpace(os.Getenv(c.RedisEnv))
	if v == "" {
		return "", fmt.Errorf("redis_env: $%s is empty or unset: set it to the Redis URL (redis://host:port/db), or write the URL in the config as redis", c.RedisEnv)
	}
	bad := func(field, format string, args ...any) error {
		return fmt.Errorf("redis_env: $%s: %s", c.RedisEnv, fmt.Sprintf(format, args...))
	}
	if _, err := checkRedis(v, bad, func(string, string, ...any) Warning { return Warning{} }); err != nil {
		return "", err
	}
	return v, nil
}

func checkRedis(s string, bad errorf, warn warnf) ([]Warning, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, bad("redis", "not a URL: write redis://host:port/db")
	}
	q := u.Query()
	cluster := false
	switch u.Scheme {
	case "redis", "rediss":
		cluster = q.Has("addr")
	case "unix":
		if q.Has("addr") {
			return nil, bad("redis", "addr= names more nodes of a Redis Cluster, which a unix socket is not: write redis://host1:port1?addr=host2:port2")
		}
	case "redis+cluster", "rediss+cluster":
		cluster = true
		if u.Hostname() == "" {
			return nil, bad("redis", "a cluster URL needs a node to start from: write %s://host:port", u.Scheme)
		}
	default:
		return nil, bad("redis", "scheme %q is not Redis: write redis://host:port/db (rediss:// for TLS), or redis+cluster://host:port for a Redis Cluster", u.Scheme)
	}
	for _, a := range q["addr"] {
		// Not repeated in the message: it may hold a password.
		if strings.Contains(a, "@") {
			return nil, bad("redis", "addr= takes host:port only: the user and password go before the first host, for every node")
		}
		host, port, err := net.SplitHostPort(a)
		if n, perr := strconv.Atoi(port); err != nil || host == "" || perr != nil || n <= 0 || n > 65535 {
			return nil, bad("redis", "addr=%s is not host:port", a)
		}
	}
	if cluster {
		db := strings.Trim(u.Path, "/")
		if q.Has("db") {
			db = q.Get("db")
		}
		if db != "" && db != "0" {
			return nil, bad("redis", "database %s on a Redis Cluster, which has only database 0: remove it from the URL", db)
		}
	}
	if _, ok := u.User.Password(); ok {
		return []Warning{warn("redis", "the URL holds a password: secrets belong in the environment, not in the config file")}, nil
	}
	return nil, nil
}

// A variable name, so the file can only point at a secret, never hold one.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// looksLikeKey catches Azure keys (32 hex characters, or longer
// alphanumeric ones) that happen to be valid variable names.
func looksLikeKey(s string) bool {
	if len(s) < 32 || strings.Contains(s, "_") {
		return false
	}
	return strings.ContainsAny(s, "0123456789")
}

// check validates one deployment and fills its defaults.
func (d *Deployment) check(f string, bad errorf) error {
	if err := checkEndpoint(d.Endpoint, f+".endpoint", bad); err != nil {
		return err
	}
	if d.Deployment == "" {
		d.Deployment = d.Name
	}
	if d.APIVersion == "" {
		d.APIVersion = DefaultAPIVersion
	}
	switch d.Type {
	case "":
		d.Type = TypeStandard
	case TypeStandard, TypeGlobalStandard, TypeDataZone, TypeProvisioned:
	default:
		return bad(f+".type", "%q is not a deployment type: use standard, global-standard, data-zone or provisioned", d.Type)
	}
	switch {
	case d.TPM == 0:
		return bad(f+".tpm", "missing limits: deployment %q needs tpm, its tokens per minute as deployed in Azure", d.Name)
	case d.TPM < 0:
		return bad(f+".tpm", "%d: the token limit must be above zero", d.TPM)
	case d.RPM < 0:
		return bad(f+".rpm", "%d: the request limit must not be negative (leave it out for the one that comes with tpm)", d.RPM)
	case !(d.Weight >= 0) || math.IsInf(d.Weight, 1):
		return bad(f+".weight", "%v: the weight must be a number of at least 0 (0 means 1)", d.Weight)
	case d.ImageAdmission < 0:
		return bad(f+".image_admission", "%d: an image's admission charge must not be negative (leave it out for the model's published count)", d.ImageAdmission)
	}
	info, err := models.Resolve(d.Model, d.Family)
	if err != nil {
		field := f + ".model"
		if d.Family != "" {
			field = f + ".family"
		}
		return bad(field, "%v", err)
	}
	d.Family = info.Family
	if d.RPM == 0 {
		d.RPM = models.DefaultRPM(d.Model, d.TPM)
	}
	if d.Weight == 0 {
		d.Weight = 1
	}
	if d.Pool == "" {
		d.Pool = DefaultPool
	}
	a := d.Auth
	switch {
	case a.APIKeyEnv == "" && !a.Entra:
		return bad(f+".auth", "deployment %q has no credential: set api_key_env to the name of an environment variable holding the key, or entra: true", d.Name)
	case a.APIKeyEnv != "" && a.Entra:
		return bad(f+".auth", "set one of api_key_env and entra, not both")
	case a.APIKeyEnv != "" && (!envName.MatchString(a.APIKeyEnv) || looksLikeKey(a.APIKeyEnv)):
		// The value may be the key itself: never repeat it.
		return bad(f+".auth.api_key_env", "this is not an environment variable name: secrets go in the environment, never in the file; put the key in a variable such as AZURE_OPENAI_API_KEY and write that name here")
	}
	return nil
}

// checkEndpoint refuses anything but an Azure resource URL. Messages do
// not repeat the URL, which might carry credentials.
func checkEndpoint(s, f string, bad errorf) error {
	if s == "" {
		return bad(f, "an endpoint is required: the Azure OpenAI resource, such as https://NAME.openai.azure.com")
	}
	u, err := url.Parse(s)
	if err != nil || !u.IsAbs() || u.Host == "" || u.Opaque != "" {
		return bad(f, "not an absolute URL: write the resource as https://NAME.openai.azure.com")
	}
	if u.User != nil {
		return bad(f, "the URL holds credentials: secrets go in the environment (auth.api_key_env) or Entra ID, never in the file")
	}
	if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(s, "#") {
		return bad(f, "has a query or fragment: write only the resource, such as https://NAME.openai.azure.com (the API version goes in api_version)")
	}
	switch u.Scheme {
	case "https":
	case "http":
		if !loopback.Host(u.Hostname()) {
			return bad(f, "plain http is allowed only on loopback hosts (the simulator): use https")
		}
	default:
		return bad(f, "scheme %q: use https", u.Scheme)
	}
	return nil
}

// checkPools refuses a routing pool whose members are different models:
// the same task would behave differently depending on the route.
func (c *Config) checkPools(bad errorf) error {
	first := map[string]int{}
	for i, d := range c.Deployments {
		j, ok := first[d.Pool]
		if !ok {
			first[d.Pool] = i
			continue
		}
		p := c.Deployments[j]
		f := fmt.Sprintf("deployments[%d]", i)
		if !strings.EqualFold(d.Model, p.Model) {
			return bad(f+".model", "pool %q mixes models: %q is %s but %q is %s; give one of them its own pool", d.Pool, p.Name, show(p.Model), d.Name, show(d.Model))
		}
		if d.ModelVersion != p.ModelVersion {
			return bad(f+".model_version", "pool %q mixes model versions: %q is %s version %s but %q is version %s; give one of them its own pool", d.Pool, p.Name, show(p.Model), show(p.ModelVersion), d.Name, show(d.ModelVersion))
		}
	}
	return nil
}

func show(s string) string {
	if s == "" {
		return "(unset)"
	}
	return strconv.Quote(s)
}

const quotaKeyPrefix = "quota:"

// assignQuotas sets QuotaKey, QuotaTPM and QuotaRPM. Azure counts Standard
// quota per subscription, region and model, so Standard deployments that
// share those are one budget under several names: counting them apart
// would spend it several times over.
func (c *Config) assignQuotas(warn warnf) []Warning {
	groups := map[string][]int{}
	var keys []string
	for i := range c.Deployments {
		d := &c.Deployments[i]
		d.QuotaKey, d.QuotaTPM, d.QuotaRPM = d.Name, d.TPM, d.RPM
		if d.Type != TypeStandard || d.Subscription == "" || d.Region == "" {
			continue
		}
		k := quotaKeyPrefix + strings.ToLower(d.Subscription+"/"+d.Region+"/"+d.Model)
		if groups[k] == nil {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], i)
	}
	var ws []Warning
	for _, k := range keys {
		g := groups[k]
		if len(g) < 2 {
			continue
		}
		var tpm, rpm int64
		names := make([]string, len(g))
		for n, i := range g {
			d := c.Deployments[i]
			tpm, rpm = max(tpm, d.TPM), max(rpm, d.RPM)
			names[n] = strconv.Quote(d.Name)
		}
		for _, i := range g {
			d := &c.Deployments[i]
			d.QuotaKey, d.QuotaTPM, d.QuotaRPM = k, tpm, rpm
		}
		d := c.Deployments[g[0]]
		ws = append(ws, warn(fmt.Sprintf("deployments[%d]", g[1]),
			"deployments %s are Standard deployments of %s in subscription %q, region %q: Azure counts them as one quota, so they share one budget of %d TPM and %d RPM (the largest declared), counted under %q",
			strings.Join(names, ", "), show(d.Model), d.Subscription, d.Region, tpm, rpm, k))
	}
	return ws
}
