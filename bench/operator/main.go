// Command operator-bench: the yardstick of issue 20, part 1.  It builds a
// GPU fleet of kwok nodes on the sandbox (driver DaemonSets with OnDelete,
// a validator and a gpu-feature-discovery stand-in, workloads with budgets),
// then upgrades it either with the GPU Operator's own upgrade library
// (github.com/NVIDIA/k8s-operator-libs/pkg/upgrade: BuildState + ApplyState
// in a loop, as the operator's upgrade controller reconciles) or by running
// a command (drv-rollout.sh) while it samples the fleet.  Bench tooling, like
// sandbox/: the product stays C and sh.
//
//	operator-bench setup    [flags]           the fleet, fresh (nodes reset, workloads and DaemonSets made anew)
//	operator-bench operator [flags]           the library's reconcile loop until done, failed, stuck or the deadline
//	operator-bench gpudrv   [flags] -- CMD... CMD (drv-rollout.sh ...) with the same sampler and stand-ins
//
// Each run mode prints one line "result key=value ..." for run.sh's table.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	upgradev1 "github.com/NVIDIA/k8s-operator-libs/api/upgrade/v1alpha1"
	"github.com/NVIDIA/k8s-operator-libs/pkg/upgrade"
	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/record"
)

const (
	driverNS   = "gpu-operator"
	workNS     = "bench-work"
	stateLabel = "nvidia.com/gpu-driver-upgrade-state"
	lMajor     = "nvidia.com/cuda.driver.major"
	lMinor     = "nvidia.com/cuda.driver.minor"
	lRev       = "nvidia.com/cuda.driver.rev"
	lFull      = "nvidia.com/cuda.driver-version.full"
	lPair      = "bench.gpudrv/pair"
	lRole      = "bench.gpudrv/role"
	lDS        = "bench.gpudrv/ds"
	// The bench's fleet: its GPU nodes alone, whatever other GPU nodes the
	// sandbox has (the lab's, after make lab): both tools, the DaemonSets
	// and the monitors take these.
	lFleet       = "bench.gpudrv/fleet"
	fleetSel     = "nvidia.com/gpu.present=true," + lFleet + "=true"
	compKey      = "app.kubernetes.io/component"
	compVal      = "nvidia-driver"
	validatorSel = "app=nvidia-operator-validator"
	fieldManager = "operator-bench"
)

// The kernels and OS releases of the fleet: one driver DaemonSet each, as
// the GPU Operator makes one per kernel for precompiled drivers.
var kernels = []struct{ id, kernel, os, ver string }{
	{"k1", "5.15.0-107-generic", "ubuntu", "22.04"},
	{"k2", "5.15.0-119-generic", "ubuntu", "22.04"},
	{"k3", "6.8.0-45-generic", "ubuntu", "24.04"},
}

type opts struct {
	kubeconfig   string
	nodes        int
	prefix       string
	registry     string // host:port/nvidia/driver
	oldVersion   string
	newVersion   string
	par          int
	maxUnav      string
	drainTimeout int
	deadline     time.Duration
	stall        time.Duration
	interval     time.Duration
	out          string
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: operator-bench setup|operator|gpudrv [flags] [-- command...]")
		os.Exit(2)
	}
	mode := os.Args[1]
	fs := flag.NewFlagSet(mode, flag.ExitOnError)
	var o opts
	fs.StringVar(&o.kubeconfig, "kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig")
	fs.IntVar(&o.nodes, "n", 200, "GPU nodes")
	fs.StringVar(&o.prefix, "prefix", "gpu-node-", "node name prefix")
	fs.StringVar(&o.registry, "registry", "127.0.0.1:26446/nvidia/driver", "driver image repository")
	fs.StringVar(&o.oldVersion, "old", "550.90.07", "driver before")
	fs.StringVar(&o.newVersion, "new", "570.86.10", "driver after")
	fs.IntVar(&o.par, "p", 1, "maxParallelUpgrades (sampler: for the report)")
	fs.StringVar(&o.maxUnav, "u", "25%", "maxUnavailable")
	fs.IntVar(&o.drainTimeout, "drain-timeout", 60, "drain timeout, seconds")
	fs.DurationVar(&o.deadline, "deadline", 60*time.Minute, "stop the run after this long")
	fs.DurationVar(&o.stall, "stall", 0, "operator: stop when no node changed state for this long with none left to start (0: 2x drain timeout)")
	fs.DurationVar(&o.interval, "resync", 30*time.Second, "operator: reconcile at least this often (events trigger it sooner)")
	fs.StringVar(&o.out, "out", "bench/out/operator", "directory for logs")
	_ = fs.Parse(os.Args[2:])
	if o.stall == 0 {
		o.stall = 2 * time.Duration(o.drainTimeout) * time.Second
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", o.kubeconfig)
	check(err)
	// controller-runtime's GetConfig defaults (what the operator's manager gets).
	cfg.QPS, cfg.Burst = 20, 30
	ctx := context.Background()
	switch mode {
	case "setup":
		setup(ctx, cfg, &o)
	case "operator":
		runOperator(ctx, cfg, &o)
	case "gpudrv":
		runCommand(ctx, cfg, &o, fs.Args())
	default:
		fmt.Fprintln(os.Stderr, "unknown mode", mode)
		os.Exit(2)
	}
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "operator-bench:", err)
		os.Exit(1)
	}
}

