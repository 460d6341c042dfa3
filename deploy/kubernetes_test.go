package deploy

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/headroom-agent/headroom/agent"
	"github.com/headroom-agent/headroom/config"
)

var kubernetesFiles = []string{
	"kubernetes/job.yaml",
	"kubernetes/configmap.yaml",
	"kubernetes/secret.yaml",
	"kubernetes/redis.yaml",
	"kubernetes/exporter.yaml",
}

// monitoringFiles are the Prometheus Operator's objects: files of their
// own, since a cluster without the operator refuses their kinds.
var monitoringFiles = []string{
	"kubernetes/servicemonitor.yaml",
	"kubernetes/prometheusrule.yaml",
}

// kubeDecoder decodes YAML or JSON the way the API server does with
// strict field validation: unknown and duplicate fields are errors, and
// field names match exactly (sigs.k8s.io/yaml's UnmarshalStrict goes
// through encoding/json, which would take readonlyRootFilesystem for
// readOnlyRootFilesystem). Its scheme knows only the kinds a fleet's
// manifests may hold, so any other kind is refused too.
var kubeDecoder = func() runtime.Decoder {
	s := runtime.NewScheme()
	s.AddKnownTypes(batchv1.SchemeGroupVersion, &batchv1.Job{})
	s.AddKnownTypes(corev1.SchemeGroupVersion, &corev1.ConfigMap{}, &corev1.Secret{}, &corev1.Service{})
	s.AddKnownTypes(appsv1.SchemeGroupVersion, &appsv1.Deployment{})
	return serializer.NewCodecFactory(s, serializer.EnableStrict).UniversalDeserializer()
}()

// decodeKube decodes every document of a multi-document YAML file.
func decodeKube(name string, data []byte) ([]runtime.Object, error) {
	return decodeDocs(kubeDecoder, name, data)
}

// decodeDocs decodes every document of a multi-document YAML file with
// dec.
func decodeDocs(dec runtime.Decoder, name string, data []byte) ([]runtime.Object, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var objs []runtime.Object
	for n := 1; ; n++ {
		doc, err := r.Read()
		if err == io.EOF {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", name, n, err)
		}
		// A document of comments alone is nothing, not an object.
		if j, err := yaml.YAMLToJSON(doc); err == nil && string(j) == "null" {
			continue
		}
		obj, _, err := dec.Decode(doc, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", name, n, err)
		}
		objs = append(objs, obj)
	}
}

// fleet is the Kubernetes manifests, by kind and name.
type fleet struct {
	jobs        map[string]*batchv1.Job
	configMaps  map[string]*corev1.ConfigMap
	secrets     map[string]*corev1.Secret
	services    map[string]*corev1.Service
	deployments map[string]*appsv1.Deployment
}

func loadFleet(t *testing.T) *fleet {
	t.Helper()
	f := &fleet{
		jobs:        map[string]*batchv1.Job{},
		configMaps:  map[string]*corev1.ConfigMap{},
		secrets:     map[string]*corev1.Secret{},
		services:    map[string]*corev1.Service{},
		deployments: map[string]*appsv1.Deployment{},
	}
	for _, file := range kubernetesFiles {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := decodeKube(file, data)
		if err != nil {
			t.Fatal(err)
		}
		if len(objs) == 0 {
			t.Fatalf("%s: no objects", file)
		}
		for _, obj := range objs {
			switch o := obj.(type) {
			case *batchv1.Job:
				add(t, file, f.jobs, o.Name, o)
			case *corev1.ConfigMap:
				add(t, file, f.configMaps, o.Name, o)
			case *corev1.Secret:
				add(t, file, f.secrets, o.Name, o)
			case *corev1.Service:
				add(t, file, f.services, o.Name, o)
			case *appsv1.Deployment:
				add(t, file, f.deployments, o.Name, o)
			default:
				t.Fatalf("%s: %T: the decoder knows a kind this test does not", file, obj)
			}
		}
	}
	return f
}

func add[T any](t *testing.T, file string, m map[string]T, name string, v T) {
	t.Helper()
	if name == "" {
		t.Fatalf("%s: a %T with no name", file, v)
	}
	if _, dup := m[name]; dup {
		t.Fatalf("%s: two %T named %q", file, v, name)
	}
	m[name] = v
}

// theJob is the fleet's one Job and its headroom container.
func theJob(t *testing.T, f *fleet) (*batchv1.Job, *corev1.Container) {
	t.Helper()
	if len(f.jobs) != 1 {
		t.Fatalf("want one Job, have %d", len(f.jobs))
	}
	for _, j := range f.jobs {
		cs := j.Spec.Template.Spec.Containers
		if len(cs) != 1 || cs[0].Name != containerName {
			t.Fatalf("Job %s: want one container named %s", j.Name, containerName)
		}
		return j, &cs[0]
	}
	panic("unreachable")
}

