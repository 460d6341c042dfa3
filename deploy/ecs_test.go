package deploy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	ecstypes "github.com/aws/aws-sdk-go-v2/service/ecs/types"

	"github.com/headroom-agent/headroom/config"
)

const taskDefinitionFile = "ecs/task-definition.json"

// decodeTaskDefinition decodes a task definition strictly into the SDK's
// RegisterTaskDefinitionInput, then has the SDK's own client validate it
// and serialize it as it would send it. encoding/json matches field names
// regardless of case, which the ECS API does not: the request the SDK
// would send must be the file itself, or a field was misnamed. And it
// puts any string into an enum field, so each is checked against the
// values the SDK knows.
func decodeTaskDefinition(data []byte) (*ecs.RegisterTaskDefinitionInput, error) {
	return decodeECS(data, registerRequest)
}

// decodeCreateService decodes a service (aws ecs create-service
// --cli-input-json) as decodeTaskDefinition does a task definition.
func decodeCreateService(data []byte) (*ecs.CreateServiceInput, error) {
	return decodeECS(data, createServiceRequest)
}

// decodeECS decodes data strictly into an SDK input, checks its enums,
// and compares it with the body the SDK would send for it (request).
func decodeECS[T any](data []byte, request func(*T) ([]byte, error)) (*T, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var in T
	if err := dec.Decode(&in); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("more than one JSON value")
	}
	if err := checkEnums(reflect.ValueOf(in), "$"); err != nil {
		return nil, err
	}
	wire, err := request(&in)
	if err != nil {
		return nil, err
	}
	if d := jsonDiff(data, wire); d != "" {
		return nil, fmt.Errorf("the SDK would send it otherwise (a field name in the wrong case?): %s", d)
	}
	return &in, nil
}

// checkEnums walks v and refuses a value of an SDK enum type (a string
// type with a Values method) that is not one of its Values.
func checkEnums(v reflect.Value, at string) error {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return checkEnums(v.Elem(), at)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if f := v.Type().Field(i); f.IsExported() {
				if err := checkEnums(v.Field(i), at+"."+f.Name); err != nil {
					return err
				}
			}
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			if err := checkEnums(v.Index(i), fmt.Sprintf("%s[%d]", at, i)); err != nil {
				return err
			}
		}
	case reflect.String:
		m := v.MethodByName("Values")
		if v.String() == "" || !m.IsValid() || m.Type().NumIn() != 0 || m.Type().NumOut() != 1 {
			return nil
		}
		known := m.Call(nil)[0]
		if known.Kind() != reflect.Slice || known.Type().Elem() != v.Type() {
			return nil
		}
		var names []string
		for i := 0; i < known.Len(); i++ {
			if known.Index(i).String() == v.String() {
				return nil
			}
			names = append(names, known.Index(i).String())
		}
		return fmt.Errorf("%s: %q is not one of %s", at, v.String(), strings.Join(names, ", "))
	}
	return nil
}

// captureClient is an HTTP client that keeps the request and sends nothing.
type captureClient struct{ target, body string }

var errCaptured = errors.New("request captured, not sent")

func (c *captureClient) Do(r *http.Request) (*http.Response, error) {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	c.target, c.body = r.Header.Get("X-Amz-Target"), string(b)
	return nil, errCaptured
}

// registerRequest is the body of the RegisterTaskDefinition call the SDK
// would make for in, after its own validation of required fields.
func registerRequest(in *ecs.RegisterTaskDefinitionInput) ([]byte, error) {
	return captureRequest("RegisterTaskDefinition", func(ctx context.Context, c *ecs.Client) error {
		_, err := c.RegisterTaskDefinition(ctx, in)
		return err
	})
}

// createServiceRequest is the body of the CreateService call the SDK
// would make for in.
func createServiceRequest(in *ecs.CreateServiceInput) ([]byte, error) {
	return captureRequest("CreateService", func(ctx context.Context, c *ecs.Client) error {
		_, err := c.CreateService(ctx, in)
		return err
	})
}

