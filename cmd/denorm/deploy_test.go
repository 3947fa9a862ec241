package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/yaml"

	"github.com/denorm/denorm/reconcile"
	"github.com/denorm/denorm/source"
	"github.com/denorm/denorm/write"
)

const deployDir = "../../deploy"

// manifest is one document of a file in deploy/k8s, decoded strictly.
type manifest struct {
	file string
	kind string
	obj  any
}

// newObject gives the API type a kind decodes into; kinds the deployment
// may use are listed here, so an unknown one fails the test instead of
// going unchecked.
func newObject(apiVersion, kind string) (any, error) {
	switch apiVersion + " " + kind {
	case "v1 Service":
		return &corev1.Service{}, nil
	case "v1 ConfigMap":
		return &corev1.ConfigMap{}, nil
	case "v1 ServiceAccount":
		return &corev1.ServiceAccount{}, nil
	case "v1 PersistentVolumeClaim":
		return &corev1.PersistentVolumeClaim{}, nil
	case "apps/v1 StatefulSet":
		return &appsv1.StatefulSet{}, nil
	case "apps/v1 Deployment":
		return &appsv1.Deployment{}, nil
	case "batch/v1 Job":
		return &batchv1.Job{}, nil
	case "batch/v1 CronJob":
		return &batchv1.CronJob{}, nil
	case "policy/v1 PodDisruptionBudget":
		return &policyv1.PodDisruptionBudget{}, nil
	}
	return nil, fmt.Errorf("kind %s %s is not one the test knows", apiVersion, kind)
}

// loadManifests reads every YAML file in deploy/k8s, each document into
// its Kubernetes API type, refusing any field the type does not have.
func loadManifests(t *testing.T) []manifest {
	t.Helper()
	dir := filepath.Join(deployDir, "k8s")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []manifest
	for _, e := range entries {
		name := filepath.Join(dir, e.Name())
		if e.IsDir() {
			continue
		}
		if ext := filepath.Ext(name); ext != ".yaml" && ext != ".yml" {
			t.Errorf("%s: deploy/k8s holds only manifests (.yaml)", name)
			continue
		}
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range splitYAML(data) {
			js, err := yaml.YAMLToJSON(doc)
			if err != nil {
				t.Errorf("%s document %d: %v", name, i+1, err)
				continue
			}
			var head struct {
				APIVersion string `json:"apiVersion"`
				Kind       string `json:"kind"`
			}
			if err := json.Unmarshal(js, &head); err != nil {
				t.Errorf("%s document %d: %v", name, i+1, err)
				continue
			}
			obj, err := newObject(head.APIVersion, head.Kind)
			if err != nil {
				t.Errorf("%s document %d: %v", name, i+1, err)
				continue
			}
			dec := json.NewDecoder(bytes.NewReader(js))
			dec.DisallowUnknownFields()
			if err := dec.Decode(obj); err != nil {
				t.Errorf("%s document %d (%s): %v", name, i+1, head.Kind, err)
				continue
			}
			out = append(out, manifest{file: name, kind: head.Kind, obj: obj})
		}
	}
	return out
}

// splitYAML cuts a file at its "---" lines, dropping empty documents.
func splitYAML(data []byte) [][]byte {
	var docs [][]byte
	for _, d := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(data), -1) {
		body := regexp.MustCompile(`(?m)^\s*#.*$`).ReplaceAllString(d, "")
		if strings.TrimSpace(body) != "" {
			docs = append(docs, []byte(d))
		}
	}
	return docs
}

// expand replaces $(VAR) in an argument as the kubelet does, from the
// container's env (a field reference is given the sample value), and
// JOB_COMPLETION_INDEX, which an Indexed Job sets itself, as 0.
func expand(arg string, env []corev1.EnvVar, fieldValue string) string {
	for _, e := range env {
		v := e.Value
		if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
			v = fieldValue
		}
		arg = strings.ReplaceAll(arg, "$("+e.Name+")", v)
	}
	return strings.ReplaceAll(arg, "$(JOB_COMPLETION_INDEX)", "0")
}