func TestKubernetesJob(t *testing.T) {
	f := loadFleet(t)
	job, c := theJob(t, f)
	spec := job.Spec
	pod := spec.Template.Spec

	if spec.CompletionMode == nil || *spec.CompletionMode != batchv1.IndexedCompletion {
		t.Errorf("completionMode: want Indexed, so each pod gets its JOB_COMPLETION_INDEX")
	}
	switch {
	case spec.Completions == nil || spec.Parallelism == nil:
		t.Errorf("completions and parallelism must both be set")
	case *spec.Parallelism < 1 || *spec.Parallelism > *spec.Completions:
		t.Errorf("parallelism %d: want 1 to completions (%d)", *spec.Parallelism, *spec.Completions)
	}
	if spec.BackoffLimit == nil && spec.BackoffLimitPerIndex == nil {
		t.Errorf("neither backoffLimit nor backoffLimitPerIndex is set")
	}
	if spec.ActiveDeadlineSeconds == nil || *spec.ActiveDeadlineSeconds <= 0 {
		t.Errorf("activeDeadlineSeconds: want a bound on the whole Job")
	}
	if g := pod.TerminationGracePeriodSeconds; g == nil || *g < minGrace {
		t.Errorf("terminationGracePeriodSeconds: want at least %d s for headroom's SIGTERM path", minGrace)
	}
	if pod.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("restartPolicy %q: want Never (podFailurePolicy needs it; a retry is a new pod)", pod.RestartPolicy)
	}
	if pod.ShareProcessNamespace != nil && *pod.ShareProcessNamespace {
		t.Errorf("shareProcessNamespace: headroom must be PID 1, reaping Chrome's helpers")
	}

	// Exit 2 (bad usage, config or task) fails the Job at once.
	failsOnBadUsage := false
	if p := spec.PodFailurePolicy; p != nil {
		for _, r := range p.Rules {
			if r.Action == batchv1.PodFailurePolicyActionFailJob && r.OnExitCodes != nil &&
				r.OnExitCodes.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn &&
				slices.Contains(r.OnExitCodes.Values, exitBadUsage) {
				if r.OnExitCodes.ContainerName != nil && *r.OnExitCodes.ContainerName != c.Name {
					t.Errorf("podFailurePolicy names container %q, not %q", *r.OnExitCodes.ContainerName, c.Name)
				}
				failsOnBadUsage = true
			}
		}
	}
	if !failsOnBadUsage {
		t.Errorf("podFailurePolicy: want a FailJob rule for exit code %d", exitBadUsage)
	}

	checkPodSecurity(t, "Job "+job.Name, pod, c, nonRootUID)
	checkResources(t, "Job "+job.Name, c)

	// headroom run --tasks FILE --out /out, the image's ENTRYPOINT being
	// headroom.
	if len(c.Command) > 0 && !slices.Equal(c.Command, []string{"headroom"}) {
		t.Errorf("command %q: leave it to the image's ENTRYPOINT, headroom", c.Command)
	}
	tasksFile, outDir := runArgs(t, c.Args)
	if outDir != "/out" {
		t.Errorf("--out %q: want /out", outDir)
	}

	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		if _, dup := env[e.Name]; dup {
			t.Errorf("env %s set twice", e.Name)
		}
		env[e.Name] = e
	}
	for name, want := range map[string]string{"HOME": "/tmp", "TMPDIR": "/tmp"} {
		if env[name].Value != want {
			t.Errorf("env %s: want %s (the root filesystem is read-only)", name, want)
		}
	}
	for _, name := range []string{"HEADROOM_TASK_INDEX", "JOB_COMPLETION_INDEX"} {
		if _, ok := env[name]; ok {
			t.Errorf("env %s is set: the Job sets JOB_COMPLETION_INDEX per pod, and a fixed index runs one task everywhere", name)
		}
	}
	configFile := env[config.Env].Value
	if configFile == "" {
		t.Fatalf("env %s is not set", config.Env)
	}

	// Writable /tmp and /out, on volumes of their own.
	mounts := map[string]corev1.VolumeMount{}
	for _, m := range c.VolumeMounts {
		mounts[m.MountPath] = m
	}
	for _, dir := range []string{"/tmp", "/out"} {
		m, ok := mounts[dir]
		if !ok {
			t.Errorf("nothing is mounted at %s, and the root filesystem is read-only", dir)
			continue
		}
		if m.ReadOnly {
			t.Errorf("%s is mounted read-only", dir)
		}
		switch v := volume(pod, m.Name); {
		case v == nil:
			// checkRefs reports it.
		case v.EmptyDir != nil && v.EmptyDir.Medium == corev1.StorageMediumMemory:
			t.Errorf("%s: a memory-backed emptyDir counts against the memory limit Chrome needs", dir)
		case v.EmptyDir == nil && v.Ephemeral == nil && v.PersistentVolumeClaim == nil:
			t.Errorf("%s: want an emptyDir, an ephemeral volume or a claim", dir)
		}
	}

	checkRefs(t, f, "Job "+job.Name, pod)

	// The config and the tasks are files of ConfigMaps, and parse.
	needs := configMapEnv(t, f, pod, c, configFile)
	for _, name := range needs {
		if e, ok := env[name]; !ok || e.Value == "" && e.ValueFrom == nil {
			t.Errorf("the config reads env %s, which the container does not set", name)
		} else if e.ValueFrom == nil && strings.HasPrefix(name, "AZURE_OPENAI_KEY") {
			t.Errorf("env %s is written in the manifest: take it from the Secret", name)
		}
	}
	tasks := parseConfigMapTasks(t, f, pod, c, tasksFile)
	if spec.Completions != nil && int(*spec.Completions) != len(tasks) {
		t.Errorf("completions %d, but tasks.yaml has %d tasks: every index must name a task", *spec.Completions, len(tasks))
	}
}