// captureRequest is the body of the request call has the SDK make,
// which must be the operation op.
func captureRequest(op string, call func(context.Context, *ecs.Client) error) ([]byte, error) {
	hc := &captureClient{}
	client := ecs.New(ecs.Options{
		Region:      "us-east-1",
		Credentials: aws.AnonymousCredentials{},
		HTTPClient:  hc,
		Retryer:     aws.NopRetryer{},
	})
	err := call(context.Background(), client)
	if !errors.Is(err, errCaptured) {
		return nil, err
	}
	if !strings.HasSuffix(hc.target, "."+op) {
		return nil, fmt.Errorf("the SDK called %q", hc.target)
	}
	return []byte(hc.body), nil
}

// jsonDiff names where two JSON documents differ, or is "".
func jsonDiff(file, wire []byte) string {
	var a, b any
	if err := json.Unmarshal(file, &a); err != nil {
		return err.Error()
	}
	if err := json.Unmarshal(wire, &b); err != nil {
		return "the request: " + err.Error()
	}
	var diffs []string
	var walk func(at string, a, b any)
	walk = func(at string, a, b any) {
		switch a := a.(type) {
		case map[string]any:
			bm, ok := b.(map[string]any)
			if !ok {
				diffs = append(diffs, at+": not an object in the request")
				return
			}
			keys := make([]string, 0, len(a)+len(bm))
			for k := range a {
				keys = append(keys, k)
			}
			for k := range bm {
				if _, ok := a[k]; !ok {
					keys = append(keys, k)
				}
			}
			sort.Strings(keys)
			for _, k := range keys {
				av, inA := a[k]
				bv, inB := bm[k]
				switch {
				case !inB:
					diffs = append(diffs, fmt.Sprintf("%s.%s is in the file but not the request", at, k))
				case !inA:
					diffs = append(diffs, fmt.Sprintf("%s.%s is in the request but not the file", at, k))
				default:
					walk(at+"."+k, av, bv)
				}
			}
		case []any:
			bs, ok := b.([]any)
			if !ok || len(bs) != len(a) {
				diffs = append(diffs, at+": a list of another length in the request")
				return
			}
			for i := range a {
				walk(fmt.Sprintf("%s[%d]", at, i), a[i], bs[i])
			}
		default:
			if !reflect.DeepEqual(a, b) {
				diffs = append(diffs, fmt.Sprintf("%s: %v in the file, %v in the request", at, a, b))
			}
		}
	}
	walk("$", a, b)
	return strings.Join(diffs, "; ")
}

func loadTaskDefinition(t *testing.T) *ecs.RegisterTaskDefinitionInput {
	t.Helper()
	return loadECS(t, taskDefinitionFile, decodeTaskDefinition)
}

// loadECS reads file and decodes it with decode.
func loadECS[T any](t *testing.T, file string, decode func([]byte) (*T, error)) *T {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	in, err := decode(data)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return in
}

