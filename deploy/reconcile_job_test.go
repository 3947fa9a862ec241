// Package deploy holds the deployment manifests' tests: each manifest is
// decoded strictly into the Kubernetes API types, so a misspelt or
// misplaced field fails here rather than on a cluster.
package deploy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// decodeStrict decodes one YAML document into v; unknown fields are errors.
func decodeStrict(doc []byte, v any) error {
	j, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// documents splits a multi-document YAML file, dropping empty documents.
func documents(b []byte) [][]byte {
	var out [][]byte
	for _, d := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(b), -1) {
		if strings.TrimSpace(regexp.MustCompile(`(?m)^\s*#.*$`).ReplaceAllString(d, "")) != "" {
			out = append(out, []byte(d))
		}
	}
	return out
}

func TestReconcileJobManifest(t *testing.T) {
	const path = "k8s/reconcile-job.yaml"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	jobs := map[string]*batchv1.Job{}
	claims := map[string]bool{}
	for i, doc := range documents(b) {
		var meta struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		j, err := yaml.YAMLToJSON(doc)
		if err != nil {
			t.Fatalf("%s document %d: %v", path, i+1, err)
		}
		if err := json.Unmarshal(j, &meta); err != nil {
			t.Fatalf("%s document %d: %v", path, i+1, err)
		}
		switch meta.APIVersion + " " + meta.Kind {
		case "batch/v1 Job":
			var job batchv1.Job
			if err := decodeStrict(doc, &job); err != nil {
				t.Fatalf("%s document %d (Job): %v", path, i+1, err)
			}
			jobs[job.Name] = &job
		case "v1 PersistentVolumeClaim":
			var pvc corev1.PersistentVolumeClaim
			if err := decodeStrict(doc, &pvc); err != nil {
				t.Fatalf("%s document %d (PersistentVolumeClaim): %v", path, i+1, err)
			}
			claims[pvc.Name] = true
		default:
			t.Fatalf("%s document %d: unexpected %s %s", path, i+1, meta.APIVersion, meta.Kind)
		}
	}
	plan, run, merge := jobs["denorm-reconcile-plan"], jobs["denorm-reconcile"], jobs["denorm-reconcile-merge"]
	if plan == nil || run == nil || merge == nil {
		t.Fatalf("want the plan, run and merge Jobs, have %v", keys(jobs))
	}
	for name, job := range jobs {
		checkPod(t, name, job.Spec.Template.Spec, claims)
	}
	s := run.Spec
	if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion {
		t.Fatalf("the run Job is not Indexed: %v", s.CompletionMode)
	}
	if s.Completions == nil || s.Parallelism == nil || s.BackoffLimitPerIndex == nil {
		t.Fatal("the run Job needs completions, parallelism and backoffLimitPerIndex")
	}
	if *s.Parallelism > *s.Completions {
		t.Errorf("parallelism %d over completions %d", *s.Parallelism, *s.Completions)
	}
	if s.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("backoffLimitPerIndex needs restartPolicy Never, have %q", s.Template.Spec.RestartPolicy)
	}
	planArgs := args(plan)
	if !slices.Contains(planArgs, fmt.Sprintf("--parts=%d", *s.Completions)) {
		t.Errorf("the plan's --parts must equal the completions (%d): %q", *s.Completions, planArgs)
	}
	runArgs := args(run)
	if len(runArgs) < 2 || runArgs[0] != "reconcile" || runArgs[1] != "run" || slices.ContainsFunc(runArgs, func(a string) bool { return strings.HasPrefix(a, "--part=") || a == "--part" }) {
		t.Errorf("the run Job must run `reconcile run` taking its part from JOB_COMPLETION_INDEX: %q", runArgs)
	}
	if out := flag(planArgs, "--out"); out == "" || flag(runArgs, "--plan") != out {
		t.Errorf("the plan writes %q, the parts read %q", out, flag(runArgs, "--plan"))
	}
	mergeArgs := args(merge)
	if len(mergeArgs) < 3 || mergeArgs[1] != "merge" || mergeArgs[2] != flag(runArgs, "--out") {
		t.Errorf("merge must read the parts' results directory %q: %q", flag(runArgs, "--out"), mergeArgs)
	}
	// The merge waits for every part's result.
	var waits string
	for _, c := range merge.Spec.Template.Spec.InitContainers {
		waits += strings.Join(c.Command, " ")
	}
	if !strings.Contains(waits, fmt.Sprintf("-ge %d", *s.Completions)) {
		t.Errorf("the merge's init container must wait for %d results: %q", *s.Completions, waits)
	}
}

// checkPod checks what every pod of the manifest needs: a denorm container,
// volumes that exist, claims the manifest defines.
func checkPod(t *testing.T, name string, pod corev1.PodSpec, claims map[string]bool) {
	t.Helper()
	vols := map[string]bool{}
	for _, v := range pod.Volumes {
		vols[v.Name] = true
		if v.PersistentVolumeClaim != nil && !claims[v.PersistentVolumeClaim.ClaimName] {
			t.Errorf("%s: claim %s is not in the manifest", name, v.PersistentVolumeClaim.ClaimName)
		}
	}
	for _, c := range append(slices.Clone(pod.InitContainers), pod.Containers...) {
		for _, m := range c.VolumeMounts {
			if !vols[m.Name] {
				t.Errorf("%s container %s mounts %s, which is not a volume", name, c.Name, m.Name)
			}
		}
	}
	if len(pod.Containers) != 1 || len(pod.Containers[0].Command) == 0 || pod.Containers[0].Command[0] != "denorm" {
		t.Errorf("%s: want one denorm container", name)
	}
	if lim, ok := pod.Containers[0].Resources.Limits[corev1.ResourceMemory]; !ok || lim.IsZero() {
		t.Errorf("%s: no memory limit", name)
	}
}

func args(job *batchv1.Job) []string { return job.Spec.Template.Spec.Containers[0].Args }

func flag(args []string, name string) string {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v
		}
	}
	return ""
}

func keys(m map[string]*batchv1.Job) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// The strict decoding this test relies on: a misplaced field is an error.
func TestDecodeStrictRefusesUnknownFields(t *testing.T) {
	doc := []byte("apiVersion: batch/v1\nkind: Job\nmetadata: {name: x}\nspec:\n  completionMode: Indexed\n  backofLimitPerIndex: 3\n")
	var job batchv1.Job
	if err := decodeStrict(doc, &job); err == nil || !strings.Contains(err.Error(), "backofLimitPerIndex") {
		t.Fatalf("a misspelt field decoded: %v", err)
	}
}