func volume(pod corev1.PodSpec, name string) *corev1.Volume {
	for i := range pod.Volumes {
		if pod.Volumes[i].Name == name {
			return &pod.Volumes[i]
		}
	}
	return nil
}

// checkPodSecurity checks container c of pod runs as uid (any uid but
// root when uid is 0), on a read-only root filesystem, with no way to
// gain privileges.
func checkPodSecurity(t *testing.T, what string, pod corev1.PodSpec, c *corev1.Container, uid int64) {
	t.Helper()
	psc := pod.SecurityContext
	if psc == nil {
		psc = &corev1.PodSecurityContext{}
	}
	sc := c.SecurityContext
	if sc == nil {
		t.Fatalf("%s: container %s has no securityContext", what, c.Name)
	}
	runAsUser, runAsNonRoot, seccomp := psc.RunAsUser, psc.RunAsNonRoot, psc.SeccompProfile
	if sc.RunAsUser != nil {
		runAsUser = sc.RunAsUser
	}
	if sc.RunAsNonRoot != nil {
		runAsNonRoot = sc.RunAsNonRoot
	}
	if sc.SeccompProfile != nil {
		seccomp = sc.SeccompProfile
	}
	if runAsNonRoot == nil || !*runAsNonRoot {
		t.Errorf("%s: runAsNonRoot is not true", what)
	}
	switch {
	case runAsUser == nil || *runAsUser == 0:
		t.Errorf("%s: runAsUser: want a non-root uid, written out (an image's USER is not checked by runAsNonRoot when it is a name)", what)
	case uid != 0 && *runAsUser != uid:
		t.Errorf("%s: runAsUser %d: want %d", what, *runAsUser, uid)
	}
	if seccomp == nil || seccomp.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("%s: seccompProfile: want RuntimeDefault", what)
	}
	if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Errorf("%s: readOnlyRootFilesystem is not true", what)
	}
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Errorf("%s: allowPrivilegeEscalation is not false", what)
	}
	if sc.Privileged != nil && *sc.Privileged {
		t.Errorf("%s: privileged", what)
	}
	if sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") || len(sc.Capabilities.Add) > 0 {
		t.Errorf("%s: capabilities: want drop [ALL] and nothing added", what)
	}
	if pod.HostNetwork || pod.HostPID || pod.HostIPC {
		t.Errorf("%s: shares a host namespace", what)
	}
}

// checkResources checks cpu and memory are requested and limited, and
// no request is over its limit.
func checkResources(t *testing.T, what string, c *corev1.Container) {
	t.Helper()
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		req, okReq := c.Resources.Requests[name]
		lim, okLim := c.Resources.Limits[name]
		switch {
		case !okReq || !okLim:
			t.Errorf("%s: %s needs a request and a limit", what, name)
		case req.Cmp(lim) > 0:
			t.Errorf("%s: %s request %s is over its limit %s", what, name, req.String(), lim.String())
		}
	}
}