func TestECSTaskDefinition(t *testing.T) {
	in := loadTaskDefinition(t)

	if in.NetworkMode != ecstypes.NetworkModeAwsvpc {
		t.Errorf("networkMode %q: Fargate needs awsvpc", in.NetworkMode)
	}
	if !slices.Contains(in.RequiresCompatibilities, ecstypes.CompatibilityFargate) {
		t.Errorf("requiresCompatibilities %v: want FARGATE", in.RequiresCompatibilities)
	}
	if p := in.RuntimePlatform; p == nil || p.OperatingSystemFamily != ecstypes.OSFamilyLinux || p.CpuArchitecture == "" {
		t.Errorf("runtimePlatform: want LINUX and the image's CPU architecture")
	}
	cpu, errCPU := strconv.Atoi(aws.ToString(in.Cpu))
	mem, errMem := strconv.Atoi(aws.ToString(in.Memory))
	switch {
	case errCPU != nil || errMem != nil:
		t.Errorf("cpu %q, memory %q: write CPU units and MiB as whole numbers", aws.ToString(in.Cpu), aws.ToString(in.Memory))
	case !fargateSize(cpu, mem):
		t.Errorf("cpu %d, memory %d: not a size Fargate offers", cpu, mem)
	}
	for what, arn := range map[string]*string{"executionRoleArn": in.ExecutionRoleArn, "taskRoleArn": in.TaskRoleArn} {
		if !strings.HasPrefix(aws.ToString(arn), "arn:aws:iam::") {
			t.Errorf("%s %q: want an IAM role ARN (placeholder or real)", what, aws.ToString(arn))
		}
	}

	if len(in.ContainerDefinitions) != 1 {
		t.Fatalf("want one container, have %d", len(in.ContainerDefinitions))
	}
	c := in.ContainerDefinitions[0]
	if aws.ToString(c.Name) != containerName {
		t.Errorf("container %q: fanout.sh overrides the environment of %q", aws.ToString(c.Name), containerName)
	}
	if c.Essential != nil && !*c.Essential {
		t.Errorf("the container is not essential")
	}
	if aws.ToString(c.Image) == "" {
		t.Errorf("no image")
	}
	if len(c.EntryPoint) > 0 && !slices.Equal(c.EntryPoint, []string{"headroom"}) {
		t.Errorf("entryPoint %q: leave it to the image's, headroom", c.EntryPoint)
	}
	if _, out := runArgs(t, c.Command); out != "/out" {
		t.Errorf("--out %q: want /out", out)
	}
	// The metrics go to the log as EMF lines, for CloudWatch to pick up.
	if i := slices.Index(c.Command, "--emf"); i < 0 || i+1 >= len(c.Command) || c.Command[i+1] != "-" {
		t.Errorf("command %q: want --emf - (metrics on stdout, into awslogs)", c.Command)
	}
	if !aws.ToBool(c.ReadonlyRootFilesystem) {
		t.Errorf("readonlyRootFilesystem is not true")
	}
	uid, _, _ := strings.Cut(aws.ToString(c.User), ":")
	if n, err := strconv.Atoi(uid); err != nil || n != nonRootUID {
		t.Errorf("user %q: want the non-root uid %d, as a number (a name is whatever the image's /etc/passwd makes it)", aws.ToString(c.User), nonRootUID)
	}
	if c.Privileged != nil && *c.Privileged {
		t.Errorf("privileged")
	}
	if lp := c.LinuxParameters; lp != nil {
		if aws.ToBool(lp.InitProcessEnabled) {
			t.Errorf("initProcessEnabled: headroom is PID 1 and reaps Chrome's helpers itself")
		}
		if lp.Capabilities != nil && len(lp.Capabilities.Add) > 0 {
			t.Errorf("capabilities added: %v", lp.Capabilities.Add)
		}
	}
	if s := c.StopTimeout; s == nil || *s < minGrace || *s > maxStopTimeout {
		t.Errorf("stopTimeout: want %d to %d s for headroom's SIGTERM path (Fargate's most is %d)", minGrace, maxStopTimeout, maxStopTimeout)
	}

	env := map[string]string{}
	for _, e := range c.Environment {
		env[aws.ToString(e.Name)] = aws.ToString(e.Value)
	}
	if env[config.Env] == "" {
		t.Errorf("environment: %s is not set", config.Env)
	}
	for name, want := range map[string]string{"HOME": "/tmp", "TMPDIR": "/tmp"} {
		if env[name] != want {
			t.Errorf("environment %s: want %s (the root filesystem is read-only)", name, want)
		}
	}
	if _, ok := env["HEADROOM_TASK_INDEX"]; ok {
		t.Errorf("environment sets HEADROOM_TASK_INDEX: fanout.sh sets it per task")
	}
	secrets := map[string]bool{}
	for _, s := range c.Secrets {
		name, from := aws.ToString(s.Name), aws.ToString(s.ValueFrom)
		if !strings.HasPrefix(from, "arn:aws:secretsmanager:") && !strings.HasPrefix(from, "arn:aws:ssm:") {
			t.Errorf("secret %s: valueFrom %q: want a Secrets Manager or SSM parameter ARN", name, from)
		}
		if _, ok := env[name]; ok {
			t.Errorf("%s is both in environment and in secrets", name)
		}
		secrets[name] = true
	}
	if len(c.Secrets) > 0 && in.ExecutionRoleArn == nil {
		t.Errorf("secrets need an executionRoleArn to be fetched with")
	}

	// The same config as the Kubernetes one (README.md says to bake it
	// into the image) reads its keys and Redis URL from these secrets.
	f := loadFleet(t)
	job, kc := theJob(t, f)
	needs := configMapEnv(t, f, job.Spec.Template.Spec, kc, configPath(kc))
	for _, name := range needs {
		if !secrets[name] {
			t.Errorf("the config reads %s, which no secret sets", name)
		}
	}
	// The same task list and output; each engine adds its own metrics
	// sink (EMF into awslogs here, a scrape port there).
	same := 5 // run --tasks FILE --out DIR
	if len(c.Command) < same || len(kc.Args) < same || !slices.Equal(c.Command[:same], kc.Args[:same]) {
		t.Errorf("command %q does not start as the Kubernetes Job's arguments %q do", c.Command, kc.Args)
	}
	if env[config.Env] != configPath(kc) {
		t.Errorf("%s is %q here and %q in the Job", config.Env, env[config.Env], configPath(kc))
	}

	// Writable /tmp and /out, on the task's own volumes (ephemeral
	// storage on Fargate: no host paths).
	volumes := map[string]ecstypes.Volume{}
	for _, v := range in.Volumes {
		volumes[aws.ToString(v.Name)] = v
		if v.Host != nil && v.Host.SourcePath != nil {
			t.Errorf("volume %s: Fargate has no host paths", aws.ToString(v.Name))
		}
	}
	mounts := map[string]ecstypes.MountPoint{}
	for _, m := range c.MountPoints {
		mounts[aws.ToString(m.ContainerPath)] = m
		if _, ok := volumes[aws.ToString(m.SourceVolume)]; !ok {
			t.Errorf("mount %s: no volume %q", aws.ToString(m.ContainerPath), aws.ToString(m.SourceVolume))
		}
	}
	for _, dir := range []string{"/tmp", "/out"} {
		m, ok := mounts[dir]
		if !ok {
			t.Errorf("nothing is mounted at %s, and the root filesystem is read-only", dir)
		} else if aws.ToBool(m.ReadOnly) {
			t.Errorf("%s is mounted read-only", dir)
		}
	}

	// Logs, the EMF metrics and the result JSON among them, go to CloudWatch.
	lc := c.LogConfiguration
	if lc == nil {
		t.Fatalf("no logConfiguration")
	}
	if lc.LogDriver != ecstypes.LogDriverAwslogs {
		t.Errorf("logDriver %q: want awslogs", lc.LogDriver)
	}
	for _, opt := range []string{"awslogs-group", "awslogs-region", "awslogs-stream-prefix"} {
		if lc.Options[opt] == "" {
			t.Errorf("logConfiguration.options: %s is not set", opt)
		}
	}
	if v, ok := lc.Options["awslogs-create-group"]; ok && v != "true" && v != "false" {
		t.Errorf("awslogs-create-group %q: want true or false", v)
	}
}