func logf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "%s %s\n", time.Now().UTC().Format("15:04:05"), fmt.Sprintf(format, a...))
}

func nodeName(o *opts, i int) string { return fmt.Sprintf("%s%03d", o.prefix, i) }

// The fleet's shape: the blocked node in the middle, the others in pairs in
// name order, an odd one out with a workload no budget covers.
type fleet struct {
	blocked string
	pairs   [][2]string
	single  []string
}

func shape(o *opts) fleet {
	f := fleet{blocked: nodeName(o, o.nodes/2)}
	var rest []string
	for i := 0; i < o.nodes; i++ {
		if n := nodeName(o, i); n != f.blocked {
			rest = append(rest, n)
		}
	}
	for len(rest) >= 2 {
		f.pairs = append(f.pairs, [2]string{rest[0], rest[1]})
		rest = rest[2:]
	}
	f.single = rest
	return f
}

func splitVersion(v string) (string, string, string) {
	p := strings.SplitN(v, ".", 3)
	for len(p) < 3 {
		p = append(p, "")
	}
	return p[0], p[1], p[2]
}

func ptr[T any](v T) *T { return &v }

// ---------------------------------------------------------------- setup

func setup(ctx context.Context, cfg *rest.Config, o *opts) {
	t0 := time.Now()
	cs := kubernetes.NewForConfigOrDie(cfg)
	f := shape(o)
	maj, min, rev := splitVersion(o.oldVersion)
	// Old workloads and DaemonSets go first (their pods with them).
	for _, ns := range []string{workNS, driverNS} {
		err := cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			check(err)
		}
	}
	for _, ns := range []string{workNS, driverNS} {
		for {
			_, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				break
			}
			time.Sleep(time.Second)
		}
	}
	logf("setup: old namespaces gone (%.0fs)", time.Since(t0).Seconds())
	for _, ns := range []string{workNS, driverNS, "gpudrv"} {
		_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			check(err)
		}
	}
	// Nodes: created or put back (driver old, no state, schedulable).
	role := map[string]string{f.blocked: "blocked"}
	pairOf := map[string]string{}
	for i, p := range f.pairs {
		for _, n := range p {
			role[n] = "pair"
			pairOf[n] = fmt.Sprintf("p%03d", i)
		}
	}
	for _, n := range f.single {
		role[n] = "single"
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i := 0; i < o.nodes; i++ {
		name := nodeName(o, i)
		k := kernels[i%len(kernels)]
		labels := map[string]string{
			"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64", "type": "kwok",
			"nvidia.com/gpu.present":                                  "true",
			"nvidia.com/gpu.deploy.driver":                            "true",
			"feature.node.kubernetes.io/kernel-version.full":          k.kernel,
			"feature.node.kubernetes.io/system-os_release.ID":         k.os,
			"feature.node.kubernetes.io/system-os_release.VERSION_ID": k.ver,
			lMajor: maj, lMinor: min, lRev: rev, lFull: o.oldVersion,
			lRole: role[name], lDS: k.id, lFleet: "true",
		}
		if p, ok := pairOf[name]; ok {
			labels[lPair] = p
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			check(putNode(ctx, cs, name, labels))
		}()
	}
	wg.Wait()
	// Nodes of ours beyond N (a larger fleet before) go.
	nl, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: lRole})
	check(err)
	for _, n := range nl.Items {
		var i int
		if _, e := fmt.Sscanf(strings.TrimPrefix(n.Name, o.prefix), "%d", &i); e == nil && strings.HasPrefix(n.Name, o.prefix) && i >= o.nodes {
			check(cs.CoreV1().Nodes().Delete(ctx, n.Name, metav1.DeleteOptions{}))
		}
	}
	logf("setup: %d nodes put back (%.0fs)", o.nodes, time.Since(t0).Seconds())
	// Every node Ready (kwok).
	waitFor(ctx, "nodes Ready", 120*time.Second, func() (bool, string) {
		nl, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: fleetSel})
		if err != nil {
			return false, err.Error()
		}
		r := 0
		for i := range nl.Items {
			if nodeReady(&nl.Items[i]) {
				r++
			}
		}
		return r == o.nodes && len(nl.Items) == o.nodes, fmt.Sprintf("%d/%d Ready", r, len(nl.Items))
	})
	// The driver DaemonSets (one a kernel), OnDelete, and the validator.
	for _, k := range kernels {
		ds := driverDS(o, k.id, k.kernel, k.os+k.ver, "550")
		_, err := cs.AppsV1().DaemonSets(driverNS).Create(ctx, ds, metav1.CreateOptions{})
		check(err)
	}
	_, err = cs.AppsV1().DaemonSets(driverNS).Create(ctx, validatorDS(), metav1.CreateOptions{})
	check(err)
	// The workloads: a Deployment of 2 a pair (one pod a node, held to the
	// pair), its budget maxUnavailable 1; the blocked node's 2 pods under
	// minAvailable 2; a budget-free one on the odd node out.
	for i, p := range f.pairs {
		name := fmt.Sprintf("pair-%03d", i)
		check(workload(ctx, cs, name, 2, map[string]string{lPair: pairOf[p[0]]}, true))
		check(budget(ctx, cs, name, nil, ptr(intstr.FromInt(1))))
	}
	check(workload(ctx, cs, "blocked", 2, map[string]string{"kubernetes.io/hostname": f.blocked}, false))
	check(budget(ctx, cs, "blocked", ptr(intstr.FromInt(2)), nil))
	for i, n := range f.single {
		check(workload(ctx, cs, fmt.Sprintf("single-%d", i), 1, map[string]string{"kubernetes.io/hostname": n}, false))
	}
	logf("setup: DaemonSets, workloads, budgets created (%.0fs)", time.Since(t0).Seconds())
	wantWork := 2*len(f.pairs) + 2 + len(f.single)
	waitFor(ctx, "every pod Ready and every budget settled", 600*time.Second, func() (bool, string) {
		dr, dn := readyPods(ctx, cs, driverNS, compKey+"="+compVal)
		vr, _ := readyPods(ctx, cs, driverNS, validatorSel)
		wr, _ := readyPods(ctx, cs, workNS, "")
		pl, err := cs.PolicyV1().PodDisruptionBudgets(workNS).List(ctx, metav1.ListOptions{})
		settled := 0
		if err == nil {
			for _, b := range pl.Items {
				if b.Status.ObservedGeneration == b.Generation && b.Status.ExpectedPods > 0 && b.Status.CurrentHealthy == b.Status.ExpectedPods {
					settled++
				}
			}
		}
		msg := fmt.Sprintf("driver %d/%d, validator %d/%d, workload %d/%d, budgets %d/%d", dr, dn, vr, o.nodes, wr, wantWork, settled, len(f.pairs)+1)
		return dr == o.nodes && dn == o.nodes && vr == o.nodes && wr == wantWork && settled == len(f.pairs)+1, msg
	})
	// The pairs as planned: each pair's two pods on its two nodes.
	pl, err := cs.CoreV1().Pods(workNS).List(ctx, metav1.ListOptions{})
	check(err)
	on := map[string][]string{}
	for _, p := range pl.Items {
		on[p.Labels["app"]] = append(on[p.Labels["app"]], p.Spec.NodeName)
	}
	for i, p := range f.pairs {
		got := on[fmt.Sprintf("pair-%03d", i)]
		sort.Strings(got)
		if len(got) != 2 || got[0] != p[0] || got[1] != p[1] {
			check(fmt.Errorf("pair-%03d's pods are on %v, not %v", i, got, p))
		}
	}
	logf("setup: done in %.0fs: %d nodes, %d pairs, blocked %s, single %v", time.Since(t0).Seconds(), o.nodes, len(f.pairs), f.blocked, f.single)
}