// checkRefs checks every ConfigMap and Secret the pod names exists, and
// holds the keys it names.
func checkRefs(t *testing.T, f *fleet, what string, pod corev1.PodSpec) {
	t.Helper()
	configMap := func(name, key string) {
		cm, ok := f.configMaps[name]
		switch {
		case !ok:
			t.Errorf("%s names ConfigMap %q, which no manifest defines", what, name)
		case key != "":
			if _, ok := cm.Data[key]; !ok {
				t.Errorf("%s names key %q of ConfigMap %s, which it does not have", what, key, name)
			}
		}
	}
	secret := func(name, key string) {
		s, ok := f.secrets[name]
		switch {
		case !ok:
			t.Errorf("%s names Secret %q, which no manifest defines", what, name)
		case key != "":
			_, inData := s.Data[key]
			_, inString := s.StringData[key]
			if !inData && !inString {
				t.Errorf("%s names key %q of Secret %s, which it does not have", what, key, name)
			}
		}
	}
	for _, v := range pod.Volumes {
		switch {
		case v.ConfigMap != nil:
			configMap(v.ConfigMap.Name, "")
			for _, it := range v.ConfigMap.Items {
				configMap(v.ConfigMap.Name, it.Key)
			}
		case v.Secret != nil:
			secret(v.Secret.SecretName, "")
			for _, it := range v.Secret.Items {
				secret(v.Secret.SecretName, it.Key)
			}
		}
	}
	for _, c := range slices.Concat(pod.InitContainers, pod.Containers) {
		for _, e := range c.EnvFrom {
			if e.ConfigMapRef != nil {
				configMap(e.ConfigMapRef.Name, "")
			}
			if e.SecretRef != nil {
				secret(e.SecretRef.Name, "")
			}
		}
		for _, e := range c.Env {
			if e.ValueFrom == nil {
				continue
			}
			if r := e.ValueFrom.ConfigMapKeyRef; r != nil {
				configMap(r.Name, r.Key)
			}
			if r := e.ValueFrom.SecretKeyRef; r != nil {
				secret(r.Name, r.Key)
			}
		}
		for _, m := range c.VolumeMounts {
			if volume(pod, m.Name) == nil {
				t.Errorf("%s: container %s mounts volume %q, which the pod does not have", what, c.Name, m.Name)
			}
		}
	}
}

// configMapFile finds the ConfigMap key that is the file at p in the
// container: the mount at p's directory and its ConfigMap volume.
func configMapFile(t *testing.T, f *fleet, pod corev1.PodSpec, c *corev1.Container, p string) (string, []byte) {
	t.Helper()
	for _, m := range c.VolumeMounts {
		if path.Dir(p) != path.Clean(m.MountPath) || m.SubPath != "" {
			continue
		}
		v := volume(pod, m.Name)
		if v == nil || v.ConfigMap == nil {
			t.Fatalf("%s is not in a ConfigMap volume", p)
		}
		if !m.ReadOnly {
			t.Errorf("%s: mount the ConfigMap read-only", m.MountPath)
		}
		key := path.Base(p)
		for _, it := range v.ConfigMap.Items {
			if it.Path == key {
				key = it.Key
			}
		}
		cm, ok := f.configMaps[v.ConfigMap.Name]
		if !ok {
			t.Fatalf("%s: no ConfigMap %s", p, v.ConfigMap.Name)
		}
		data, ok := cm.Data[key]
		if !ok {
			t.Fatalf("%s: ConfigMap %s has no key %s", p, cm.Name, key)
		}
		return "ConfigMap " + cm.Name + ": " + key, []byte(data)
	}
	t.Fatalf("%s: no ConfigMap is mounted at %s", p, path.Dir(p))
	return "", nil
}

// configMapEnv parses the config file the container reads and returns
// the environment variables it reads.
func configMapEnv(t *testing.T, f *fleet, pod corev1.PodSpec, c *corev1.Container, p string) []string {
	t.Helper()
	name, data := configMapFile(t, f, pod, c, p)
	return configEnv(t, name, data)
}

// parseConfigMapTasks parses the task list the container reads.
func parseConfigMapTasks(t *testing.T, f *fleet, pod corev1.PodSpec, c *corev1.Container, p string) []*agent.Task {
	t.Helper()
	name, data := configMapFile(t, f, pod, c, p)
	return parseTasks(t, name, data)
}

func configPath(c *corev1.Container) string {
	for _, e := range c.Env {
		if e.Name == config.Env {
			return e.Value
		}
	}
	return ""
}

func TestKubernetesRedis(t *testing.T) {
	f := loadFleet(t)
	for _, d := range f.deployments {
		pod := d.Spec.Template.Spec
		sel := d.Spec.Selector
		if sel == nil || len(sel.MatchLabels) == 0 {
			t.Errorf("Deployment %s: no selector", d.Name)
			continue
		}
		for k, v := range sel.MatchLabels {
			if d.Spec.Template.Labels[k] != v {
				t.Errorf("Deployment %s: its selector %s=%s does not select its own pods", d.Name, k, v)
			}
		}
		for i := range pod.Containers {
			checkPodSecurity(t, "Deployment "+d.Name, pod, &pod.Containers[i], 0)
			checkResources(t, "Deployment "+d.Name, &pod.Containers[i])
		}
		checkRefs(t, f, "Deployment "+d.Name, pod)
	}

	// Each Service selects a Deployment's pods, on a port they serve.
	for _, s := range f.services {
		var found bool
		for _, d := range f.deployments {
			labels := d.Spec.Template.Labels
			match := len(s.Spec.Selector) > 0
			for k, v := range s.Spec.Selector {
				match = match && labels[k] == v
			}
			if !match {
				continue
			}
			found = true
			for _, p := range s.Spec.Ports {
				if !servesPort(d.Spec.Template.Spec, p.TargetPort.String()) {
					t.Errorf("Service %s: port %s: the pods of %s serve no port %s", s.Name, p.Name, d.Name, p.TargetPort.String())
				}
			}
		}
		if !found {
			t.Errorf("Service %s selects no Deployment's pods", s.Name)
		}
	}

	// The example Secret's REDIS_URL is the Service above, on a port it
	// serves.
	_, c := theJob(t, f)
	var redisURL string
	for _, e := range c.Env {
		if e.Name == "REDIS_URL" && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			r := e.ValueFrom.SecretKeyRef
			if s := f.secrets[r.Name]; s != nil {
				redisURL = s.StringData[r.Key]
			}
		}
	}
	u, err := url.Parse(redisURL)
	if err != nil || u.Scheme != "redis" && u.Scheme != "rediss" {
		t.Fatalf("REDIS_URL %q: want a redis:// URL from the Secret", redisURL)
	}
	svc, ok := f.services[u.Hostname()]
	if !ok {
		t.Fatalf("REDIS_URL %q names no Service of the manifests", redisURL)
	}
	if !slices.ContainsFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool { return strconv.Itoa(int(p.Port)) == u.Port() }) {
		t.Errorf("REDIS_URL %q: Service %s has no port %s", redisURL, svc.Name, u.Port())
	}
}