// fargateSize says whether Fargate offers a task of cpu units and mem
// MiB (Linux).
func fargateSize(cpu, mem int) bool {
	between := func(lo, hi, step int) bool { return mem >= lo && mem <= hi && (mem-lo)%step == 0 }
	switch cpu {
	case 256:
		return mem == 512 || mem == 1024 || mem == 2048
	case 512:
		return between(1024, 4096, 1024)
	case 1024:
		return between(2048, 8192, 1024)
	case 2048:
		return between(4096, 16384, 1024)
	case 4096:
		return between(8192, 30720, 1024)
	case 8192:
		return between(16384, 61440, 4096)
	case 16384:
		return between(32768, 122880, 8192)
	}
	return false
}

func TestFargateSize(t *testing.T) {
	for _, tc := range []struct {
		cpu, mem int
		ok       bool
	}{
		{256, 512, true}, {256, 4096, false}, {512, 1024, true}, {512, 1536, false},
		{1024, 1024, false}, {1024, 2048, true}, {1024, 8192, true}, {4096, 30720, true},
		{8192, 20480, true}, {8192, 18432, false}, {16384, 122880, true}, {3072, 8192, false},
	} {
		if got := fargateSize(tc.cpu, tc.mem); got != tc.ok {
			t.Errorf("fargateSize(%d, %d) = %v", tc.cpu, tc.mem, got)
		}
	}
}