func putNode(ctx context.Context, cs *kubernetes.Clientset, name string, labels map[string]string) error {
	n, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		res := corev1.ResourceList{}
		for k, v := range map[string]string{"cpu": "32", "memory": "256Gi", "pods": "110", "nvidia.com/gpu": "8"} {
			res[corev1.ResourceName(k)] = resource.MustParse(v)
		}
		node := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"}},
			Status:     corev1.NodeStatus{Allocatable: res, Capacity: res},
		}
		_, err = cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	// Put back: our labels, no upgrade label or annotation, schedulable.
	for k := range n.Labels {
		if strings.HasPrefix(k, "nvidia.com/gpu-driver-upgrade") || strings.HasPrefix(k, "bench.gpudrv/") {
			delete(n.Labels, k)
		}
	}
	for k, v := range labels {
		n.Labels[k] = v
	}
	for k := range n.Annotations {
		if strings.HasPrefix(k, "nvidia.com/gpu-driver-upgrade") || strings.HasPrefix(k, "gpudrv/") {
			delete(n.Annotations, k)
		}
	}
	n.Spec.Unschedulable = false
	n.Spec.Taints = nil
	n, err = cs.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
	if err != nil {
		return err
	}
	// A node of an older fleet: its GPUs, which the workloads ask for.
	if _, ok := n.Status.Allocatable["nvidia.com/gpu"]; !ok {
		n.Status.Allocatable["nvidia.com/gpu"] = resource.MustParse("8")
		n.Status.Capacity["nvidia.com/gpu"] = resource.MustParse("8")
		_, err = cs.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
	}
	return err
}

