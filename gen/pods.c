/* gen: pods and budgets, for pdb-check and the fleet benchmark. */
#include "gen.h"

/*
 * The layout of -p PODS,PDBS NODES: one DaemonSet pod per node
 * (gpu-operator/nvidia-driver-daemonset-*), 1% of the rest Succeeded pods of
 * one-pod Jobs, the others the replicas of PDBS ReplicaSets (each a
 * Deployment's, ~PODS/PDBS replicas, spread over consecutive nodes), ten to a
 * namespace team-NNNN, each with its budget.  Every 97th replica is Running
 * but not Ready.  Names, uids, hashes and times come from the object's index,
 * not from rng, so that every mode names the same objects alike.
 */
static struct {
	long pods, pdbs, nodes;
	long ds, jobs, work, rs, ns; /* DaemonSet pods, Job pods, replicas, ReplicaSets, namespaces */
} L;
int create;             /* -C: objects for kubectl create, one compact JSON a line */
const char *uidfile;    /* -U: the owners' real uids */

enum { D_RSHASH = 1, D_RSUID, D_POD, D_PODUID, D_DS, D_DSUID, D_JOB, D_JOBUID, D_PDBUID,
	D_CTR, D_IMG, D_TIME, D_CFG, D_TOK };

static unsigned long long
mix(int dom, unsigned long long x)
{
	unsigned long long z = (x ^ (unsigned long long)dom << 56) + 0x9e3779b97f4a7c15ULL;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* n characters of Kubernetes' random-name alphabet: hashes, name suffixes */
static void
kname(char *out, int n, int dom, long x)
{
	static const char a[] = "bcdfghjklmnpqrstvwxz2456789";
	unsigned long long z = mix(dom, (unsigned long long)x);
	int i;

	for (i = 0; i < n; i++, z /= 27)
		out[i] = a[z % 27];
	out[n] = '\0';
}

static void
khex(char *out, int n, int dom, long x)
{
	unsigned long long z = 0;
	int i;

	for (i = 0; i < n; i++, z >>= 4) {
		if (i % 16 == 0)
			z = mix(dom, (unsigned long long)x * 8 + (unsigned long long)(i / 16));
		out[i] = "0123456789abcdef"[z & 15];
	}
	out[n] = '\0';
}

static void
kuid(char *out, int dom, long x)
{
	unsigned long long a = mix(dom, 2 * (unsigned long long)x);
	unsigned long long b = mix(dom, 2 * (unsigned long long)x + 1);

	snprintf(out, 40, "%08llx-%04llx-4%03llx-%04llx-%012llx", a >> 32, (a >> 16) & 0xffff,
	    a & 0xfff, ((b >> 48) & 0x3fff) | 0x8000, b & 0xffffffffffffULL);
}

/* s seconds after 2026-11-01T00:00:00Z (under 28 days) */
static void
stamp(char *out, long s)
{
	unsigned long u = (unsigned long)s;

	snprintf(out, 24, "2026-11-%02luT%02lu:%02lu:%02luZ", 1 + u / 86400 % 28, u / 3600 % 24,
	    u / 60 % 60, u % 60);
}

static long
when(int dom, long x)
{
	return (long)(mix(D_TIME, (unsigned long long)dom << 40 ^ (unsigned long long)x) % (20 * 86400));
}

/* The workloads, one of them per ReplicaSet k % 10 of each namespace (sorted by name). */
static const struct app {
	const char *name, *component, *image, *command, *args, *gpus, *cpu, *mem, *probe;
	int port;
} apps[10] = {
	{ "asr-whisper", "inference", "nvcr.io/nvidia/riva/riva-speech:2.17.0",
	  "/opt/riva/bin/start-riva", "--asr_service=true --riva_uri=0.0.0.0:50051", "1", "8",
	  "32Gi", "/v1/health/ready", 50051 },
	{ "batch-scorer", "batch", "registry.example.com/ml/batch-scorer:3.2.1", "python -m",
	  "scorer.serve --port=8080 --batch-size=64", "1", "4", "16Gi", "/healthz", 8080 },
	{ "embedder", "inference", "nvcr.io/nvidia/tritonserver:24.08-py3", "tritonserver",
	  "--model-repository=/models --http-port=8000 --metrics-port=8002", "1", "8", "32Gi",
	  "/v2/health/ready", 8000 },
	{ "feature-store", "serving", "registry.example.com/ml/feature-store:1.9.0", "/app/server",
	  "--port=8080 --cache-dir=/models/cache", "1", "4", "16Gi", "/healthz", 8080 },
	{ "llm-inference", "inference", "nvcr.io/nim/meta/llama-3.1-8b-instruct:1.3.3",
	  "/opt/nim/start_server.sh", "--max-model-len=8192", "2", "16", "128Gi",
	  "/v1/health/ready", 8000 },
	{ "notebook", "interactive", "nvcr.io/nvidia/pytorch:24.08-py3", "jupyter",
	  "lab --ip=0.0.0.0 --port=8888 --no-browser --ServerApp.base_url=/notebook", "1", "8",
	  "64Gi", "/notebook/api", 8888 },
	{ "ray-worker", "training", "rayproject/ray-ml:2.35.0-gpu", "ray",
	  "start --block --address=ray-head:6379 --num-gpus=2", "2", "16", "128Gi", "/", 8265 },
	{ "reranker", "inference", "nvcr.io/nvidia/tritonserver:24.08-py3", "tritonserver",
	  "--model-repository=/models --http-port=8000 --strict-readiness=true", "1", "4", "16Gi",
	  "/v2/health/ready", 8000 },
	{ "trainer", "training", "nvcr.io/nvidia/nemo:24.07", "torchrun",
	  "--nproc_per_node=8 /workspace/train.py --config=/models/config/train.yaml", "8", "32",
	  "512Gi", "/healthz", 29500 },
	{ "vllm-server", "inference", "vllm/vllm-openai:v0.6.1", "python3 -m",
	  "vllm.entrypoints.openai.api_server --model=/models/llama --tensor-parallel-size=2",
	  "2", "16", "96Gi", "/health", 8000 },
};

#define DS_NAME "nvidia-driver-daemonset"
#define DS_NS "gpu-operator"
#define DS_IMAGE "nvcr.io/nvidia/driver:550.90.07-ubuntu22.04"

static long rs_replicas(long k) { return L.work / L.rs + (k < L.work % L.rs); }
static long rs_start(long k) { return k * (L.work / L.rs) + (k < L.work % L.rs ? k : L.work % L.rs); }
static int unready(long w) { return w % 97 == 96; }
static int sidecar(long k) { return k % 3 == 0; }

/* The ReplicaSet of replica w (rs_start(k) <= w < rs_start(k + 1)). */
static long
rs_of(long w)
{
	long lo = 0, hi = L.rs - 1;

	while (lo < hi) {
		long mid = lo + (hi - lo + 1) / 2;

		if (rs_start(mid) <= w)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

static void
rs_name(char *out, size_t n, long k)
{
	char h[12];

	kname(h, 10, D_RSHASH, k);
	snprintf(out, n, "%s-%s", apps[k % 10].name, h);
}

static void
team(char *out, size_t n, long t)
{
	snprintf(out, n, "team-%04ld", t);
}

/* ---- owner uids: generated, or the cluster's (-U) ---- */

struct owner {
	char key[320], uid[40];
};
static struct owner *owners;
static size_t nowners;

static int
by_owner(const void *a, const void *b)
{
	return strcmp(((const struct owner *)a)->key, ((const struct owner *)b)->key);
}

static void
owners_read(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[512];
	size_t cap = 0;

	if (f == NULL) {
		perror(path);
		exit(2);
	}
	while (fgets(line, sizeof line, f) != NULL) {
		if (nowners == cap) {
			cap = cap ? 2 * cap : 1024;
			owners = realloc(owners, cap * sizeof *owners);
			if (owners == NULL) {
				perror("gen");
				exit(2);
			}
		}
		if (sscanf(line, "%319s %39s", owners[nowners].key, owners[nowners].uid) == 2)
			nowners++;
	}
	fclose(f);
	qsort(owners, nowners, sizeof *owners, by_owner);
}

/* The uid of owner ns/name: from -U's file, else the generated one. */
static void
owner_uid(char *out, const char *ns, const char *name, int dom, long x)
{
	struct owner k, *o;

	if (uidfile == NULL) {
		kuid(out, dom, x);
		return;
	}
	snprintf(k.key, sizeof k.key, "%s/%s", ns, name);
	o = bsearch(&k, owners, nowners, sizeof *owners, by_owner);
	if (o == NULL) {
		fprintf(stderr, "gen: %s: no uid for %s\n", uidfile, k.key);
		exit(2);
	}
	snprintf(out, 40, "%s", o->uid);
}

/* ---- pieces of pods ---- */

/* A JSON array of the words of s. */
static void
words(const char *s)
{
	char w[256];
	size_t n;

	open_(ARR);
	while (*s != '\0') {
		n = strcspn(s, " ");
		snprintf(w, sizeof w, "%.*s", (int)n, s);
		str(w);
		s += n;
		s += *s == ' ';
	}
	close_();
}

static void knull(const char *k) { key(k); scalar("null", 0); }

static void
env_ref(const char *name, const char *path)
{
	open_(OBJ);
	kv("name", name);
	ko("valueFrom", OBJ);
	ko("fieldRef", OBJ);
	kv("apiVersion", "v1");
	kv("fieldPath", path);
	closen(3);
}

static void
env_val(const char *name, const char *value)
{
	open_(OBJ);
	kv("name", name);
	kv("value", value);
	close_();
}

static void
mount(const char *path, const char *name, int ro)
{
	open_(OBJ);
	kv("mountPath", path);
	kv("name", name);
	if (ro)
		kb("readOnly", 1);
	close_();
}

/* The service-account token's mount the ServiceAccount admission adds. */
static void
api_mount(const char *api)
{
	mount("/var/run/secrets/kubernetes.io/serviceaccount", api, 1);
}

/* A container's termination message, as the API defaults it. */
static void
termination_message(void)
{
	kv("terminationMessagePath", "/dev/termination-log");
	kv("terminationMessagePolicy", "File");
}

/* The pod spec's service account: serviceAccount is the deprecated twin the
 * API fills in on pods only. */
static void
service_account(int pod, const char *sa)
{
	if (pod)
		kv("serviceAccount", sa);
	kv("serviceAccountName", sa);
}

static void
resources(const char *cpu, const char *mem, const char *gpus)
{
	int i;

	ko("resources", OBJ);
	for (i = 0; i < 2; i++) {
		ko(i == 0 ? "limits" : "requests", OBJ);
		kv("cpu", cpu);
		kv("memory", mem);
		if (gpus != NULL)
			kv("nvidia.com/gpu", gpus);
		close_();
	}
	close_();
}

static void
toleration(const char *effect, const char *k, long secs)
{
	open_(OBJ);
	kv("effect", effect);
	kv("key", k);
	kv("operator", "Exists");
	if (secs > 0)
		kn("tolerationSeconds", secs);
	close_();
}

/* The service-account token volume the ServiceAccount admission adds. */
static void
api_volume(const char *name)
{
	open_(OBJ);
	kv("name", name);
	ko("projected", OBJ);
	kn("defaultMode", 420);
	ko("sources", ARR);
	open_(OBJ);
	ko("serviceAccountToken", OBJ);
	kn("expirationSeconds", 3607);
	kv("path", "token");
	closen(2);
	open_(OBJ);
	ko("configMap", OBJ);
	ko("items", ARR);
	open_(OBJ);
	kv("key", "ca.crt");
	kv("path", "ca.crt");
	closen(2);
	kv("name", "kube-root-ca.crt");
	closen(2);
	open_(OBJ);
	ko("downwardAPI", OBJ);
	ko("items", ARR);
	open_(OBJ);
	ko("fieldRef", OBJ);
	kv("apiVersion", "v1");
	kv("fieldPath", "metadata.namespace");
	close_();
	kv("path", "namespace");
	closen(7);
}

static void
host_volume(const char *name, const char *path, const char *type)
{
	open_(OBJ);
	ko("hostPath", OBJ);
	kv("path", path);
	if (type != NULL)
		kv("type", type);
	close_();
	kv("name", name);
	close_();
}

static void
condition(const char *type, const char *status, const char *t, const char *reason,
    const char *msg)
{
	open_(OBJ);
	knull("lastProbeTime");
	kv("lastTransitionTime", t);
	if (msg != NULL)
		kv("message", msg);
	if (reason != NULL)
		kv("reason", reason);
	kv("status", status);
	kv("type", type);
	close_();
}

static void
node_ip(char *out, size_t n, long node)
{
	snprintf(out, n, "10.0.%ld.%ld", node / 256, node % 256);
}

/* The IP of the slot-th pod of a node, in its podCIDR. */
static void
pod_ip(char *out, size_t n, long node, long slot)
{
	snprintf(out, n, "10.%ld.%ld.%ld", 64 + node / 256 % 64, node % 256, 2 + slot % 250);
}

static void
ip_list(const char *k, const char *ip)
{
	ko(k, ARR);
	open_(OBJ);
	kv("ip", ip);
	closen(2);
}

static long
fnv(const char *s)
{
	unsigned long h = 2166136261UL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619UL;
	return (long)(h & 0x7fffffff);
}

/* What a container's status says. */
struct cstat {
	const char *name, *image;
	int ready, restarts, done;        /* done: terminated, Completed */
	long ctr;                         /* the key of its container id */
	const char *started, *finished;   /* times */
	const char *cpu, *mem, *gpus;     /* resources; cpu NULL: none */
	int nm;                           /* its volume mounts */
	const char *mpath[12], *mname[12];
	int mro[12];
};

static void
cs_mount(struct cstat *c, const char *path, const char *name, int ro)
{
	c->mpath[c->nm] = path;
	c->mname[c->nm] = name;
	c->mro[c->nm++] = ro;
}

static void
container_status(const struct cstat *c)
{
	char id[96], h[72], img[256];
	const char *colon = strrchr(c->image, ':');
	int i;

	khex(h, 64, D_CTR, c->ctr);
	snprintf(id, sizeof id, "containerd://%.64s", h);
	open_(OBJ);
	kv("containerID", id);
	kv("image", c->image);
	khex(h, 64, D_IMG, fnv(c->image));
	snprintf(img, sizeof img, "%.*s@sha256:%s", (int)(colon - c->image), c->image, h);
	kv("imageID", img);
	ko("lastState", OBJ);
	if (c->restarts > 0) {
		ko("terminated", OBJ);
		khex(h, 64, D_CTR, c->ctr + 7777777);
		snprintf(id, sizeof id, "containerd://%.64s", h);
		kv("containerID", id);
		kn("exitCode", 1);
		kv("finishedAt", c->started);
		kv("reason", "Error");
		kv("startedAt", c->started);
		close_();
	}
	close_();
	kv("name", c->name);
	kb("ready", c->ready);
	if (c->cpu != NULL)
		resources(c->cpu, c->mem, c->gpus);
	else {
		ko("resources", OBJ);
		close_();
	}
	kn("restartCount", c->restarts);
	kb("started", !c->done);
	ko("state", OBJ);
	if (c->done) {
		ko("terminated", OBJ);
		kv("containerID", id);
		kn("exitCode", 0);
		kv("finishedAt", c->finished);
		kv("reason", "Completed");
		kv("startedAt", c->started);
		close_();
	} else {
		ko("running", OBJ);
		kv("startedAt", c->started);
		close_();
	}
	close_();
	ko("volumeMounts", ARR);
	for (i = 0; i < c->nm; i++) {
		open_(OBJ);
		kv("mountPath", c->mpath[i]);
		kv("name", c->mname[i]);
		if (c->mro[i]) {
			kb("readOnly", 1);
			kv("recursiveReadOnly", "Disabled");
		}
		close_();
	}
	closen(2);
}

/* status of a pod: phase Running (ready or not) or Succeeded (done) */
static void
pod_status(long node, long slot, const char *t0, const char *t1, int ready, int done,
    const char *qos, const struct cstat *cs, int ncs, const char *main_ctr)
{
	char ip[32], msg[200];
	int i;

	ko("status", OBJ);
	ko("conditions", ARR);
	snprintf(msg, sizeof msg, "containers with unready status: [%s]", main_ctr);
	condition("PodReadyToStartContainers", done ? "False" : "True", t1, NULL, NULL);
	condition("Initialized", "True", t0, done ? "PodCompleted" : NULL, NULL);
	if (done) {
		condition("Ready", "False", t1, "PodCompleted", NULL);
		condition("ContainersReady", "False", t1, "PodCompleted", NULL);
	} else if (!ready) {
		condition("Ready", "False", t1, "ContainersNotReady", msg);
		condition("ContainersReady", "False", t1, "ContainersNotReady", msg);
	} else {
		condition("Ready", "True", t1, NULL, NULL);
		condition("ContainersReady", "True", t1, NULL, NULL);
	}
	condition("PodScheduled", "True", t0, NULL, NULL);
	close_();
	ko("containerStatuses", ARR);
	for (i = 0; i < ncs; i++)
		container_status(&cs[i]);
	close_();
	node_ip(ip, sizeof ip, node);
	kv("hostIP", ip);
	ip_list("hostIPs", ip);
	kv("phase", done ? "Succeeded" : "Running");
	pod_ip(ip, sizeof ip, node, slot);
	kv("podIP", ip);
	ip_list("podIPs", ip);
	kv("qosClass", qos);
	kv("startTime", t0);
	close_();
}

static void
owner_ref(const char *api, const char *kind, const char *name, const char *uid)
{
	ko("ownerReferences", ARR);
	open_(OBJ);
	kv("apiVersion", api);
	kb("blockOwnerDeletion", 1);
	kb("controller", 1);
	kv("kind", kind);
	kv("name", name);
	kv("uid", uid);
	closen(2);
}

static void
gpu_tolerations(int pod)
{
	ko("tolerations", ARR);
	toleration("NoSchedule", "nvidia.com/gpu", 0);
	if (pod) { /* DefaultTolerationSeconds admission */
		toleration("NoExecute", "node.kubernetes.io/not-ready", 300);
		toleration("NoExecute", "node.kubernetes.io/unreachable", 300);
	}
	close_();
}

/* ---- the three kinds of pods ---- */

/* The spec of ReplicaSet k's pods: pod w's (w >= 0) or its template's (w < 0). */
static void
rs_spec(long k, long w)
{
	const struct app *a = &apps[k % 10];
	char buf[256], api[40];
	int pod = w >= 0;

	kname(buf, 5, D_TOK, pod ? w : 0);
	snprintf(api, sizeof api, "kube-api-access-%.5s", buf);
	ko("spec", OBJ);
	ko("containers", ARR);
	open_(OBJ);
	key("args");
	words(a->args);
	key("command");
	words(a->command);
	ko("env", ARR);
	env_val("CUDA_DEVICE_ORDER", "PCI_BUS_ID");
	env_val("HF_HOME", "/models/.cache/huggingface");
	env_val("NCCL_DEBUG", "WARN");
	env_val("OMP_NUM_THREADS", a->cpu);
	env_ref("POD_NAME", "metadata.name");
	env_ref("POD_NAMESPACE", "metadata.namespace");
	close_();
	kv("image", a->image);
	kv("imagePullPolicy", "IfNotPresent");
	kv("name", a->name);
	ko("ports", ARR);
	open_(OBJ);
	kn("containerPort", a->port);
	kv("name", "http");
	kv("protocol", "TCP");
	closen(2);
	ko("readinessProbe", OBJ);
	kn("failureThreshold", 3);
	ko("httpGet", OBJ);
	kv("path", a->probe);
	kv("port", "http");
	kv("scheme", "HTTP");
	close_();
	kn("initialDelaySeconds", 30);
	kn("periodSeconds", 10);
	kn("successThreshold", 1);
	kn("timeoutSeconds", 1);
	close_();
	resources(a->cpu, a->mem, a->gpus);
	termination_message();
	ko("volumeMounts", ARR);
	mount("/dev/shm", "dshm", 0);
	mount("/models", "model-cache", 0);
	if (pod)
		api_mount(api);
	closen(2);
	if (sidecar(k)) {
		open_(OBJ);
		key("args");
		words("--statsd.mapping-config=/etc/statsd/mapping.yaml --web.listen-address=:9102");
		kv("image", "prom/statsd-exporter:v0.27.1");
		kv("imagePullPolicy", "IfNotPresent");
		kv("name", "metrics-exporter");
		ko("ports", ARR);
		open_(OBJ);
		kn("containerPort", 9102);
		kv("name", "metrics");
		kv("protocol", "TCP");
		closen(2);
		resources("100m", "128Mi", NULL);
		termination_message();
		if (pod) {
			ko("volumeMounts", ARR);
			api_mount(api);
			close_();
		}
		close_();
	}
	close_();
	kv("dnsPolicy", "ClusterFirst");
	kb("enableServiceLinks", 1);
	if (pod) {
		snprintf(buf, sizeof buf, "gpu-node-%05ld", w % L.nodes);
		kv("nodeName", buf);
	}
	ko("nodeSelector", OBJ);
	kv("nvidia.com/gpu.present", "true");
	close_();
	if (pod && !create) {
		kv("preemptionPolicy", "PreemptLowerPriority");
		kn("priority", 0);
	}
	kv("restartPolicy", "Always");
	kv("schedulerName", "default-scheduler");
	ko("securityContext", OBJ);
	kn("fsGroup", 1000);
	close_();
	service_account(pod, "default");
	kn("terminationGracePeriodSeconds", 30);
	gpu_tolerations(pod);
	ko("volumes", ARR);
	open_(OBJ);
	ko("emptyDir", OBJ);
	kv("medium", "Memory");
	kv("sizeLimit", "16Gi");
	close_();
	kv("name", "dshm");
	close_();
	open_(OBJ);
	ko("emptyDir", OBJ);
	kv("sizeLimit", "200Gi");
	close_();
	kv("name", "model-cache");
	close_();
	if (pod)
		api_volume(api);
	closen(2);
}

static void
rs_labels(long k, const char *hash)
{
	char buf[64];

	ko("labels", OBJ);
	kv("app.kubernetes.io/component", apps[k % 10].component);
	kv("app.kubernetes.io/instance", apps[k % 10].name);
	kv("app.kubernetes.io/name", apps[k % 10].name);
	kv("app.kubernetes.io/version", strchr(apps[k % 10].image, ':') + 1);
	if (hash != NULL)
		kv("pod-template-hash", hash);
	team(buf, sizeof buf, k / 10);
	kv("team", buf);
	close_();
}

static void
rs_annotations(long k)
{
	char h[72];

	ko("annotations", OBJ);
	khex(h, 64, D_CFG, k);
	kv("checksum/config", h);
	kv("prometheus.io/port", sidecar(k) ? "9102" : "8000");
	kv("prometheus.io/scrape", "true");
	close_();
}

/* Replica w of its ReplicaSet: a Deployment's pod. */
static void
rs_pod(long w)
{
	long k = rs_of(w), node = w % L.nodes, slot = w / L.nodes;
	char rs[80], ns[32], name[96], gen[96], uid[40], t0[24], t1[24], h[12], buf[32], api[40];
	struct cstat cs[2];
	int n = 1, ready = !unready(w);

	rs_name(rs, sizeof rs, k);
	team(ns, sizeof ns, k / 10);
	kname(h, 5, D_POD, w);
	snprintf(gen, sizeof gen, "%s-", rs);
	snprintf(name, sizeof name, "%.80s%.5s", gen, h);
	stamp(t0, when(D_POD, w));
	stamp(t1, when(D_POD, w) + 20 + w % 90);

	open_(OBJ);
	if (create || !raw) {
		kv("apiVersion", "v1");
		kv("kind", "Pod");
	}
	ko("metadata", OBJ);
	rs_annotations(k);
	if (!create)
		kv("creationTimestamp", t0);
	kv("generateName", gen);
	kname(h, 10, D_RSHASH, k);
	rs_labels(k, h);
	kv("name", name);
	kv("namespace", ns);
	owner_uid(uid, ns, rs, D_RSUID, k);
	owner_ref("apps/v1", "ReplicaSet", rs, uid);
	if (!create) {
		snprintf(buf, sizeof buf, "%ld", 2000000 + 3 * w);
		kv("resourceVersion", buf);
		kuid(uid, D_PODUID, w);
		kv("uid", uid);
	}
	close_();
	rs_spec(k, w);
	if (!create) {
		memset(cs, 0, sizeof cs);
		kname(h, 5, D_TOK, w);
		snprintf(api, sizeof api, "kube-api-access-%.5s", h);
		cs[0].name = apps[k % 10].name;
		cs[0].image = apps[k % 10].image;
		cs[0].ready = ready;
		cs[0].restarts = ready ? 0 : 4;
		cs[0].ctr = 2 * w;
		cs[0].started = t1;
		cs[0].cpu = apps[k % 10].cpu;
		cs[0].mem = apps[k % 10].mem;
		cs[0].gpus = apps[k % 10].gpus;
		cs_mount(&cs[0], "/dev/shm", "dshm", 0);
		cs_mount(&cs[0], "/models", "model-cache", 0);
		cs_mount(&cs[0], "/var/run/secrets/kubernetes.io/serviceaccount", api, 1);
		if (sidecar(k)) {
			/* kubelet sorts them by name */
			cs[1] = cs[0];
			cs[1].name = "metrics-exporter";
			cs[1].image = "prom/statsd-exporter:v0.27.1";
			cs[1].ready = 1;
			cs[1].restarts = 0;
			cs[1].ctr = 2 * w + 1;
			cs[1].cpu = "100m";
			cs[1].mem = "128Mi";
			cs[1].gpus = NULL;
			cs[1].nm = 0;
			cs_mount(&cs[1], "/var/run/secrets/kubernetes.io/serviceaccount", api, 1);
			if (strcmp(cs[1].name, cs[0].name) < 0) {
				struct cstat t = cs[0];

				cs[0] = cs[1];
				cs[1] = t;
			}
			n = 2;
		}
		pod_status(node, slot, t0, t1, ready, 0, "Guaranteed", cs, n, apps[k % 10].name);
	}
	close_();
}

/* The driver pod's host volumes and where its container mounts them. */
static const char *const ds_vols[][3] = {
	{ "run-nvidia", "/run/nvidia", "DirectoryOrCreate" },
	{ "var-log", "/var/log", NULL },
	{ "dev-log", "/dev/log", NULL },
	{ "host-os-release", "/etc/os-release", NULL },
	{ "run-nvidia-topologyd", "/run/nvidia-topologyd", "DirectoryOrCreate" },
	{ "mlnx-ofed-usr-src", "/run/mellanox/drivers/usr/src", "DirectoryOrCreate" },
	{ "run-mellanox-drivers", "/run/mellanox/drivers", "DirectoryOrCreate" },
	{ "firmware-search-path", "/sys/module/firmware_class/parameters/path", NULL },
	{ "sysfs-memory-online", "/sys/devices/system/memory/auto_online_blocks", NULL },
	{ "nv-firmware", "/run/nvidia/driver/lib/firmware", "DirectoryOrCreate" },
};
static const char *const ds_mounts[][2] = {
	{ "/run/nvidia", "run-nvidia" }, { "/var/log", "var-log" }, { "/dev/log", "dev-log" },
	{ "/host-etc/os-release", "host-os-release" },
	{ "/var/run/nvidia-topologyd", "run-nvidia-topologyd" }, { "/usr/src", "mlnx-ofed-usr-src" },
	{ "/run/mellanox/drivers", "run-mellanox-drivers" },
	{ "/sys/module/firmware_class/parameters/path", "firmware-search-path" },
	{ "/sys/devices/system/memory/auto_online_blocks", "sysfs-memory-online" },
	{ "/lib/firmware", "nv-firmware" },
};

static void
ds_spec(long node)
{
	char buf[64], api[40];
	int pod = node >= 0;
	size_t i;

	kname(buf, 5, D_TOK, pod ? 5000000 + node : 4999999);
	snprintf(api, sizeof api, "kube-api-access-%.5s", buf);
	ko("spec", OBJ);
	if (pod) {
		snprintf(buf, sizeof buf, "gpu-node-%05ld", node);
		ko("affinity", OBJ);
		ko("nodeAffinity", OBJ);
		ko("requiredDuringSchedulingIgnoredDuringExecution", OBJ);
		ko("nodeSelectorTerms", ARR);
		open_(OBJ);
		ko("matchFields", ARR);
		open_(OBJ);
		kv("key", "metadata.name");
		kv("operator", "In");
		ko("values", ARR);
		str(buf);
		closen(8);
	}
	ko("containers", ARR);
	open_(OBJ);
	key("args");
	words("init");
	key("command");
	words("nvidia-driver");
	ko("env", ARR);
	env_val("NVIDIA_VISIBLE_DEVICES", "void");
	env_val("GPU_DIRECT_RDMA_ENABLED", "false");
	env_val("USE_HOST_MOFED", "false");
	env_val("KERNEL_MODULE_TYPE", "auto");
	close_();
	kv("image", DS_IMAGE);
	kv("imagePullPolicy", "IfNotPresent");
	kv("name", "nvidia-driver-ctr");
	ko("resources", OBJ);
	close_();
	ko("securityContext", OBJ);
	if (!create) /* the sandbox's API server runs without --allow-privileged */
		kb("privileged", 1);
	ko("seLinuxOptions", OBJ);
	kv("level", "s0");
	closen(2);
	ko("startupProbe", OBJ);
	ko("exec", OBJ);
	ko("command", ARR);
	str("sh");
	str("-c");
	str("nvidia-smi && touch /run/nvidia/validations/.driver-ctr-ready");
	closen(2);
	kn("failureThreshold", 120);
	kn("initialDelaySeconds", 60);
	kn("periodSeconds", 10);
	kn("successThreshold", 1);
	kn("timeoutSeconds", 60);
	close_();
	termination_message();
	ko("volumeMounts", ARR);
	for (i = 0; i < 10; i++)
		mount(ds_mounts[i][0], ds_mounts[i][1], i == 3);
	if (pod)
		api_mount(api);
	closen(3);
	kv("dnsPolicy", "ClusterFirst");
	kb("enableServiceLinks", 1);
	kb("hostPID", 1);
	if (pod)
		kv("nodeName", buf);
	ko("nodeSelector", OBJ);
	kv("nvidia.com/gpu.deploy.driver", "true");
	close_();
	if (pod && !create) {
		kv("preemptionPolicy", "PreemptLowerPriority");
		kn("priority", 2000001000);
	}
	kv("priorityClassName", "system-node-critical");
	kv("restartPolicy", "Always");
	kv("schedulerName", "default-scheduler");
	ko("securityContext", OBJ);
	close_();
	service_account(pod, "nvidia-driver");
	kn("terminationGracePeriodSeconds", 60);
	ko("tolerations", ARR);
	toleration("NoSchedule", "nvidia.com/gpu", 0);
	if (pod) { /* what the DaemonSet controller adds */
		toleration("NoExecute", "node.kubernetes.io/not-ready", 0);
		toleration("NoExecute", "node.kubernetes.io/unreachable", 0);
		toleration("NoSchedule", "node.kubernetes.io/disk-pressure", 0);
		toleration("NoSchedule", "node.kubernetes.io/memory-pressure", 0);
		toleration("NoSchedule", "node.kubernetes.io/pid-pressure", 0);
		toleration("NoSchedule", "node.kubernetes.io/unschedulable", 0);
	}
	close_();
	ko("volumes", ARR);
	for (i = 0; i < 10; i++)
		host_volume(ds_vols[i][0], ds_vols[i][1], ds_vols[i][2]);
	if (pod)
		api_volume(api);
	closen(2);
}

static void
ds_labels(int pod)
{
	ko("labels", OBJ);
	kv("app", DS_NAME);
	kv("app.kubernetes.io/component", "nvidia-driver");
	kv("app.kubernetes.io/managed-by", "gpu-operator");
	if (pod)
		kv("controller-revision-hash", "6b8f9c7d5d");
	kv("helm.sh/chart", "gpu-operator-v24.6.2");
	kv("nvidia.com/precompiled", "false");
	if (pod)
		kv("pod-template-generation", "1");
	close_();
}

/* The driver DaemonSet's pod on node i. */
static void
ds_pod(long i)
{
	char name[64], h[12], uid[40], t0[24], t1[24], buf[32], api[40];
	struct cstat cs;
	int m;

	kname(h, 5, D_DS, i);
	snprintf(name, sizeof name, DS_NAME "-%s", h);
	stamp(t0, when(D_DS, i) % 3600);
	stamp(t1, when(D_DS, i) % 3600 + 95);
	open_(OBJ);
	if (create || !raw) {
		kv("apiVersion", "v1");
		kv("kind", "Pod");
	}
	ko("metadata", OBJ);
	ko("annotations", OBJ);
	kv("kubectl.kubernetes.io/default-container", "nvidia-driver-ctr");
	close_();
	if (!create)
		kv("creationTimestamp", t0);
	kv("generateName", DS_NAME "-");
	ds_labels(1);
	kv("name", name);
	kv("namespace", DS_NS);
	owner_uid(uid, DS_NS, DS_NAME, D_DSUID, 0);
	owner_ref("apps/v1", "DaemonSet", DS_NAME, uid);
	if (!create) {
		snprintf(buf, sizeof buf, "%ld", 1000 + 2 * i);
		kv("resourceVersion", buf);
		kuid(uid, D_DSUID, i + 1);
		kv("uid", uid);
	}
	close_();
	ds_spec(i);
	if (!create) {
		memset(&cs, 0, sizeof cs);
		cs.name = "nvidia-driver-ctr";
		cs.image = DS_IMAGE;
		cs.ready = 1;
		cs.ctr = 100000000 + i;
		cs.started = t1;
		kname(h, 5, D_TOK, 5000000 + i);
		snprintf(api, sizeof api, "kube-api-access-%.5s", h);
		for (m = 0; m < 10; m++)
			cs_mount(&cs, ds_mounts[m][0], ds_mounts[m][1], m == 3);
		cs_mount(&cs, "/var/run/secrets/kubernetes.io/serviceaccount", api, 1);
		pod_status(i, 249, t0, t1, 1, 0, "BestEffort", &cs, 1, cs.name);
	}
	close_();
}

static void
job_name(char *out, size_t n, long j)
{
	snprintf(out, n, "nightly-eval-%05ld", j);
}

static void
job_spec(long j, int pod)
{
	char buf[64], api[40];

	kname(buf, 5, D_TOK, 9000000 + j);
	snprintf(api, sizeof api, "kube-api-access-%.5s", buf);
	ko("spec", OBJ);
	ko("containers", ARR);
	open_(OBJ);
	key("args");
	words("--suite=regression --model=/models/candidate --report=/models/reports");
	key("command");
	words("python -m evals.run");
	ko("env", ARR);
	env_val("CUDA_DEVICE_ORDER", "PCI_BUS_ID");
	env_ref("POD_NAME", "metadata.name");
	close_();
	kv("image", "registry.example.com/ml/evals:2026.11.2");
	kv("imagePullPolicy", "IfNotPresent");
	kv("name", "evaluator");
	resources("8", "64Gi", "1");
	termination_message();
	if (pod) {
		ko("volumeMounts", ARR);
		api_mount(api);
		close_();
	}
	closen(2);
	kv("dnsPolicy", "ClusterFirst");
	kb("enableServiceLinks", 1);
	/* the Job template too: its pods go to a node without the scheduler */
	snprintf(buf, sizeof buf, "gpu-node-%05ld", (j * 7 + 3) % L.nodes);
	kv("nodeName", buf);
	if (pod && !create) {
		kv("preemptionPolicy", "PreemptLowerPriority");
		kn("priority", 0);
	}
	kv("restartPolicy", "Never");
	kv("schedulerName", "default-scheduler");
	ko("securityContext", OBJ);
	close_();
	service_account(pod, "default");
	kn("terminationGracePeriodSeconds", 30);
	gpu_tolerations(pod);
	if (pod) {
		ko("volumes", ARR);
		api_volume(api);
		close_();
	}
	close_();
}

/* Job j's one pod, Succeeded. */
static void
job_pod(long j)
{
	char job[64], ns[32], name[96], gen[80], h[12], juid[40], uid[40], t0[24], t1[24], t2[24],
	    buf[32], api[40];
	struct cstat cs;

	job_name(job, sizeof job, j);
	team(ns, sizeof ns, j % L.ns);
	kname(h, 5, D_JOB, j);
	snprintf(gen, sizeof gen, "%s-", job);
	snprintf(name, sizeof name, "%.80s%.5s", gen, h);
	kuid(juid, D_JOBUID, j);
	stamp(t0, when(D_JOB, j));
	stamp(t1, when(D_JOB, j) + 8);
	stamp(t2, when(D_JOB, j) + 1800 + j % 900);
	open_(OBJ);
	if (create || !raw) {
		kv("apiVersion", "v1");
		kv("kind", "Pod");
	}
	ko("metadata", OBJ);
	if (!create)
		kv("creationTimestamp", t0);
	kv("generateName", gen);
	ko("labels", OBJ);
	kv("batch.kubernetes.io/controller-uid", juid);
	kv("batch.kubernetes.io/job-name", job);
	kv("controller-uid", juid);
	kv("job-name", job);
	close_();
	kv("name", name);
	kv("namespace", ns);
	owner_ref("batch/v1", "Job", job, juid);
	if (!create) {
		snprintf(buf, sizeof buf, "%ld", 900000 + 5 * j);
		kv("resourceVersion", buf);
		kuid(uid, D_PODUID, 50000000 + j);
		kv("uid", uid);
	}
	close_();
	job_spec(j, 1);
	if (!create) {
		memset(&cs, 0, sizeof cs);
		cs.name = "evaluator";
		cs.image = "registry.example.com/ml/evals:2026.11.2";
		cs.done = 1;
		cs.ctr = 200000000 + j;
		cs.started = t1;
		cs.finished = t2;
		cs.cpu = "8";
		cs.mem = "64Gi";
		cs.gpus = "1";
		kname(h, 5, D_TOK, 9000000 + j);
		snprintf(api, sizeof api, "kube-api-access-%.5s", h);
		cs_mount(&cs, "/var/run/secrets/kubernetes.io/serviceaccount", api, 1);
		pod_status((j * 7 + 3) % L.nodes, 240 + j % 9, t0, t2, 0, 1, "Guaranteed", &cs, 1,
		    cs.name);
	}
	close_();
}

/* ---- budgets ---- */

struct budget {
	int pct_min, pct_max;      /* spec: minAvailable/maxUnavailable, percent or not */
	long min, max;             /* -1: unset */
	long expected, healthy, desired, allowed, gen;
	int always_allow;
};

static long pct_up(long p, long n) { return (p * n + 99) / 100; }

/* Budget k's spec, by kind in turn, and its status as the disruption controller computes it. */
static void
budget_of(long k, struct budget *b)
{
	long r = rs_replicas(k), w, t = k % 20;

	memset(b, 0, sizeof *b);
	b->min = b->max = -1;
	if (t < 6)
		b->max = 1;
	else if (t < 10)
		b->max = 25, b->pct_max = 1;
	else if (t < 15)
		b->min = 50, b->pct_min = 1;
	else if (t < 19)
		b->min = r > 3 ? r - 2 : 1;
	else
		b->min = r; /* minAvailable = replicas: no disruption allowed */
	b->always_allow = t == 7 || t == 12;
	b->expected = r;
	b->healthy = r;
	for (w = rs_start(k); w < rs_start(k) + r; w++)
		b->healthy -= unready(w);
	if (b->max >= 0)
		b->desired = r - (b->pct_max ? pct_up(b->max, r) : b->max);
	else
		b->desired = b->pct_min ? pct_up(b->min, r) : b->min;
	if (b->desired < 0)
		b->desired = 0;
	b->allowed = r > 0 && b->healthy > b->desired ? b->healthy - b->desired : 0;
	b->gen = k % 7 == 3 ? 2 : 1;
}

static void
intstr(const char *k, long v, int pct)
{
	char buf[24];

	if (pct) {
		snprintf(buf, sizeof buf, "%ld%%", v);
		kv(k, buf);
	} else {
		kn(k, v);
	}
}

static void
budget(long k)
{
	const struct app *a = &apps[k % 10];
	char name[64], ns[32], buf[40], t0[24], t1[24];
	struct budget b;

	budget_of(k, &b);
	snprintf(name, sizeof name, "%s-pdb", a->name);
	team(ns, sizeof ns, k / 10);
	stamp(t0, when(D_PDBUID, k));
	stamp(t1, when(D_PDBUID, k) + 3600);
	open_(OBJ);
	if (create || !raw) {
		kv("apiVersion", "policy/v1");
		kv("kind", "PodDisruptionBudget");
	}
	ko("metadata", OBJ);
	ko("annotations", OBJ);
	kv("meta.helm.sh/release-name", a->name);
	kv("meta.helm.sh/release-namespace", ns);
	close_();
	if (!create) {
		kv("creationTimestamp", t0);
		kn("generation", b.gen);
	}
	ko("labels", OBJ);
	kv("app.kubernetes.io/instance", a->name);
	kv("app.kubernetes.io/managed-by", "Helm");
	kv("app.kubernetes.io/name", a->name);
	snprintf(buf, sizeof buf, "%s-1.4.2", a->name);
	kv("helm.sh/chart", buf);
	close_();
	kv("name", name);
	kv("namespace", ns);
	if (!create) {
		snprintf(buf, sizeof buf, "%ld", 5000000 + 11 * k);
		kv("resourceVersion", buf);
		kuid(buf, D_PDBUID, k);
		kv("uid", buf);
	}
	close_();
	ko("spec", OBJ);
	if (b.max >= 0)
		intstr("maxUnavailable", b.max, b.pct_max);
	if (b.min >= 0)
		intstr("minAvailable", b.min, b.pct_min);
	ko("selector", OBJ);
	ko("matchLabels", OBJ);
	kv("app.kubernetes.io/instance", a->name);
	kv("app.kubernetes.io/name", a->name);
	closen(2);
	if (b.always_allow)
		kv("unhealthyPodEvictionPolicy", "AlwaysAllow");
	close_();
	if (!create) {
		ko("status", OBJ);
		ko("conditions", ARR);
		open_(OBJ);
		kv("lastTransitionTime", t1);
		kv("message", "");
		kn("observedGeneration", b.gen);
		kv("reason", b.allowed > 0 ? "SufficientPods" : "InsufficientPods");
		kv("status", b.allowed > 0 ? "True" : "False");
		kv("type", "DisruptionAllowed");
		closen(2);
		kn("currentHealthy", b.healthy);
		kn("desiredHealthy", b.desired);
		kn("disruptionsAllowed", b.allowed);
		kn("expectedPods", b.expected);
		kn("observedGeneration", b.gen);
		close_();
	}
	close_();
}

/* ---- pods in the API's order: by namespace, then name ---- */

enum { P_DS, P_RS, P_JOB };
struct ent {
	char name[96];
	int type;
	long i;
};

static int
by_name(const void *a, const void *b)
{
	return strcmp(((const struct ent *)a)->name, ((const struct ent *)b)->name);
}

static void
ent_emit(const struct ent *e, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (e[i].type == P_JOB && create)
			continue; /* the Job controller makes them */
		if (e[i].type == P_DS)
			ds_pod(e[i].i);
		else if (e[i].type == P_RS)
			rs_pod(e[i].i);
		else
			job_pod(e[i].i);
		if (create)
			putchar('\n');
	}
}

static void *
xalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (p == NULL) {
		perror("gen");
		exit(2);
	}
	return p;
}

static void
all_pods(void)
{
	struct ent *e;
	size_t n, cap;
	long i, k, w, t, j;
	char h[12], rs[80];

	/* gpu-operator sorts before team-* */
	e = xalloc((size_t)L.ds * sizeof *e);
	for (i = 0; i < L.ds; i++) {
		kname(h, 5, D_DS, i);
		snprintf(e[i].name, sizeof e[i].name, DS_NAME "-%s", h);
		e[i].type = P_DS;
		e[i].i = i;
	}
	qsort(e, (size_t)L.ds, sizeof *e, by_name);
	ent_emit(e, (size_t)L.ds);
	free(e);

	cap = 16;
	e = xalloc(cap * sizeof *e);
	for (t = 0; t < L.ns; t++) {
		n = 0;
		for (k = 10 * t; k < 10 * t + 10 && k < L.rs; k++) {
			rs_name(rs, sizeof rs, k);
			for (w = rs_start(k); w < rs_start(k) + rs_replicas(k); w++) {
				if (n == cap)
					e = realloc(e, (cap *= 2) * sizeof *e);
				if (e == NULL) {
					perror("gen");
					exit(2);
				}
				kname(h, 5, D_POD, w);
				snprintf(e[n].name, sizeof e[n].name, "%s-%s", rs, h);
				e[n].type = P_RS;
				e[n++].i = w;
			}
		}
		for (j = t; j < L.jobs; j += L.ns) {
			if (n == cap)
				e = realloc(e, (cap *= 2) * sizeof *e);
			if (e == NULL) {
				perror("gen");
				exit(2);
			}
			job_name(rs, sizeof rs, j);
			kname(h, 5, D_JOB, j);
			snprintf(e[n].name, sizeof e[n].name, "%s-%s", rs, h);
			e[n].type = P_JOB;
			e[n++].i = j;
		}
		qsort(e, n, sizeof *e, by_name);
		ent_emit(e, n);
	}
	free(e);
}

static void
all_budgets(void)
{
	long k;

	for (k = 0; k < L.pdbs; k++) {
		budget(k);
		if (create)
			putchar('\n');
	}
}

/* A list's envelope: as kubectl prints a List (items, then kind and
 * metadata: sorted keys), or as the API server writes a typed list for
 * kubectl get --raw (kind, apiVersion, metadata, items). */
void
list_open(const char *api, const char *kind)
{
	open_(OBJ);
	if (raw) {
		kv("kind", kind);
		kv("apiVersion", api);
		ko("metadata", OBJ);
		kv("resourceVersion", "7654321");
		close_();
	} else {
		kv("apiVersion", "v1");
	}
	ko("items", ARR);
}

void
list_close(void)
{
	close_();
	if (!raw) {
		kv("kind", "List");
		ko("metadata", OBJ);
		kv("resourceVersion", "");
		close_();
	}
	close_();
	putchar('\n');
}

static void
layout(long npods, long npdbs, long nnodes)
{
	L.pods = npods;
	L.pdbs = npdbs;
	L.nodes = nnodes;
	L.ds = nnodes < npods ? nnodes : npods;
	L.jobs = (npods - L.ds) / 100;
	L.work = npods - L.ds - L.jobs;
	L.rs = npdbs > 0 ? npdbs : L.work / 10 > 0 ? L.work / 10 : 1;
	L.ns = (L.rs + 9) / 10;
}

/*
 * The owners for kubectl create: the namespaces, the driver DaemonSet and
 * its service account, the ReplicaSets (replicas as generated), the Jobs.
 */
static void
all_owners(void)
{
	char ns[32], rs[80], h[12], buf[64];
	long t, k, j;

	for (t = -1; t < L.ns; t++) {
		if (t < 0)
			snprintf(ns, sizeof ns, "%s", DS_NS);
		else
			team(ns, sizeof ns, t);
		open_(OBJ);
		kv("apiVersion", "v1");
		kv("kind", "Namespace");
		ko("metadata", OBJ);
		ko("labels", OBJ);
		kv("gpudrv-bench", "1");
		close_();
		kv("name", ns);
		closen(2);
		putchar('\n');
	}
	open_(OBJ);
	kv("apiVersion", "v1");
	kv("kind", "ServiceAccount");
	ko("metadata", OBJ);
	kv("name", "nvidia-driver");
	kv("namespace", DS_NS);
	closen(2);
	putchar('\n');

	open_(OBJ);
	kv("apiVersion", "apps/v1");
	kv("kind", "DaemonSet");
	ko("metadata", OBJ);
	ds_labels(0);
	kv("name", DS_NAME);
	kv("namespace", DS_NS);
	close_();
	ko("spec", OBJ);
	ko("selector", OBJ);
	ko("matchLabels", OBJ);
	kv("app", DS_NAME);
	closen(2);
	ko("template", OBJ);
	ko("metadata", OBJ);
	ds_labels(0);
	close_();
	ds_spec(-1);
	close_();
	ko("updateStrategy", OBJ);
	kv("type", "OnDelete"); /* as the GPU Operator's: its upgrade controller restarts them */
	closen(3);
	putchar('\n');

	for (k = 0; k < L.rs; k++) {
		rs_name(rs, sizeof rs, k);
		team(ns, sizeof ns, k / 10);
		kname(h, 10, D_RSHASH, k);
		open_(OBJ);
		kv("apiVersion", "apps/v1");
		kv("kind", "ReplicaSet");
		ko("metadata", OBJ);
		rs_labels(k, h);
		kv("name", rs);
		kv("namespace", ns);
		close_();
		ko("spec", OBJ);
		kn("replicas", rs_replicas(k));
		ko("selector", OBJ);
		ko("matchLabels", OBJ);
		kv("app.kubernetes.io/instance", apps[k % 10].name);
		kv("app.kubernetes.io/name", apps[k % 10].name);
		kv("pod-template-hash", h);
		closen(2);
		ko("template", OBJ);
		ko("metadata", OBJ);
		rs_annotations(k);
		rs_labels(k, h);
		close_();
		rs_spec(k, -1);
		closen(3);
		putchar('\n');
	}

	for (j = 0; j < L.jobs; j++) {
		job_name(buf, sizeof buf, j);
		team(ns, sizeof ns, j % L.ns);
		open_(OBJ);
		kv("apiVersion", "batch/v1");
		kv("kind", "Job");
		ko("metadata", OBJ);
		kv("name", buf);
		kv("namespace", ns);
		close_();
		ko("spec", OBJ);
		kn("backoffLimit", 0);
		kn("completions", 1);
		kn("parallelism", 1);
		ko("template", OBJ);
		job_spec(j, 0);
		closen(3);
		putchar('\n');
	}
}

/* -C unready: "namespace name" of the replicas generated unready. */
static void
unready_list(void)
{
	long w, k;
	char rs[80], ns[32], h[12];

	for (w = 0; w < L.work; w++) {
		if (!unready(w))
			continue;
		k = rs_of(w);
		rs_name(rs, sizeof rs, k);
		team(ns, sizeof ns, k / 10);
		kname(h, 5, D_POD, w);
		printf("%s %s-%s\n", ns, rs, h);
	}
}

void
pods(long npods, long npdbs, long nnodes, const char *what)
{
	layout(npods, npdbs, nnodes);
	if (uidfile != NULL)
		owners_read(uidfile);
	if (create) {
		raw = 1; /* compact */
		if (strcmp(what, "owners") == 0)
			all_owners();
		else if (strcmp(what, "pods") == 0)
			all_pods();
		else if (strcmp(what, "budgets") == 0)
			all_budgets();
		else if (strcmp(what, "unready") == 0)
			unready_list();
		else
			usage();
		return;
	}
	if (raw) {
		/* the two lists of kubectl get --raw, one a line */
		list_open("policy/v1", "PodDisruptionBudgetList");
		all_budgets();
		list_close();
		list_open("v1", "PodList");
		all_pods();
		list_close();
		return;
	}
	/* kubectl get pdb,pods -A -o json: the budgets, then the pods */
	list_open("v1", "List");
	all_budgets();
	all_pods();
	list_close();
}