// The task definition's decoding is strict too: an unknown field is
// refused by the decoder, a field in the wrong case by the comparison
// with what the SDK would send, a missing required one by the SDK's own
// validation.
func TestECSDecoderRefusesTypos(t *testing.T) {
	data, err := os.ReadFile(taskDefinitionFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ old, new, want string }{
		{`"readonlyRootFilesystem"`, `"readonlyRootFilesytem"`, "readonlyRootFilesytem"},
		{`"readonlyRootFilesystem"`, `"readOnlyRootFilesystem"`, "readOnlyRootFilesystem"},
		{`"stopTimeout": 30`, `"stopTimeout": "30"`, "StopTimeout"},
		{`"family": "headroom",`, ``, "Family"},
		{`"networkMode": "awsvpc"`, `"networkMode": "awsvcp"`, `"awsvcp" is not one of`},
		{`"logDriver": "awslogs"`, `"logDriver": "awslog"`, "LogDriver"},
	} {
		bad := strings.Replace(string(data), tc.old, tc.new, 1)
		if bad == string(data) {
			t.Fatalf("%s has no %s to change", taskDefinitionFile, tc.old)
		}
		_, err := decodeTaskDefinition([]byte(bad))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s for %s: got %v, want an error naming %s", tc.new, tc.old, err, tc.want)
		}
	}
}

const (
	exporterTaskDefinitionFile = "ecs/exporter-task-definition.json"
	exporterServiceFile        = "ecs/exporter-service.json"
	exporterJob                = "headroom-exporter"
)