func driverImage(o *opts, branch, kernel, ostag string) string {
	return fmt.Sprintf("%s:%s-%s-%s", o.registry, branch, kernel, ostag)
}

func driverDS(o *opts, id, kernel, ostag, branch string) *appsv1.DaemonSet {
	labels := map[string]string{compKey: compVal, "app": "nvidia-driver-daemonset", lDS: id}
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "nvidia-driver-daemonset-" + kernel + "-" + ostag, Namespace: driverNS,
			Labels: map[string]string{compKey: compVal, "app": "nvidia-driver-daemonset"}},
		Spec: appsv1.DaemonSetSpec{
			Selector:       &metav1.LabelSelector{MatchLabels: labels},
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.OnDeleteDaemonSetStrategyType},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					NodeSelector: map[string]string{"nvidia.com/gpu.deploy.driver": "true", lDS: id, lFleet: "true"},
					Containers:   []corev1.Container{{Name: "nvidia-driver-ctr", Image: driverImage(o, branch, kernel, ostag)}},
				},
			},
		},
	}
}

func validatorDS() *appsv1.DaemonSet {
	labels := map[string]string{"app": "nvidia-operator-validator"}
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "nvidia-operator-validator", Namespace: driverNS, Labels: labels},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					NodeSelector: map[string]string{"nvidia.com/gpu.present": "true", lFleet: "true"},
					Containers:   []corev1.Container{{Name: "nvidia-operator-validator", Image: "nvcr.invalid/validator:stand-in"}},
				},
			},
		},
	}
}

// holdsGPU: the pod deletion's filter, as the GPU Operator's own selects the
// pods it deletes: Running or Pending, a container asking for nvidia.com/gpu*
// or nvidia.com/mig-* (resource claims aside: the bench's pods hold none).
func holdsGPU(pod corev1.Pod) bool {
	if pod.Status.Phase != corev1.PodRunning && pod.Status.Phase != corev1.PodPending {
		return false
	}
	gpu := func(rl corev1.ResourceList) bool {
		for r := range rl {
			if strings.HasPrefix(string(r), "nvidia.com/gpu") || strings.HasPrefix(string(r), "nvidia.com/mig-") {
				return true
			}
		}
		return false
	}
	for _, c := range pod.Spec.Containers {
		if gpu(c.Resources.Limits) || gpu(c.Resources.Requests) {
			return true
		}
	}
	return false
}

func workload(ctx context.Context, cs *kubernetes.Clientset, name string, replicas int32, sel map[string]string, spread bool) error {
	labels := map[string]string{"app": name}
	// Each replica holds a GPU: the pods the operator's pod deletion takes.
	gpu := corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}
	spec := corev1.PodSpec{
		NodeSelector: sel,
		Containers: []corev1.Container{{Name: "train", Image: "registry.invalid/trainer:1",
			Resources: corev1.ResourceRequirements{Limits: gpu, Requests: gpu}}},
	}
	if spread {
		spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchLabels: labels}, TopologyKey: "kubernetes.io/hostname"}}}}
	}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: workNS},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec},
		},
	}
	_, err := cs.AppsV1().Deployments(workNS).Create(ctx, d, metav1.CreateOptions{})
	return err
}

func budget(ctx context.Context, cs *kubernetes.Clientset, name string, minAv, maxUn *intstr.IntOrString) error {
	b := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-pdb", Namespace: workNS},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: minAv, MaxUnavailable: maxUn,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}}},
	}
	_, err := cs.PolicyV1().PodDisruptionBudgets(workNS).Create(ctx, b, metav1.CreateOptions{})
	return err
}