func servesPort(pod corev1.PodSpec, port string) bool {
	for _, c := range pod.Containers {
		for _, p := range c.Ports {
			if p.Name == port || strconv.Itoa(int(p.ContainerPort)) == port {
				return true
			}
		}
	}
	return false
}

func TestKubernetesSecretIsAnExample(t *testing.T) {
	f := loadFleet(t)
	for _, s := range f.secrets {
		if len(s.Data) > 0 {
			t.Errorf("Secret %s: data holds base64 values nobody can read as placeholders; use stringData", s.Name)
		}
		for k, v := range s.StringData {
			if strings.HasPrefix(k, "AZURE_OPENAI_KEY") && !strings.HasPrefix(v, "PLACEHOLDER") {
				t.Errorf("Secret %s: %s is not marked PLACEHOLDER: no real key belongs in the repository", s.Name, k)
			}
		}
	}
}

// The decoder is strict: a misspelt field, one in the wrong case, a
// repeated one or an unknown kind is an error, not a field dropped on
// the way to the cluster.
func TestKubernetesDecoderRefusesTypos(t *testing.T) {
	data, err := os.ReadFile("kubernetes/job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := decodeKube("job.yaml", data); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ old, new, want string }{
		{"completionMode: Indexed", "completionMod: Indexed", `unknown field "spec.completionMod"`},
		{"readOnlyRootFilesystem: true", "readOnlyRootFilesytem: true", "readOnlyRootFilesytem"},
		{"readOnlyRootFilesystem: true", "readonlyRootFilesystem: true", "readonlyRootFilesystem"},
		{"parallelism: 2", "parallelism: 2\n  parallelism: 3", `key "parallelism" already set`},
		{"kind: Job", "kind: CronJob", "CronJob"},
		{"completionMode: Indexed", "completionMode: [Indexed]", "completionMode"},
	} {
		bad := strings.Replace(string(data), tc.old, tc.new, 1)
		if bad == string(data) {
			t.Fatalf("job.yaml has no %q to change", tc.old)
		}
		_, err := decodeKube("job.yaml", []byte(bad))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q for %q: got %v, want an error naming %s", tc.new, tc.old, err, tc.want)
		}
	}
}

// monitoringDecoder is kubeDecoder for the Prometheus Operator's kinds:
// strict in the same way, and knowing only the kinds the monitoring
// files may hold.
var monitoringDecoder = func() runtime.Decoder {
	s := runtime.NewScheme()
	s.AddKnownTypes(monitoringv1.SchemeGroupVersion, &monitoringv1.ServiceMonitor{}, &monitoringv1.PrometheusRule{})
	return serializer.NewCodecFactory(s, serializer.EnableStrict).UniversalDeserializer()
}()

// decodeMonitoring decodes every document of the monitoring file at
// path (a ServiceMonitor, a PrometheusRule) strictly into the
// operator's own types, failing the test on any error.
func decodeMonitoring(t *testing.T, path string) []runtime.Object {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := decodeDocs(monitoringDecoder, path, data)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) == 0 {
		t.Fatalf("%s: no objects", path)
	}
	return objs
}

// Every manifest of the directory is decoded by one test or another, so
// a new file is not skipped by the checks above.
func TestKubernetesEveryFileDecoded(t *testing.T) {
	files, err := filepath.Glob("kubernetes/*.y*ml")
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range files {
		if !slices.Contains(kubernetesFiles, file) && !slices.Contains(monitoringFiles, file) {
			t.Errorf("%s is in neither kubernetesFiles nor monitoringFiles: no test decodes it", file)
		}
	}
	for _, file := range monitoringFiles {
		decodeMonitoring(t, file)
	}
}

// The exporter's contract: what headroom budget exporter listens on and
// serves.
const (
	exporterPort = 9464
	metricsPath  = "/metrics"
)