// The exporter's task: the agents' image, config and Redis URL, none of
// their Azure keys, serving /metrics for the CloudWatch agent's ECS
// service discovery.
func TestECSExporterTaskDefinition(t *testing.T) {
	in := loadECS(t, exporterTaskDefinitionFile, decodeTaskDefinition)
	agents := loadTaskDefinition(t)
	ac := agents.ContainerDefinitions[0]

	if in.NetworkMode != ecstypes.NetworkModeAwsvpc {
		t.Errorf("networkMode %q: Fargate needs awsvpc", in.NetworkMode)
	}
	if !slices.Contains(in.RequiresCompatibilities, ecstypes.CompatibilityFargate) {
		t.Errorf("requiresCompatibilities %v: want FARGATE", in.RequiresCompatibilities)
	}
	if !reflect.DeepEqual(in.RuntimePlatform, agents.RuntimePlatform) {
		t.Errorf("runtimePlatform: want the agents', the image being theirs")
	}
	cpu, errCPU := strconv.Atoi(aws.ToString(in.Cpu))
	mem, errMem := strconv.Atoi(aws.ToString(in.Memory))
	switch {
	case errCPU != nil || errMem != nil:
		t.Errorf("cpu %q, memory %q: write CPU units and MiB as whole numbers", aws.ToString(in.Cpu), aws.ToString(in.Memory))
	case !fargateSize(cpu, mem):
		t.Errorf("cpu %d, memory %d: not a size Fargate offers", cpu, mem)
	case cpu > 512 || mem > 1024:
		t.Errorf("cpu %d, memory %d: a reader of the store needs one of Fargate's smallest sizes", cpu, mem)
	}
	if !strings.HasPrefix(aws.ToString(in.ExecutionRoleArn), "arn:aws:iam::") {
		t.Errorf("executionRoleArn %q: want an IAM role ARN, to fetch the Redis secret and write the log", aws.ToString(in.ExecutionRoleArn))
	}
	if in.TaskRoleArn != nil {
		t.Errorf("taskRoleArn: the exporter calls no AWS API; without a role its container has no AWS credentials")
	}

	if len(in.ContainerDefinitions) != 1 {
		t.Fatalf("want one container, have %d", len(in.ContainerDefinitions))
	}
	c := in.ContainerDefinitions[0]
	if c.Essential != nil && !*c.Essential {
		t.Errorf("the container is not essential")
	}
	if aws.ToString(c.Image) != aws.ToString(ac.Image) {
		t.Errorf("image %q: want the agents' %q, which holds the config", aws.ToString(c.Image), aws.ToString(ac.Image))
	}
	if len(c.EntryPoint) > 0 && !slices.Equal(c.EntryPoint, []string{"headroom"}) {
		t.Errorf("entryPoint %q: leave it to the image's, headroom", c.EntryPoint)
	}

	// budget exporter --config FILE --addr :PORT: the agents' config, on
	// the port mapped and labelled for discovery.
	agentEnv := map[string]string{}
	for _, e := range ac.Environment {
		agentEnv[aws.ToString(e.Name)] = aws.ToString(e.Value)
	}
	configFile, port := exporterArgs(t, c.Command)
	if configFile != agentEnv[config.Env] {
		t.Errorf("--config %q: the agents read %q", configFile, agentEnv[config.Env])
	}
	if port != exporterPort {
		t.Errorf("--addr port %d: want %d", port, exporterPort)
	}
	env := map[string]string{}
	for _, e := range c.Environment {
		env[aws.ToString(e.Name)] = aws.ToString(e.Value)
	}
	if v, ok := env[config.Env]; ok && v != configFile {
		t.Errorf("environment %s is %q, --config %q", config.Env, v, configFile)
	}
	if len(c.PortMappings) != 1 {
		t.Fatalf("portMappings: want one, the metrics port; have %d", len(c.PortMappings))
	}
	pm := c.PortMappings[0]
	if int(aws.ToInt32(pm.ContainerPort)) != port {
		t.Errorf("portMappings: containerPort %d, --addr listens on %d", aws.ToInt32(pm.ContainerPort), port)
	}
	if pm.HostPort != nil && *pm.HostPort != aws.ToInt32(pm.ContainerPort) {
		t.Errorf("portMappings: hostPort %d: awsvpc wants it equal to containerPort, or unset", *pm.HostPort)
	}
	if pm.Protocol != "" && pm.Protocol != ecstypes.TransportProtocolTcp {
		t.Errorf("portMappings: protocol %q: want tcp", pm.Protocol)
	}
	if aws.ToString(pm.Name) != "metrics" {
		t.Errorf("portMappings: name %q: want metrics", aws.ToString(pm.Name))
	}
	for k, want := range map[string]string{
		"ECS_PROMETHEUS_EXPORTER_PORT": strconv.Itoa(port),
		"ECS_PROMETHEUS_METRICS_PATH":  metricsPath,
		"ECS_PROMETHEUS_JOB_NAME":      exporterJob,
		"job":                          exporterJob,
	} {
		if got := c.DockerLabels[k]; got != want {
			t.Errorf("dockerLabels %s %q: want %q (CloudWatch agent's ECS service discovery)", k, got, want)
		}
	}

	// The Redis URL as the agents get it; none of the Azure keys.
	f := loadFleet(t)
	job, kc := theJob(t, f)
	needs := configMapEnv(t, f, job.Spec.Template.Spec, kc, configPath(kc))
	redisEnv, keyEnvs := needs[0], needs[1:]
	agentSecrets := map[string]string{}
	for _, s := range ac.Secrets {
		agentSecrets[aws.ToString(s.Name)] = aws.ToString(s.ValueFrom)
	}
	secrets := map[string]string{}
	for _, s := range c.Secrets {
		name, from := aws.ToString(s.Name), aws.ToString(s.ValueFrom)
		if !strings.HasPrefix(from, "arn:aws:secretsmanager:") && !strings.HasPrefix(from, "arn:aws:ssm:") {
			t.Errorf("secret %s: valueFrom %q: want a Secrets Manager or SSM parameter ARN", name, from)
		}
		if _, ok := env[name]; ok {
			t.Errorf("%s is both in environment and in secrets", name)
		}
		secrets[name] = from
	}
	if from, ok := secrets[redisEnv]; !ok {
		t.Errorf("the config reads %s (redis_env), which no secret sets", redisEnv)
	} else if from != agentSecrets[redisEnv] {
		t.Errorf("secret %s is %q, the agents' %q", redisEnv, from, agentSecrets[redisEnv])
	}
	for _, k := range keyEnvs {
		_, inSecrets := secrets[k]
		_, inEnv := env[k]
		if inSecrets || inEnv {
			t.Errorf("%s: the exporter never calls a model and must not hold its key", k)
		}
	}
	for name := range secrets {
		if name != redisEnv {
			t.Errorf("secret %s: the exporter needs the Redis URL alone", name)
		}
	}
	for name := range env {
		if strings.HasPrefix(name, "AZURE_OPENAI_KEY") {
			t.Errorf("environment %s: no Azure key belongs in the exporter", name)
		}
	}

	// The agents' hardening.
	if !aws.ToBool(c.ReadonlyRootFilesystem) {
		t.Errorf("readonlyRootFilesystem is not true")
	}
	uid, _, _ := strings.Cut(aws.ToString(c.User), ":")
	if n, err := strconv.Atoi(uid); err != nil || n != nonRootUID {
		t.Errorf("user %q: want the non-root uid %d, as a number", aws.ToString(c.User), nonRootUID)
	}
	if c.Privileged != nil && *c.Privileged {
		t.Errorf("privileged")
	}
	if lp := c.LinuxParameters; lp == nil || lp.Capabilities == nil || !slices.Contains(lp.Capabilities.Drop, "ALL") || len(lp.Capabilities.Add) > 0 {
		t.Errorf("linuxParameters.capabilities: want drop [ALL] and nothing added")
	}
	volumes := map[string]bool{}
	for _, v := range in.Volumes {
		volumes[aws.ToString(v.Name)] = true
		if v.Host != nil && v.Host.SourcePath != nil {
			t.Errorf("volume %s: Fargate has no host paths", aws.ToString(v.Name))
		}
	}
	for _, m := range c.MountPoints {
		if !volumes[aws.ToString(m.SourceVolume)] {
			t.Errorf("mount %s: no volume %q", aws.ToString(m.ContainerPath), aws.ToString(m.SourceVolume))
		}
	}

	if hc := c.HealthCheck; hc != nil {
		if len(hc.Command) < 2 || hc.Command[0] != "CMD" && hc.Command[0] != "CMD-SHELL" {
			t.Errorf("healthCheck command %q: want CMD or CMD-SHELL first", hc.Command)
		}
		interval, timeout := aws.ToInt32(hc.Interval), aws.ToInt32(hc.Timeout)
		if interval == 0 || timeout == 0 || timeout >= interval {
			t.Errorf("healthCheck: interval %d s, timeout %d s: want both set, the timeout the shorter", interval, timeout)
		}
	}

	lc := c.LogConfiguration
	if lc == nil {
		t.Fatalf("no logConfiguration")
	}
	if lc.LogDriver != ecstypes.LogDriverAwslogs {
		t.Errorf("logDriver %q: want awslogs", lc.LogDriver)
	}
	for _, opt := range []string{"awslogs-group", "awslogs-region", "awslogs-stream-prefix"} {
		if lc.Options[opt] == "" {
			t.Errorf("logConfiguration.options: %s is not set", opt)
		}
	}
}