func waitFor(ctx context.Context, what string, limit time.Duration, f func() (bool, string)) {
	end := time.Now().Add(limit)
	last := time.Time{}
	for {
		ok, msg := f()
		if ok {
			return
		}
		if time.Now().After(end) {
			check(fmt.Errorf("no %s after %s: %s", what, limit, msg))
		}
		if time.Since(last) > 10*time.Second {
			logf("waiting for %s: %s", what, msg)
			last = time.Now()
		}
		time.Sleep(time.Second)
	}
}

func podReady(p *corev1.Pod) (bool, time.Time) {
	if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
		return false, time.Time{}
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return true, c.LastTransitionTime.Time
		}
	}
	return false, time.Time{}
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func readyPods(ctx context.Context, cs *kubernetes.Clientset, ns, sel string) (int, int) {
	pl, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return -1, -1
	}
	r := 0
	for i := range pl.Items {
		if ok, _ := podReady(&pl.Items[i]); ok {
			r++
		}
	}
	return r, len(pl.Items)
}

// ------------------------------------------------- stand-ins and sampler

// world: what a run shares: the uncounted client of the bench itself, the
// new-driver delays the GFD stand-in saw, the sampler's figures.
type world struct {
	o        *opts
	cs       *kubernetes.Clientset
	f        fleet
	mu       sync.Mutex
	delays   map[string]float64 // node -> new driver pod: created to Ready, seconds
	samples  int
	violate  int    // samples with both nodes of a pair cordoned
	violPair string // the first pair seen so
	maxUnav  int
	allowUn  int
	lastMove time.Time
	states   map[string]string
}

func newWorld(cfg *rest.Config, o *opts) *world {
	c := rest.CopyConfig(cfg)
	c.QPS, c.Burst = 50, 100
	w := &world{o: o, cs: kubernetes.NewForConfigOrDie(c), f: shape(o), delays: map[string]float64{}, states: map[string]string{}, lastMove: time.Now()}
	w.allowUn, _ = intstr.GetScaledValueFromIntOrPercent(ptr(intstr.Parse(o.maxUnav)), o.nodes, true)
	return w
}