// exporterArgs checks the arguments are budget exporter --config FILE
// --addr ADDR (either flag as --flag=value too) and returns FILE and the
// port of ADDR.
func exporterArgs(t *testing.T, args []string) (configFile string, port int) {
	t.Helper()
	if len(args) < 2 || args[0] != "budget" || args[1] != "exporter" {
		t.Fatalf("arguments %q: want budget exporter ...", args)
	}
	var addr string
	for i := 2; i < len(args); i++ {
		name, value, inline := strings.Cut(args[i], "=")
		if !inline && i+1 < len(args) {
			value = args[i+1]
		}
		switch name {
		case "--config":
			configFile = value
		case "--addr":
			addr = value
		default:
			continue
		}
		if !inline {
			i++
		}
	}
	if configFile == "" {
		t.Errorf("arguments %q: no --config", args)
	}
	_, p, err := net.SplitHostPort(addr)
	if err == nil {
		port, err = strconv.Atoi(p)
	}
	if err != nil {
		t.Fatalf("arguments %q: --addr %q: want HOST:PORT or :PORT", args, addr)
	}
	return configFile, port
}

// theExporter is the one Deployment that runs headroom budget exporter,
// and its container.
func theExporter(t *testing.T, f *fleet) (*appsv1.Deployment, *corev1.Container) {
	t.Helper()
	var d *appsv1.Deployment
	var c *corev1.Container
	for _, dep := range f.deployments {
		cs := dep.Spec.Template.Spec.Containers
		for i := range cs {
			if len(cs[i].Args) >= 2 && cs[i].Args[0] == "budget" && cs[i].Args[1] == "exporter" {
				if d != nil {
					t.Fatalf("two exporters: %s/%s and %s/%s", d.Name, c.Name, dep.Name, cs[i].Name)
				}
				d, c = dep, &cs[i]
			}
		}
	}
	if d == nil {
		t.Fatalf("no Deployment runs budget exporter")
	}
	if n := len(d.Spec.Template.Spec.Containers); n != 1 {
		t.Errorf("Deployment %s: %d containers: want the exporter alone", d.Name, n)
	}
	return d, c
}

// selects says whether a Service's or Deployment's selector (a plain
// map, or a LabelSelector's matchLabels) picks pods labelled so.
func selects(sel, podLabels map[string]string) bool {
	return len(sel) > 0 && labels.SelectorFromSet(sel).Matches(labels.Set(podLabels))
}

// exporterService is the one Service that selects the exporter's pods.
func exporterService(t *testing.T, f *fleet, d *appsv1.Deployment) *corev1.Service {
	t.Helper()
	var svc *corev1.Service
	for _, s := range f.services {
		if selects(s.Spec.Selector, d.Spec.Template.Labels) {
			if svc != nil {
				t.Fatalf("Services %s and %s both select the exporter's pods", svc.Name, s.Name)
			}
			svc = s
		}
	}
	if svc == nil {
		t.Fatalf("no Service selects the pods of Deployment %s", d.Name)
	}
	return svc
}