// The image (the repository's Dockerfile, Debian slim) has bash but no
// curl or wget: the container's health check is an HTTP GET of
// /metrics in bash alone. Run it, against servers that answer 200 and
// 503 and against a port nobody listens on.
func TestECSExporterHealthCheck(t *testing.T) {
	bash := needBash(t)
	in := loadECS(t, exporterTaskDefinitionFile, decodeTaskDefinition)
	hc := in.ContainerDefinitions[0].HealthCheck
	if hc == nil {
		t.Skip("no healthCheck")
	}
	cmd := hc.Command
	if len(cmd) != 4 || cmd[0] != "CMD" || cmd[1] != "/bin/bash" || cmd[2] != "-c" {
		t.Fatalf("healthCheck command %q: want CMD /bin/bash -c SCRIPT (Debian's /bin/sh has no /dev/tcp)", cmd)
	}
	script := cmd[3]
	target := fmt.Sprintf("/dev/tcp/127.0.0.1/%d", exporterPort)
	if !strings.Contains(script, target) || !strings.Contains(script, "GET "+metricsPath+" ") {
		t.Fatalf("healthCheck script %q: want a GET %s of %s", script, metricsPath, target)
	}
	if strings.Contains(script, "curl") || strings.Contains(script, "wget") {
		t.Errorf("healthCheck script %q: the image has no curl or wget", script)
	}
	run := func(port string) error {
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(aws.ToInt32(hc.Timeout))*time.Second)
		defer cancel()
		s := strings.ReplaceAll(script, target, "/dev/tcp/127.0.0.1/"+port)
		c := exec.CommandContext(ctx, bash, "-c", s)
		c.Env = []string{"PATH=/nonexistent"} // builtins only
		return c.Run()
	}
	serve := func(code int) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != metricsPath {
				http.NotFound(w, r)
				return
			}
			w.WriteHeader(code)
			fmt.Fprintln(w, "headroom_store_up 1")
		}))
		t.Cleanup(srv.Close)
		_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
		return port
	}
	if err := run(serve(http.StatusOK)); err != nil {
		t.Errorf("healthCheck against a 200: %v, want success", err)
	}
	if err := run(serve(http.StatusServiceUnavailable)); err == nil {
		t.Errorf("healthCheck against a 503 succeeded")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, closed, _ := net.SplitHostPort(l.Addr().String())
	l.Close()
	if err := run(closed); err == nil {
		t.Errorf("healthCheck against a closed port succeeded")
	}
}