// gfd: gpu-feature-discovery's part: once the driver pod of the new
// version on a node is Ready, the node's driver labels say so.
func (w *world) gfd(ctx context.Context) {
	maj, min, rev := splitVersion(w.o.newVersion)
	branch := maj + "-"
	for ctx.Err() == nil {
		pl, err := w.cs.CoreV1().Pods(driverNS).List(ctx, metav1.ListOptions{LabelSelector: compKey + "=" + compVal})
		if err == nil {
			nl, err2 := w.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: fleetSel})
			if err2 == nil {
				have := map[string]string{}
				for _, n := range nl.Items {
					have[n.Name] = n.Labels[lFull]
				}
				for i := range pl.Items {
					p := &pl.Items[i]
					ok, at := podReady(p)
					if !ok || len(p.Spec.Containers) == 0 {
						continue
					}
					img := p.Spec.Containers[0].Image
					if !strings.Contains(img, ":"+branch) || have[p.Spec.NodeName] == w.o.newVersion {
						continue
					}
					patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q,%q:%q,%q:%q,%q:%q}}}`, lMajor, maj, lMinor, min, lRev, rev, lFull, w.o.newVersion)
					_, err := w.cs.CoreV1().Nodes().Patch(ctx, p.Spec.NodeName, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
					if err == nil {
						w.mu.Lock()
						w.delays[p.Spec.NodeName] = at.Sub(p.CreationTimestamp.Time).Seconds()
						w.mu.Unlock()
					}
				}
			}
		}
		sleepCtx(ctx, time.Second)
	}
}

func sleepCtx(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// sample: every second, the nodes: cordoned or not Ready, and the pairs.
func (w *world) sample(ctx context.Context) {
	for ctx.Err() == nil {
		nl, err := w.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: fleetSel})
		if err == nil {
			cord := map[string]bool{}
			un := 0
			w.mu.Lock()
			for i := range nl.Items {
				n := &nl.Items[i]
				cord[n.Name] = n.Spec.Unschedulable
				if n.Spec.Unschedulable || !nodeReady(n) {
					un++
				}
				s := n.Labels[stateLabel]
				if w.states[n.Name] != s {
					w.states[n.Name] = s
					w.lastMove = time.Now()
				}
			}
			w.samples++
			bad := false
			for _, p := range w.f.pairs {
				if cord[p[0]] && cord[p[1]] {
					bad = true
					if w.violPair == "" {
						w.violPair = p[0] + "+" + p[1]
					}
				}
			}
			if bad {
				w.violate++
			}
			if un > w.maxUnav {
				w.maxUnav = un
			}
			w.mu.Unlock()
		}
		sleepCtx(ctx, time.Second)
	}
}

// counts of the nodes' states, and the driver at the end.
func (w *world) tally(ctx context.Context) (done, failed, other, newDriver, cordoned int, left []string) {
	nl, err := w.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: fleetSel})
	check(err)
	for _, n := range nl.Items {
		s := n.Labels[stateLabel]
		if n.Labels[lFull] == w.o.newVersion {
			newDriver++
		}
		if n.Spec.Unschedulable {
			cordoned++
		}
		switch {
		case s == "upgrade-done" && n.Labels[lFull] == w.o.newVersion:
			done++
		case s == "upgrade-failed":
			failed++
			left = append(left, n.Name+"=failed")
		default:
			other++
			left = append(left, n.Name+"="+orDash(s))
		}
	}
	sort.Strings(left)
	return
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// report: the one result line.
func (w *world) report(ctx context.Context, tool string, start time.Time, elapsed float64, requests int64, extra string) {
	done, failed, other, newDriver, cordoned, left := w.tally(ctx)
	w.mu.Lock()
	defer w.mu.Unlock()
	sum, max := 0.0, 0.0
	for _, d := range w.delays {
		sum += d
		max = math.Max(max, d)
	}
	p := float64(w.o.par)
	if p <= 0 {
		p = float64(w.o.nodes)
	}
	lb := math.Max(sum/p, max)
	if len(left) > 6 {
		left = append(left[:6], fmt.Sprintf("...+%d", len(left)-6))
	}
	fmt.Fprintf(resultOut, "result tool=%s n=%d p=%d u=%s allowed_unavailable=%d elapsed_s=%.1f done=%d failed=%d other=%d new_driver=%d cordoned_at_end=%d samples=%d violation_samples=%d first_violation=%s max_unavailable=%d requests=%d driver_delays=%d delay_sum_s=%.1f delay_max_s=%.1f lower_bound_s=%.1f left=%s %s\n",
		tool, w.o.nodes, w.o.par, w.o.maxUnav, w.allowUn, elapsed, done, failed, other, newDriver, cordoned,
		w.samples, w.violate, orDash(w.violPair), w.maxUnav, requests, len(w.delays), sum, max, lb, orDash(strings.Join(left, ",")), extra)
}

// newRevision: the upgrade the operator's way: each driver DaemonSet's
// image goes to the new branch (OnDelete: no pod moves until deleted).
func (w *world) newRevision(ctx context.Context) {
	maj, _, _ := splitVersion(w.o.newVersion)
	for _, k := range kernels {
		ds := driverDS(w.o, k.id, k.kernel, k.os+k.ver, maj)
		patch := fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":"nvidia-driver-ctr","image":%q}]}}}}`, ds.Spec.Template.Spec.Containers[0].Image)
		_, err := w.cs.AppsV1().DaemonSets(driverNS).Patch(ctx, ds.Name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{})
		check(err)
	}
	// The new ControllerRevisions exist before anyone compares hashes.
	waitFor(ctx, "new DaemonSet revisions", 60*time.Second, func() (bool, string) {
		dl, err := w.cs.AppsV1().DaemonSets(driverNS).List(ctx, metav1.ListOptions{LabelSelector: compKey + "=" + compVal})
		if err != nil {
			return false, err.Error()
		}
		ok := 0
		for _, d := range dl.Items {
			if d.Status.ObservedGeneration == d.Generation {
				ok++
			}
		}
		return ok == len(kernels), fmt.Sprintf("%d/%d observed", ok, len(kernels))
	})
}

// ---------------------------------------------------------------- operator

type counter struct {
	rt http.RoundTripper
	n  *atomic.Int64
}

func (c counter) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.rt.RoundTrip(r)
}