func TestKubernetesExporter(t *testing.T) {
	f := loadFleet(t)
	d, c := theExporter(t, f)
	job, jc := theJob(t, f)
	pod := d.Spec.Template.Spec
	what := "Deployment " + d.Name

	// One reader, and never two at once: two targets serving the same
	// fleet totals would be counted twice by a sum over instances.
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 1 {
		t.Errorf("%s: replicas: want 1, written out", what)
	}
	switch s := d.Spec.Strategy; s.Type {
	case appsv1.RecreateDeploymentStrategyType:
	case appsv1.RollingUpdateDeploymentStrategyType:
		if s.RollingUpdate == nil || s.RollingUpdate.MaxSurge == nil || s.RollingUpdate.MaxSurge.IntValue() != 0 {
			t.Errorf("%s: a rolling update with a surge runs two exporters at once: want Recreate", what)
		}
	default:
		t.Errorf("%s: strategy %q: want Recreate (the default, a rolling update, runs two at once)", what, s.Type)
	}

	checkPodSecurity(t, what, pod, c, nonRootUID)
	checkResources(t, what, c)
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		t.Errorf("%s: automountServiceAccountToken: want false, it needs nothing of the Kubernetes API", what)
	}
	if c.Image != jc.Image {
		t.Errorf("%s: image %q: want the agents' %q", what, c.Image, jc.Image)
	}
	if len(c.Command) > 0 && !slices.Equal(c.Command, []string{"headroom"}) {
		t.Errorf("%s: command %q: leave it to the image's ENTRYPOINT, headroom", what, c.Command)
	}

	// It is not an agent: nothing that selects the Job's pods selects
	// its pods, or the other way round, and the pod annotations that
	// have the agents scraped one by one are not on it.
	jobLabels := job.Spec.Template.Labels
	exporterLabels := d.Spec.Template.Labels
	if selects(jobLabels, exporterLabels) {
		t.Errorf("%s: its pods carry the Job's pod labels %v: they would be counted as agents", what, jobLabels)
	}
	if selects(d.Spec.Selector.MatchLabels, jobLabels) {
		t.Errorf("%s: its selector picks the Job's pods", what)
	}
	if _, ok := exporterLabels["job-name"]; ok {
		t.Errorf("%s: its pods have a job-name label", what)
	}
	if _, ok := d.Spec.Template.Annotations["prometheus.io/scrape"]; ok {
		t.Errorf("%s: prometheus.io/scrape on the pods and on the Service scrapes it twice: keep it on the Service", what)
	}

	// budget exporter --config FILE --addr :PORT, on the port the
	// container declares.
	configFile, port := exporterArgs(t, c.Args)
	if port != exporterPort {
		t.Errorf("%s: --addr port %d: want %d", what, port, exporterPort)
	}
	var metricsPort *corev1.ContainerPort
	for i := range c.Ports {
		if c.Ports[i].Name == "metrics" {
			metricsPort = &c.Ports[i]
		}
	}
	if metricsPort == nil {
		t.Fatalf("%s: no container port named metrics", what)
	}
	if int(metricsPort.ContainerPort) != port {
		t.Errorf("%s: container port metrics is %d, --addr listens on %d", what, metricsPort.ContainerPort, port)
	}
	servesMetrics := func(name string, p *corev1.Probe) {
		switch {
		case p == nil:
			t.Errorf("%s: no %s", what, name)
		case p.HTTPGet == nil:
			t.Errorf("%s: %s: want an httpGet of %s", what, name, metricsPath)
		default:
			if p.HTTPGet.Path != metricsPath {
				t.Errorf("%s: %s path %q: want %s", what, name, p.HTTPGet.Path, metricsPath)
			}
			if pp := p.HTTPGet.Port; pp.String() != metricsPort.Name && pp.IntValue() != port {
				t.Errorf("%s: %s port %s: want metrics (%d)", what, name, pp.String(), port)
			}
		}
	}
	servesMetrics("readinessProbe", c.ReadinessProbe)
	servesMetrics("livenessProbe", c.LivenessProbe)

	// The agents' config, from the same ConfigMap key.
	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		if _, dup := env[e.Name]; dup {
			t.Errorf("%s: env %s set twice", what, e.Name)
		}
		env[e.Name] = e
	}
	if e, ok := env[config.Env]; ok && e.Value != configFile {
		t.Errorf("%s: %s is %q, --config %q", what, config.Env, e.Value, configFile)
	}
	checkRefs(t, f, what, pod)
	name, data := configMapFile(t, f, pod, c, configFile)
	jobName, jobData := configMapFile(t, f, job.Spec.Template.Spec, jc, configPath(jc))
	if name != jobName || !bytes.Equal(data, jobData) {
		t.Errorf("%s: --config %s is %s; the agents read %s", what, configFile, name, jobName)
	}

	// The Redis URL as the agents get it; none of the Azure keys.
	needs := configEnv(t, name, data)
	redisEnv, keyEnvs := needs[0], needs[1:]
	jobEnv := map[string]corev1.EnvVar{}
	for _, e := range jc.Env {
		jobEnv[e.Name] = e
	}
	switch e, ok := env[redisEnv]; {
	case !ok || e.Value == "" && e.ValueFrom == nil:
		t.Errorf("%s: the config reads env %s (redis_env), which the container does not set", what, redisEnv)
	case !reflect.DeepEqual(e.ValueFrom, jobEnv[redisEnv].ValueFrom) || e.Value != jobEnv[redisEnv].Value:
		t.Errorf("%s: env %s is not set as the Job sets it", what, redisEnv)
	}
	for _, k := range keyEnvs {
		if _, ok := env[k]; ok {
			t.Errorf("%s: env %s: the exporter never calls a model and must not hold its key", what, k)
		}
	}
	for name := range env {
		if strings.HasPrefix(name, "AZURE_OPENAI_KEY") {
			t.Errorf("%s: env %s: no Azure key belongs in the exporter", what, name)
		}
	}
	if len(c.EnvFrom) > 0 {
		t.Errorf("%s: envFrom brings in every key of a Secret or ConfigMap, the Azure keys among them: name each variable", what)
	}
	for _, v := range pod.Volumes {
		if v.Secret != nil || v.Projected != nil || v.CSI != nil {
			t.Errorf("%s: volume %s: the exporter mounts no secrets", what, v.Name)
		}
	}

	// Its Service: in-cluster, on the metrics port, for Prometheus to
	// find by annotation, and selecting no agent.
	svc := exporterService(t, f, d)
	what = "Service " + svc.Name
	if svc.Spec.Type != "" && svc.Spec.Type != corev1.ServiceTypeClusterIP {
		t.Errorf("%s: type %s: want ClusterIP, the metrics are for the cluster's Prometheus", what, svc.Spec.Type)
	}
	if selects(svc.Spec.Selector, jobLabels) {
		t.Errorf("%s: it selects the Job's pods too", what)
	}
	var sp *corev1.ServicePort
	for i := range svc.Spec.Ports {
		if svc.Spec.Ports[i].Name == "metrics" {
			sp = &svc.Spec.Ports[i]
		}
	}
	if sp == nil {
		t.Fatalf("%s: no port named metrics", what)
	}
	if tp := sp.TargetPort; tp.String() != metricsPort.Name && tp.IntValue() != port {
		t.Errorf("%s: targetPort %s is not the exporter's metrics port (%d)", what, tp.String(), port)
	}
	for k, want := range map[string]string{
		"prometheus.io/scrape": "true",
		// The annotation-driven jobs scrape the endpoints, the pods'
		// addresses: the container's port, not the Service's.
		"prometheus.io/port": strconv.Itoa(port),
		"prometheus.io/path": metricsPath,
	} {
		if got := svc.Annotations[k]; got != want {
			t.Errorf("%s: annotation %s %q: want %q", what, k, got, want)
		}
	}
}