// denormArgs is the argument list a container gives denorm: its args, after
// its command's own arguments when the command is the denorm binary. ok is
// false for a container that runs something else (a shell, say).
func denormArgs(c corev1.Container) (args []string, ok bool) {
	if len(c.Command) == 0 {
		return c.Args, len(c.Args) > 0
	}
	if filepath.Base(c.Command[0]) != "denorm" {
		return nil, false
	}
	return append(append([]string(nil), c.Command[1:]...), c.Args...), true
}

// checkArgs parses a container's arguments with the denorm command itself,
// so a manifest naming a flag the command lacks fails here.
func checkArgs(t *testing.T, where string, c corev1.Container, podName string) map[string]string {
	t.Helper()
	raw, ok := denormArgs(c)
	if !ok {
		t.Fatalf("%s: container %s does not run denorm", where, c.Name)
	}
	args := make([]string, len(raw))
	for i, a := range raw {
		args[i] = expand(a, c.Env, podName)
	}
	root := newRootCmd()
	cmd, rest, err := root.Find(args)
	if err != nil || cmd == root {
		t.Fatalf("%s: %q is not a denorm command: %v", where, args, err)
	}
	if err := cmd.ParseFlags(rest); err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	flags := map[string]string{}
	for _, name := range []string{"schema", "from", "store", "metrics-addr", "addr", "shutdown-timeout", "timeout"} {
		if f := cmd.Flags().Lookup(name); f != nil && f.Changed {
			flags[name] = f.Value.String()
		} else if f := cmd.InheritedFlags().Lookup(name); f != nil && f.Changed {
			flags[name] = f.Value.String()
		}
	}
	return flags
}

func containerPort(t *testing.T, where string, c corev1.Container, name string) int32 {
	t.Helper()
	for _, p := range c.Ports {
		if p.Name == name {
			return p.ContainerPort
		}
	}
	t.Fatalf("%s: no container port named %q", where, name)
	return 0
}

func listenPort(t *testing.T, where, addr string) int32 {
	t.Helper()
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("%s: address %q: %v", where, addr, err)
	}
	var n int32
	if _, err := fmt.Sscan(port, &n); err != nil {
		t.Fatalf("%s: port %q: %v", where, port, err)
	}
	return n
}