func runOperator(ctx context.Context, cfg *rest.Config, o *opts) {
	w := newWorld(cfg, o)
	var reqs atomic.Int64
	oc := rest.CopyConfig(cfg)
	oc.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { return counter{rt, &reqs} }
	check(os.MkdirAll(o.out, 0o755))
	logFile, err := os.Create(fmt.Sprintf("%s/operator-n%d-p%d.log", o.out, o.nodes, o.par))
	check(err)
	defer logFile.Close()

	// The library's drain writes kubectl's words to os.Stdout: to the log,
	// with the result line alone on the real standard output.
	resultOut = os.Stdout
	os.Stdout = logFile
	defer func() { os.Stdout = resultOut }()

	upgrade.SetDriverName("gpu")
	oi := kubernetes.NewForConfigOrDie(oc)
	bc := record.NewBroadcaster()
	bc.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: oi.CoreV1().Events("")})
	recorder := bc.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "nvidia-gpu-operator"})
	lg := logr.New(&lineSink{out: logFile})
	mgr, err := upgrade.NewClusterUpgradeStateManager(lg, oc, recorder)
	check(err)
	// As the GPU Operator sets it up: pod deletion of the pods that hold a
	// GPU, validation by its validator's pods.
	mgr = mgr.WithPodDeletionEnabled(holdsGPU).WithValidationEnabled(validatorSel)
	// The operator's defaults (its chart's values): the pods that hold a GPU
	// deleted, emptyDir data kept, no drain; gpudrv's drv-rollout.sh reads
	// the same defaults from a cluster with no policy of its own.
	policy := &upgradev1.DriverUpgradePolicySpec{
		AutoUpgrade:         true,
		MaxParallelUpgrades: o.par,
		MaxUnavailable:      ptr(intstr.Parse(o.maxUnav)),
		PodDeletion:         &upgradev1.PodDeletionSpec{Force: false, TimeoutSecond: o.drainTimeout, DeleteEmptyDir: false},
		WaitForCompletion:   &upgradev1.WaitForCompletionSpec{},
		DrainSpec: &upgradev1.DrainSpec{Enable: false, Force: false, TimeoutSecond: o.drainTimeout, DeleteEmptyDir: false,
			PodSelector: "nvidia.com/gpu-driver-upgrade-drain.skip!=true"},
	}

	// The operator's triggers: a reconcile on a change of a node's labels or
	// cordon and on any DaemonSet change (its status follows the driver
	// pods), coalesced into one request, plus a periodic resync.
	kick := make(chan struct{}, 1)
	poke := func() {
		select {
		case kick <- struct{}{}:
		default:
		}
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	inf := informers.NewSharedInformerFactory(oi, 0)
	inf.Core().V1().Nodes().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { poke() },
		UpdateFunc: func(a, b any) {
			x, y := a.(*corev1.Node), b.(*corev1.Node)
			if !sameMap(x.Labels, y.Labels) || x.Spec.Unschedulable != y.Spec.Unschedulable {
				poke()
			}
		},
	})
	dsInf := informers.NewSharedInformerFactoryWithOptions(oi, 0, informers.WithNamespace(driverNS))
	dsInf.Apps().V1().DaemonSets().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { poke() }, UpdateFunc: func(any, any) { poke() }})
	inf.Start(runCtx.Done())
	dsInf.Start(runCtx.Done())
	inf.WaitForCacheSync(runCtx.Done())
	dsInf.WaitForCacheSync(runCtx.Done())

	go w.gfd(runCtx)
	go w.sample(runCtx)
	w.newRevision(ctx)
	start := time.Now()
	w.lastMove = start
	reqs.Store(0) // the count starts with the upgrade (the caches' first lists before it)
	logf("operator: P=%d maxUnavailable=%s drain timeout %ds on %d nodes", o.par, o.maxUnav, o.drainTimeout, o.nodes)
	reconciles, errs := 0, 0
	why := ""
	lastLog := time.Now()
	for {
		state, err := mgr.BuildState(ctx, driverNS, map[string]string{compKey: compVal})
		if err == nil {
			err = mgr.ApplyState(ctx, state, policy)
		}
		reconciles++
		if err != nil {
			errs++
			fmt.Fprintf(logFile, "reconcile error: %v\n", err)
		}
		if state != nil {
			n := func(s string) int { return len(state.NodeStates[s]) }
			total := mgr.GetTotalManagedNodes(ctx, state)
			doneN, failN := n(upgrade.UpgradeStateDone), n(upgrade.UpgradeStateFailed)
			if time.Since(lastLog) > 15*time.Second {
				logf("operator: %.0fs done %d failed %d in progress %d pending %d", time.Since(start).Seconds(), doneN, failN,
					mgr.GetUpgradesInProgress(ctx, state)-failN, mgr.GetUpgradesPending(ctx, state))
				lastLog = time.Now()
			}
			allNew := true
			for _, ns := range state.NodeStates[upgrade.UpgradeStateDone] {
				if ns.Node.Labels[lFull] != o.newVersion {
					allNew = false
				}
			}
			if total == o.nodes && doneN+failN == total && allNew && time.Since(start) > 5*time.Second {
				why = "every node upgrade-done or upgrade-failed"
				break
			}
			w.mu.Lock()
			still := time.Since(w.lastMove)
			w.mu.Unlock()
			if failN > 0 && still > o.stall {
				why = fmt.Sprintf("stuck: no node changed state for %.0fs, %d upgrade-failed", still.Seconds(), failN)
				break
			}
		}
		if time.Since(start) > o.deadline {
			why = "deadline"
			break
		}
		wait := o.interval
		if err != nil {
			wait = time.Second // requeued after an error, as controller-runtime does
		}
		select {
		case <-kick:
		case <-time.After(wait):
		}
	}
	elapsed := time.Since(start).Seconds()
	if strings.HasPrefix(why, "stuck") {
		// The time the last node moved, not the time we noticed it stopped.
		w.mu.Lock()
		elapsed = w.lastMove.Sub(start).Seconds()
		w.mu.Unlock()
	}
	n := reqs.Load()
	cancel()
	logf("operator: %s after %.0fs (%d reconciles, %d errors)", why, time.Since(start).Seconds(), reconciles, errs)
	w.report(ctx, "operator", start, elapsed, n, fmt.Sprintf("reconciles=%d errors=%d end=%q", reconciles, errs, why))
}