func TestKubernetesServiceMonitor(t *testing.T) {
	f := loadFleet(t)
	d, _ := theExporter(t, f)
	svc := exporterService(t, f, d)

	var monitors []*monitoringv1.ServiceMonitor
	for _, file := range monitoringFiles {
		for _, obj := range decodeMonitoring(t, file) {
			if sm, ok := obj.(*monitoringv1.ServiceMonitor); ok {
				monitors = append(monitors, sm)
			}
		}
	}
	if len(monitors) != 1 {
		t.Fatalf("want one ServiceMonitor, have %d", len(monitors))
	}
	sm := monitors[0]
	what := "ServiceMonitor " + sm.Name

	// It selects the exporter's Service, by its labels, and no other.
	sel, err := metav1.LabelSelectorAsSelector(&sm.Spec.Selector)
	if err != nil {
		t.Fatalf("%s: selector: %v", what, err)
	}
	if sel.Empty() {
		t.Fatalf("%s: an empty selector picks every Service of the namespace", what)
	}
	for _, s := range f.services {
		if got, want := sel.Matches(labels.Set(s.Labels)), s == svc; got != want {
			t.Errorf("%s: selects Service %s: %v, want %v", what, s.Name, got, want)
		}
	}
	if ns := sm.Spec.NamespaceSelector; ns.Any || len(ns.MatchNames) > 0 {
		t.Errorf("%s: namespaceSelector: leave it empty, the Service is in the ServiceMonitor's namespace", what)
	}

	if len(sm.Spec.Endpoints) != 1 {
		t.Fatalf("%s: %d endpoints: want one, the metrics port", what, len(sm.Spec.Endpoints))
	}
	ep := sm.Spec.Endpoints[0]
	if ep.Port == "" || !slices.ContainsFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool { return p.Name == ep.Port }) {
		t.Errorf("%s: endpoint port %q: want the name of a port of Service %s", what, ep.Port, svc.Name)
	}
	if ep.TargetPort != nil {
		t.Errorf("%s: targetPort: name the Service's port (port) instead", what)
	}
	if ep.Path != "" && ep.Path != metricsPath {
		t.Errorf("%s: path %q: want %s", what, ep.Path, metricsPath)
	}
	if ep.Scheme != nil && *ep.Scheme != "http" {
		t.Errorf("%s: scheme %q: the exporter serves plain HTTP", what, *ep.Scheme)
	}
	interval, err := time.ParseDuration(string(ep.Interval))
	if err != nil || interval != 30*time.Second {
		t.Errorf("%s: interval %q: want 30s", what, ep.Interval)
	}
	if ep.ScrapeTimeout != "" {
		if timeout, err := time.ParseDuration(string(ep.ScrapeTimeout)); err != nil || timeout > interval {
			t.Errorf("%s: scrapeTimeout %q: want a duration no longer than the interval", what, ep.ScrapeTimeout)
		}
	}
}

// The monitoring files' decoding is as strict as the others'.
func TestKubernetesMonitoringDecoderRefusesTypos(t *testing.T) {
	const file = "kubernetes/servicemonitor.yaml"
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ old, new, want string }{
		{"endpoints:", "endpoint:", `unknown field "spec.endpoint"`},
		{"matchLabels:", "matchlabels:", "matchlabels"},
		{"interval: 30s", "interval: 30s\n      interval: 60s", `key "interval" already set`},
		{"kind: ServiceMonitor", "kind: PodMonitor", "PodMonitor"},
		{"kind: ServiceMonitor", "kind: Service", "Service"},
	} {
		bad := strings.Replace(string(data), tc.old, tc.new, 1)
		if bad == string(data) {
			t.Fatalf("%s has no %q to change", file, tc.old)
		}
		_, err := decodeDocs(monitoringDecoder, file, []byte(bad))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q for %q: got %v, want an error naming %s", tc.new, tc.old, err, tc.want)
		}
	}
}