// Every manifest decodes strictly into its API type; the sink and serve
// workloads run commands and flags the binary has, with ports, probes and
// grace periods that agree with those flags.
func TestDeployManifests(t *testing.T) {
	ms := loadManifests(t)
	var sink *appsv1.StatefulSet
	var serve *appsv1.Deployment
	services := map[string]*corev1.Service{}
	for _, m := range ms {
		switch o := m.obj.(type) {
		case *appsv1.StatefulSet:
			if o.Name == "denorm-sink" {
				sink = o
			}
		case *appsv1.Deployment:
			if o.Name == "denorm-serve" {
				serve = o
			}
		case *corev1.Service:
			services[o.Name] = o
		}
		for _, c := range podContainers(m.obj) {
			if c.Image == "" {
				t.Errorf("%s: container %s has no image", m.file, c.Name)
			}
			if _, ok := denormArgs(c); ok {
				checkArgs(t, m.file+" "+c.Name, c, "pod-0")
			}
		}
	}
	if sink == nil || serve == nil {
		t.Fatalf("want the StatefulSet denorm-sink and the Deployment denorm-serve; have %d manifests", len(ms))
	}

	// The sink: the pod name is the static group member id, the grace
	// period outlasts --shutdown-timeout, readiness is /readyz on the
	// metrics port, and the headless Service selects the pods.
	pod := sink.Spec.Template.Spec
	c := pod.Containers[0]
	flags := checkArgs(t, "sink", c, "denorm-sink-2")
	u, err := source.ParseKafkaURL(flags["from"])
	if err != nil {
		t.Fatalf("sink --from: %v", err)
	}
	if u.Instance != "denorm-sink-2" || u.Group == "" {
		t.Errorf("sink --from %s: instance %q group %q; want the pod name as instance, and a group", flags["from"], u.Instance, u.Group)
	}
	var podNameEnv bool
	for _, e := range c.Env {
		if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.name" && strings.Contains(strings.Join(c.Args, " "), "$("+e.Name+")") {
			podNameEnv = true
		}
	}
	if !podNameEnv {
		t.Error("sink: no env var from metadata.name is used in the arguments")
	}
	grace, err := time.ParseDuration(flags["shutdown-timeout"])
	if err != nil || pod.TerminationGracePeriodSeconds == nil || time.Duration(*pod.TerminationGracePeriodSeconds)*time.Second <= grace {
		t.Errorf("sink: terminationGracePeriodSeconds %v must exceed --shutdown-timeout %s", pod.TerminationGracePeriodSeconds, flags["shutdown-timeout"])
	}
	if port := containerPort(t, "sink", c, "metrics"); port != listenPort(t, "sink --metrics-addr", flags["metrics-addr"]) {
		t.Errorf("sink: container port %d is not --metrics-addr %s", port, flags["metrics-addr"])
	}
	if p := c.ReadinessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/readyz" || p.HTTPGet.Port.String() != "metrics" {
		t.Errorf("sink readiness probe %+v: want GET /readyz on the metrics port", p)
	}
	if p := c.LivenessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/healthz" {
		t.Errorf("sink liveness probe %+v: want GET /healthz", p)
	}
	if svc := services[sink.Spec.ServiceName]; svc == nil || svc.Spec.ClusterIP != corev1.ClusterIPNone || !selects(svc, sink.Spec.Template.Labels) {
		t.Errorf("sink: serviceName %q must be a headless Service selecting its pods", sink.Spec.ServiceName)
	}
	if !selectsLabels(sink.Spec.Selector.MatchLabels, sink.Spec.Template.Labels) {
		t.Error("sink: the selector does not match the pod template")
	}

	// serve: a Service in front of the HTTP port, which is --addr.
	sc := serve.Spec.Template.Spec.Containers[0]
	sflags := checkArgs(t, "serve", sc, "pod-0")
	if port := containerPort(t, "serve", sc, "http"); port != listenPort(t, "serve --addr", sflags["addr"]) {
		t.Errorf("serve: container port %d is not --addr %s", port, sflags["addr"])
	}
	if !selectsLabels(serve.Spec.Selector.MatchLabels, serve.Spec.Template.Labels) {
		t.Error("serve: the selector does not match the pod template")
	}
	var front *corev1.Service
	for _, s := range services {
		if s.Spec.ClusterIP != corev1.ClusterIPNone && selects(s, serve.Spec.Template.Labels) {
			front = s
		}
	}
	if front == nil || front.Spec.Ports[0].TargetPort.String() != "http" {
		t.Errorf("serve: no Service forwards to its http port")
	}
	if p := sc.ReadinessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/healthz" {
		t.Errorf("serve readiness probe %+v: want GET /healthz", p)
	}
}

func podContainers(obj any) []corev1.Container {
	var spec *corev1.PodSpec
	switch o := obj.(type) {
	case *appsv1.StatefulSet:
		spec = &o.Spec.Template.Spec
	case *appsv1.Deployment:
		spec = &o.Spec.Template.Spec
	case *batchv1.Job:
		spec = &o.Spec.Template.Spec
	case *batchv1.CronJob:
		spec = &o.Spec.JobTemplate.Spec.Template.Spec
	default:
		return nil
	}
	// Init containers run denorm too (the reconcile plan step): their
	// arguments are checked like the others'.
	return append(append([]corev1.Container(nil), spec.InitContainers...), spec.Containers...)
}