// resultOut: where the result line goes (the real standard output).
var resultOut = os.Stdout

func sameMap(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// lineSink: the library's log, one JSON line a message, to a file.
type lineSink struct {
	out    *os.File
	name   string
	values []any
	mu     sync.Mutex
}

func (s *lineSink) Init(logr.RuntimeInfo)  {}
func (s *lineSink) Enabled(level int) bool { return level <= 1 }
func (s *lineSink) Info(level int, msg string, kv ...any) {
	s.write("info", msg, nil, kv)
}
func (s *lineSink) Error(err error, msg string, kv ...any) { s.write("error", msg, err, kv) }
func (s *lineSink) write(lv, msg string, err error, kv []any) {
	m := map[string]any{"t": time.Now().UTC().Format("15:04:05.000"), "level": lv, "msg": msg}
	if err != nil {
		m["err"] = err.Error()
	}
	all := append(append([]any{}, s.values...), kv...)
	for i := 0; i+1 < len(all); i += 2 {
		k := fmt.Sprint(all[i])
		switch v := all[i+1].(type) {
		case *corev1.Node:
			m[k] = v.Name
		case *corev1.Pod:
			m[k] = v.Name
		case string, int, int64, bool, float64:
			m[k] = v
		default:
			m[k] = fmt.Sprintf("%T", v)
		}
	}
	b, _ := json.Marshal(m)
	s.mu.Lock()
	fmt.Fprintln(s.out, string(b))
	s.mu.Unlock()
}
func (s *lineSink) WithValues(kv ...any) logr.LogSink {
	return &lineSink{out: s.out, name: s.name, values: append(append([]any{}, s.values...), kv...)}
}
func (s *lineSink) WithName(n string) logr.LogSink {
	return &lineSink{out: s.out, name: n, values: s.values}
}

// ---------------------------------------------------------------- gpudrv

// runCommand: the new revision, then CMD with the stand-ins and the
// sampler; requests are the lines the kubectl wrapper wrote to $BENCH_REQLOG.
func runCommand(ctx context.Context, cfg *rest.Config, o *opts, argv []string) {
	if len(argv) == 0 {
		check(fmt.Errorf("gpudrv: no command after --"))
	}
	w := newWorld(cfg, o)
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go w.gfd(runCtx)
	go w.sample(runCtx)
	w.newRevision(ctx)
	reqlog := os.Getenv("BENCH_REQLOG")
	if reqlog != "" {
		_ = os.Remove(reqlog)
	}
	cmdCtx, cancelCmd := context.WithTimeout(ctx, o.deadline)
	defer cancelCmd()
	cmd := exec.CommandContext(cmdCtx, argv[0], argv[1:]...)
	// At the deadline a TERM, which drv-rollout.sh stops on as at its own deadline.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 60 * time.Second
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if f := os.Getenv("BENCH_CMD_OUT"); f != "" {
		out, err := os.Create(f)
		check(err)
		defer out.Close()
		cmd.Stdout, cmd.Stderr = out, out
	}
	start := time.Now()
	logf("gpudrv: %s", strings.Join(argv, " "))
	err := cmd.Run()
	elapsed := time.Since(start).Seconds()
	rc := 0
	if err != nil {
		rc = -1
		if ee, ok := err.(*exec.ExitError); ok {
			rc = ee.ExitCode()
		}
	}
	time.Sleep(1500 * time.Millisecond) // a last sample
	cancel()
	calls, httpReq := 0, 0
	if reqlog != "" {
		if b, err := os.ReadFile(reqlog); err == nil {
			for _, l := range strings.Split(string(b), "\n") {
				if strings.HasPrefix(l, "call ") {
					calls++
				} else if strings.HasPrefix(l, "req ") {
					httpReq++
				}
			}
		}
	}
	logf("gpudrv: exit %d after %.0fs", rc, elapsed)
	w.report(ctx, "gpudrv", start, elapsed, int64(httpReq), fmt.Sprintf("kubectl_calls=%d exit=%d", calls, rc))
}