// The exporter's service: one task on Fargate, replaced rather than
// doubled on a deployment.
func TestECSExporterService(t *testing.T) {
	in := loadECS(t, exporterServiceFile, decodeCreateService)
	td := loadECS(t, exporterTaskDefinitionFile, decodeTaskDefinition)

	family := aws.ToString(td.Family)
	switch ref := aws.ToString(in.TaskDefinition); {
	case ref == family, strings.HasPrefix(ref, family+":"), strings.Contains(ref, ":task-definition/"+family+":"):
	default:
		t.Errorf("taskDefinition %q: want the exporter's family %q (or a revision of it)", ref, family)
	}
	if aws.ToString(in.ServiceName) == "" || aws.ToString(in.Cluster) == "" {
		t.Errorf("serviceName and cluster: want both")
	}
	if aws.ToInt32(in.DesiredCount) != 1 || in.DesiredCount == nil {
		t.Errorf("desiredCount: want 1, written out: one reader serves the whole fleet")
	}
	if in.LaunchType != ecstypes.LaunchTypeFargate || len(in.CapacityProviderStrategy) > 0 {
		t.Errorf("launchType %q: want FARGATE, as the task definition requires", in.LaunchType)
	}
	if in.SchedulingStrategy != "" && in.SchedulingStrategy != ecstypes.SchedulingStrategyReplica {
		t.Errorf("schedulingStrategy %q: want REPLICA", in.SchedulingStrategy)
	}
	nc := in.NetworkConfiguration
	if nc == nil || nc.AwsvpcConfiguration == nil {
		t.Fatalf("networkConfiguration.awsvpcConfiguration: awsvpc tasks need one")
	}
	if vc := nc.AwsvpcConfiguration; len(vc.Subnets) == 0 || len(vc.SecurityGroups) == 0 {
		t.Errorf("awsvpcConfiguration: want subnets and security groups")
	}
	// One reader at a time: two exporters serving the same fleet totals
	// would be summed twice, so the old task stops before the new one
	// starts.
	dc := in.DeploymentConfiguration
	if dc == nil || aws.ToInt32(dc.MaximumPercent) != 100 || dc.MinimumHealthyPercent == nil || *dc.MinimumHealthyPercent != 0 {
		t.Errorf("deploymentConfiguration: want maximumPercent 100 and minimumHealthyPercent 0")
	}
	if len(in.LoadBalancers) > 0 {
		t.Errorf("loadBalancers: the scraper reaches the task's own address")
	}
}

// The exporter's files are decoded as strictly as the agents'.
func TestECSExporterDecoderRefusesTypos(t *testing.T) {
	for _, tc := range []struct {
		file, old, new, want string
	}{
		{exporterTaskDefinitionFile, `"dockerLabels"`, `"dockerlabels"`, "dockerlabels"},
		{exporterTaskDefinitionFile, `"containerPort": 9464`, `"containerPort": "9464"`, "ContainerPort"},
		{exporterTaskDefinitionFile, `"protocol": "tcp"`, `"protocol": "TCP"`, `"TCP" is not one of`},
		{exporterServiceFile, `"desiredCount"`, `"desiredcount"`, "desiredcount"},
		{exporterServiceFile, `"maximumPercent"`, `"maxPercent"`, "maxPercent"},
		{exporterServiceFile, `"launchType": "FARGATE"`, `"launchType": "FARGTE"`, `"FARGTE" is not one of`},
		{exporterServiceFile, `"serviceName": "headroom-exporter",`, ``, "ServiceName"},
	} {
		data, err := os.ReadFile(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		bad := strings.Replace(string(data), tc.old, tc.new, 1)
		if bad == string(data) {
			t.Fatalf("%s has no %s to change", tc.file, tc.old)
		}
		if tc.file == exporterServiceFile {
			_, err = decodeCreateService([]byte(bad))
		} else {
			_, err = decodeTaskDefinition([]byte(bad))
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %s for %s: got %v, want an error naming %s", tc.file, tc.new, tc.old, err, tc.want)
		}
	}
}