func selects(s *corev1.Service, labels map[string]string) bool {
	return len(s.Spec.Selector) > 0 && selectsLabels(s.Spec.Selector, labels)
}

func selectsLabels(sel, labels map[string]string) bool {
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return len(sel) > 0
}

// registeredMetrics lists the metric names sink, serve and reconcile
// --metrics-file export, each family as Prometheus exposes it (histograms
// with their _bucket, _sum and _count series).
func registeredMetrics(t *testing.T) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	addFamily := func(name string, typ string) {
		names[name] = true
		if typ == "HISTOGRAM" {
			for _, s := range []string{"_bucket", "_sum", "_count"} {
				names[name+s] = true
			}
		}
	}
	// Vectors appear once they have a child: give every one a value.
	sm := newSinkMetrics(&fakeKafka{})
	sm.progress(write.Stats{Events: 1, Cells: map[string]int{"t": 1}, Deletes: map[string]int{"t": 1}})
	sm.latency.Observe(0.1)
	sm.dead.Inc()
	vm := newServeMetrics()
	vm.queries.WithLabelValues("q", "200").Inc()
	vm.latency.WithLabelValues("q").Observe(0.01)
	vm.stale.WithLabelValues("q").Inc()
	vm.repaired.WithLabelValues("q").Inc()
	for _, reg := range []*prometheus.Registry{sm.reg, vm.reg} {
		fams, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fams {
			addFamily(f.GetName(), f.GetType().String())
		}
	}
	rep := &reconcile.Report{Rows: 3, Kinds: map[string]*reconcile.Counts{reconcile.KindIndex: {Valid: 1}}}
	var buf bytes.Buffer
	if err := rep.WriteMetrics(&buf, "orders"); err != nil {
		t.Fatal(err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(&buf)
	if err != nil {
		t.Fatalf("reconcile --metrics-file output does not parse: %v", err)
	}
	for name, f := range fams {
		addFamily(name, f.GetType().String())
	}
	return names
}

// The dashboard is Grafana JSON whose every panel has queries, and every
// denorm metric a query names is one the code exports.
func TestDashboardMetrics(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(deployDir, "grafana", "denorm.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Title  string `json:"title"`
		UID    string `json:"uid"`
		Panels []struct {
			Title   string `json:"title"`
			Type    string `json:"type"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Name       string          `json:"name"`
				Definition string          `json:"definition"`
				Query      json.RawMessage `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatalf("denorm.json: %v", err)
	}
	if dash.Title == "" || dash.UID == "" {
		t.Error("dashboard without title or uid")
	}
	known := registeredMetrics(t)
	metric := regexp.MustCompile(`\bdenorm_[a-zA-Z0-9_]+`)
	var queried []string
	check := func(where, expr string) {
		for _, name := range metric.FindAllString(expr, -1) {
			queried = append(queried, name)
			if !known[name] {
				t.Errorf("%s: %s is not a metric sink, serve or reconcile export", where, name)
			}
		}
	}
	panels := 0
	for _, p := range dash.Panels {
		if p.Type == "row" {
			continue
		}
		panels++
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no queries", p.Title)
		}
		for _, tg := range p.Targets {
			if strings.TrimSpace(tg.Expr) == "" {
				t.Errorf("panel %q has an empty query", p.Title)
			}
			check("panel "+p.Title, tg.Expr)
		}
	}
	for _, v := range dash.Templating.List {
		check("variable "+v.Name, v.Definition+string(v.Query))
	}
	// The dashboard covers each program: sink, serve and reconcile.
	for _, prefix := range []string{"denorm_sink_", "denorm_query", "denorm_reconcile_"} {
		if !slices.ContainsFunc(queried, func(n string) bool { return strings.HasPrefix(n, prefix) }) {
			t.Errorf("no panel queries %s* metrics", prefix)
		}
	}
	if panels < 10 {
		t.Errorf("%d panels", panels)
	}
}
