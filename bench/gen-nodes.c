/*
 * gen-nodes: synthetic but realistic inputs for the benchmarks and tests.
 *
 *   gen-nodes [-y] [-r] [-B k] N     a List of N Nodes as `kubectl get nodes
 *                                    -o json` (-y: -o yaml) prints it: ~110
 *                                    labels, 40 images, a full status each,
 *                                    ~25 KB of JSON per node.  -r: as
 *                                    `kubectl get --raw` (NodeList, compact,
 *                                    items without kind).  -B k: every k-th
 *                                    node lacks its driver-branch label.
 *   gen-nodes -k N                   the same nodes for kwok: annotation
 *                                    kwok.x-k8s.io/node=fake, no conditions
 *                                    (kwok's node-initialize stage sets them).
 *   gen-nodes -m ROWS                a support matrix CSV of ROWS rows that
 *                                    holds the tags of every 2nd generated node.
 *   gen-nodes [-y] -p PODS,PDBS NODES
 *                                    `kubectl get pdb,pods -A -o json` (-y:
 *                                    -o yaml) of a GPU cluster of NODES nodes:
 *                                    PDBS budgets, then PODS pods, each as the
 *                                    API shows it (~5 KB of JSON); see pods().
 *   gen-nodes -r -p PODS,PDBS NODES  the two `kubectl get --raw` lists instead,
 *                                    one a line: PodDisruptionBudgetList
 *                                    (/apis/policy/v1/poddisruptionbudgets),
 *                                    then PodList (/api/v1/pods).
 *   gen-nodes -C WHAT [-U uids] -p PODS,PDBS NODES
 *                                    the same cluster for kubectl create, one
 *                                    compact object a line, without what the
 *                                    API sets (status, uid, ...): WHAT is
 *                                    owners (namespaces, the DaemonSet, the
 *                                    ReplicaSets, the Jobs), pods (but the
 *                                    Jobs'), budgets, or unready ("namespace
 *                                    name" of the pods meant not Ready).
 *                                    -U: the owners' uids, "namespace/name
 *                                    uid" lines (else generated ones).
 *
 * Key order is kubectl's (sorted); the YAML is kubectl's: 2-space indent,
 * list items not indented under their key, strings quoted only where YAML
 * would read them as something else.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int yaml, raw, kwok;

static const char *const kernels[] = {
	"5.15.0-119-generic", "5.15.0-107-generic", "6.8.0-45-generic", "6.8.0-49-generic",
	"5.14.0-427.13.1.el9_4.x86_64",
};
static const char *const osid[] = { "ubuntu", "ubuntu", "ubuntu", "ubuntu", "rhel" };
static const char *const osver[] = { "22.04", "22.04", "24.04", "24.04", "9.4" };
static const char *const majors[] = { "535", "550", "570" };

static const char *const cpuid[] = {
	"ADX", "AESNI", "AMXBF16", "AMXINT8", "AMXTILE", "AVX", "AVX2", "AVX512BF16",
	"AVX512BITALG", "AVX512BW", "AVX512CD", "AVX512DQ", "AVX512F", "AVX512FP16",
	"AVX512IFMA", "AVX512VBMI", "AVX512VBMI2", "AVX512VL", "AVX512VNNI", "AVX512VPOPCNTDQ",
	"AVXVNNI", "CETIBT", "CETSS", "CLDEMOTE", "CMPXCHG8", "FMA3", "FSRM", "FXSR",
	"FXSROPT", "GFNI", "HYPERVISOR", "IA32_ARCH_CAP", "IBPB", "LAHF", "MD_CLEAR",
	"MOVBE", "MOVDIR64B", "MOVDIRI", "OSXSAVE", "SERIALIZE", "SHA", "SPEC_CTRL_SSBD",
	"STIBP", "SYSCALL", "SYSEE", "TSXLDTRK", "VAES", "VMX", "VPCLMULQDQ", "WAITPKG",
	"X87", "XGETBV1", "XSAVE", "XSAVEC", "XSAVEOPT", "XSAVES",
};

/* ---- output: one writer for both formats ---- */

enum { OBJ, ARR };
struct level {
	int kind, first;
	int ind;    /* YAML: column of its keys or dashes */
	int inline_; /* YAML: a mapping in a sequence: its first key follows "- " */
};
static struct level lv[64];
static int depth; /* lv[depth] is the open collection; 0: none */

static int
needs_quote(const char *s)
{
	static const char *const words[] = { "true", "false", "yes", "no", "on", "off", "y",
		"n", "null", "~", "True", "False", "Yes", "No", "On", "Off", "Null", "TRUE",
		"FALSE", "NULL", "Y", "N", NULL };
	size_t i, n = strlen(s);
	int numeric;

	if (n == 0 || strchr("-?:,[]{}#&*!|>'\"%@` ", s[0]) != NULL || s[n - 1] == ' ')
		return 1;
	if (strstr(s, ": ") != NULL || strstr(s, " #") != NULL || s[n - 1] == ':')
		return 1;
	for (i = 0; words[i] != NULL; i++)
		if (strcmp(s, words[i]) == 0)
			return 1;
	{
		char *end;

		(void)strtod(s, &end);
		numeric = *end == '\0';
	}
	/* and what YAML 1.1 reads as a timestamp */
	if (n >= 10 && isdigit((unsigned char)s[0]) && s[4] == '-' && s[7] == '-')
		numeric = 1;
	(void)i;
	return numeric;
}

static void
spaces(int n)
{
	while (n-- > 0)
		putchar(' ');
}

static void
jstring(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			putchar('\\');
		putchar(*s);
	}
	putchar('"');
}

/* JSON: before a member or an element. */
static void
jsep(void)
{
	if (depth == 0)
		return;
	if (!lv[depth].first)
		putchar(',');
	if (!raw) {
		putchar('\n');
		spaces(4 * depth);
	}
}

/* YAML: before a value that is a sequence element: its dash. */
static void
ydash(void)
{
	putchar('\n');
	spaces(lv[depth].ind);
	fputs("- ", stdout);
}

static void
key(const char *k)
{
	if (yaml) {
		if (lv[depth].inline_) {
			lv[depth].inline_ = 0;
		} else {
			if (!(depth == 1 && lv[depth].first))
				putchar('\n');
			spaces(lv[depth].ind);
		}
		fputs(k, stdout);
		putchar(':');
	} else {
		jsep();
		jstring(k);
		fputs(raw ? ":" : ": ", stdout);
	}
	lv[depth].first = 0;
}

/* A scalar, written as is (JSON numbers and booleans, YAML plain) or quoted. */
static void
scalar(const char *v, int is_str)
{
	if (yaml) {
		if (lv[depth].kind == ARR)
			ydash();
		else
			putchar(' ');
		if (!is_str || !needs_quote(v))
			fputs(v, stdout);
		else if (*v == '\0')
			fputs("\"\"", stdout);
		else
			printf("'%s'", v);
	} else {
		if (lv[depth].kind == ARR)
			jsep();
		if (is_str)
			jstring(v);
		else
			fputs(v, stdout);
	}
	lv[depth].first = 0;
}

static void str(const char *v) { scalar(v, 1); }

static void
num(long long v)
{
	char b[32];

	snprintf(b, sizeof b, "%lld", v);
	scalar(b, 0);
}

static void
open_(int kind)
{
	struct level *up = &lv[depth], *l = &lv[depth + 1];

	l->kind = kind;
	l->first = 1;
	l->inline_ = 0;
	if (yaml) {
		if (depth == 0) {
			l->ind = 0;
		} else if (up->kind == ARR) {
			ydash();
			l->ind = up->ind + 2;
			l->inline_ = 1;
		} else {
			l->ind = kind == OBJ ? up->ind + 2 : up->ind;
		}
	} else {
		if (depth > 0 && up->kind == ARR)
			jsep();
		putchar(kind == OBJ ? '{' : '[');
	}
	up->first = 0;
	depth++;
}

static void
close_(void)
{
	struct level *l = &lv[depth--];

	if (yaml) {
		if (l->first)
			fputs(l->kind == OBJ ? " {}" : " []", stdout);
		return;
	}
	if (!l->first && !raw) {
		putchar('\n');
		spaces(4 * depth);
	}
	putchar(l->kind == OBJ ? '}' : ']');
}

#define YSEQ_OPEN() open_(ARR)

static void kv(const char *k, const char *v) { key(k); str(v); }
static void kn(const char *k, long long v) { key(k); num(v); }
static void kb(const char *k, int v) { key(k); scalar(v ? "true" : "false", 0); }

/* ---- the data ---- */

static unsigned long long rng = 88172645463325252ULL;

static unsigned long long
next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void
hex(char *out, int n)
{
	static const char digits[] = "0123456789abcdef";

	while (n-- > 0)
		*out++ = digits[next() % 16];
	*out = '\0';
}

struct label {
	char k[256], v[64];
};

static int
bykey(const void *a, const void *b)
{
	return strcmp(((const struct label *)a)->k, ((const struct label *)b)->k);
}

static void
node(long i, int broken)
{
	struct label l[160];
	int n = 0, j, kv_i = (int)(i % 5);
	char name[64], buf[256], h[72];
	const char *maj = majors[i % 3];

	snprintf(name, sizeof name, "gpu-node-%05ld", i);
#define L(key_, ...) do { snprintf(l[n].k, sizeof l[n].k, "%s", key_); \
	snprintf(l[n].v, sizeof l[n].v, __VA_ARGS__); n++; } while (0)
	L("beta.kubernetes.io/arch", "amd64");
	L("beta.kubernetes.io/instance-type", "p4d.24xlarge");
	L("beta.kubernetes.io/os", "linux");
	for (j = 0; j < (int)(sizeof cpuid / sizeof cpuid[0]); j++) {
		snprintf(buf, sizeof buf, "feature.node.kubernetes.io/cpu-cpuid.%s", cpuid[j]);
		L(buf, "true");
	}
	L("feature.node.kubernetes.io/cpu-cstate.enabled", "true");
	L("feature.node.kubernetes.io/cpu-hardware_multithreading", "true");
	L("feature.node.kubernetes.io/cpu-model.family", "6");
	L("feature.node.kubernetes.io/cpu-model.id", "143");
	L("feature.node.kubernetes.io/cpu-model.vendor_id", "Intel");
	L("feature.node.kubernetes.io/cpu-pstate.status", "active");
	L("feature.node.kubernetes.io/cpu-pstate.turbo", "true");
	L("feature.node.kubernetes.io/cpu-rdt.RDTCMT", "true");
	L("feature.node.kubernetes.io/kernel-config.NO_HZ", "true");
	L("feature.node.kubernetes.io/kernel-config.NO_HZ_IDLE", "true");
	L("feature.node.kubernetes.io/kernel-version.full", "%s", kernels[kv_i]);
	L("feature.node.kubernetes.io/kernel-version.major", "%c", kernels[kv_i][0]);
	L("feature.node.kubernetes.io/kernel-version.minor", "%.*s",
	    (int)strcspn(kernels[kv_i] + 2, "."), kernels[kv_i] + 2);
	L("feature.node.kubernetes.io/kernel-version.revision", "0");
	L("feature.node.kubernetes.io/memory-numa", "true");
	L("feature.node.kubernetes.io/network-sriov.capable", "true");
	L("feature.node.kubernetes.io/pci-10de.present", "true");
	L("feature.node.kubernetes.io/pci-10de.sriov.capable", "true");
	L("feature.node.kubernetes.io/pci-1d0f.present", "true");
	L("feature.node.kubernetes.io/storage-nonrotationaldisk", "true");
	L("feature.node.kubernetes.io/system-os_release.ID", "%s", osid[kv_i]);
	L("feature.node.kubernetes.io/system-os_release.VERSION_ID", "%s", osver[kv_i]);
	L("feature.node.kubernetes.io/system-os_release.VERSION_ID.major", "%.*s",
	    (int)strcspn(osver[kv_i], "."), osver[kv_i]);
	L("feature.node.kubernetes.io/system-os_release.VERSION_ID.minor", "%s",
	    strchr(osver[kv_i], '.') + 1);
	L("kubernetes.io/arch", "amd64");
	L("kubernetes.io/hostname", "%s", name);
	L("kubernetes.io/os", "linux");
	L("node.kubernetes.io/instance-type", "p4d.24xlarge");
	L("nvidia.com/cuda.driver-version.full", "%s.90.07", maj);
	L("nvidia.com/cuda.driver-version.major", "%s", maj);
	L("nvidia.com/cuda.driver-version.minor", "90");
	L("nvidia.com/cuda.driver-version.revision", "07");
	if (!broken)
		L("nvidia.com/cuda.driver.major", "%s", maj);
	L("nvidia.com/cuda.driver.minor", "90");
	L("nvidia.com/cuda.driver.rev", "07");
	L("nvidia.com/cuda.runtime-version.full", "12.4");
	L("nvidia.com/cuda.runtime-version.major", "12");
	L("nvidia.com/cuda.runtime-version.minor", "4");
	L("nvidia.com/cuda.runtime.major", "12");
	L("nvidia.com/cuda.runtime.minor", "4");
	L("nvidia.com/gfd.timestamp", "1732874400");
	L("nvidia.com/gpu-driver-upgrade-state", "upgrade-done");
	L("nvidia.com/gpu.compute.major", "8");
	L("nvidia.com/gpu.compute.minor", "0");
	L("nvidia.com/gpu.count", "8");
	L("nvidia.com/gpu.deploy.container-toolkit", "true");
	L("nvidia.com/gpu.deploy.dcgm", "true");
	L("nvidia.com/gpu.deploy.dcgm-exporter", "true");
	L("nvidia.com/gpu.deploy.device-plugin", "true");
	L("nvidia.com/gpu.deploy.driver", "true");
	L("nvidia.com/gpu.deploy.gpu-feature-discovery", "true");
	L("nvidia.com/gpu.deploy.node-status-exporter", "true");
	L("nvidia.com/gpu.deploy.operator-validator", "true");
	L("nvidia.com/gpu.family", "ampere");
	L("nvidia.com/gpu.machine", "p4d.24xlarge");
	L("nvidia.com/gpu.memory", "40960");
	L("nvidia.com/gpu.mode", "compute");
	L("nvidia.com/gpu.present", "true");
	L("nvidia.com/gpu.product", "NVIDIA-A100-SXM4-40GB");
	L("nvidia.com/gpu.replicas", "1");
	L("nvidia.com/gpu.sharing-strategy", "none");
	L("nvidia.com/mig.capable", "true");
	L("nvidia.com/mig.strategy", "single");
	L("nvidia.com/mps.capable", "false");
	L("topology.kubernetes.io/region", "us-east-1");
	L("topology.kubernetes.io/zone", "us-east-1%c", "abcd"[i % 4]);
#undef L
	qsort(l, (size_t)n, sizeof l[0], bykey);

	open_(OBJ);
	kv("apiVersion", "v1");
	if (!raw)
		kv("kind", "Node");
	key("metadata");
	open_(OBJ);
	key("annotations");
	open_(OBJ);
	kv("csi.volume.kubernetes.io/nodeid", "{\"ebs.csi.aws.com\":\"i-0abc\"}");
	if (kwok)
		kv("kwok.x-k8s.io/node", "fake");
	kv("nfd.node.kubernetes.io/feature-labels", "cpu-cpuid.ADX,cpu-cpuid.AESNI,cpu-cpuid.AVX,"
	    "kernel-version.full,system-os_release.ID,system-os_release.VERSION_ID");
	kv("node.alpha.kubernetes.io/ttl", "0");
	kv("nvidia.com/gpu-driver-upgrade-enabled", "true");
	kv("volumes.kubernetes.io/controller-managed-attach-detach", "true");
	close_();
	kv("creationTimestamp", "2026-11-29T10:00:00Z");
	key("labels");
	open_(OBJ);
	for (j = 0; j < n; j++)
		kv(l[j].k, l[j].v);
	close_();
	kv("name", name);
	snprintf(buf, sizeof buf, "%ld", 100000 + i);
	kv("resourceVersion", buf);
	hex(h, 8);
	snprintf(buf, sizeof buf, "%s-1111-2222-3333-444455556666", h);
	kv("uid", buf);
	close_();
	key("spec");
	open_(OBJ);
	snprintf(buf, sizeof buf, "10.%ld.%ld.0/24", 64 + i / 256 % 64, i % 256);
	kv("podCIDR", buf);
	key("podCIDRs");
	YSEQ_OPEN();
	str(buf);
	close_();
	snprintf(buf, sizeof buf, "aws:///us-east-1a/i-%08lx", i);
	kv("providerID", buf);
	close_();
	key("status");
	open_(OBJ);
	key("addresses");
	YSEQ_OPEN();
	open_(OBJ);
	snprintf(buf, sizeof buf, "10.0.%ld.%ld", i / 256, i % 256);
	kv("address", buf);
	kv("type", "InternalIP");
	close_();
	open_(OBJ);
	kv("address", name);
	kv("type", "Hostname");
	close_();
	close_();
	key("allocatable");
	open_(OBJ);
	kv("cpu", "96");
	kv("ephemeral-storage", "95491281150");
	kv("memory", "1176478532Ki");
	kv("nvidia.com/gpu", "8");
	kv("pods", "110");
	close_();
	key("capacity");
	open_(OBJ);
	kv("cpu", "96");
	kv("ephemeral-storage", "103609160Ki");
	kv("memory", "1176580932Ki");
	kv("nvidia.com/gpu", "8");
	kv("pods", "110");
	close_();
	/* kwok's node-initialize stage sets the conditions of its nodes */
	if (!kwok) {
		static const char *const ct[][3] = {
			{ "MemoryPressure", "KubeletHasSufficientMemory", "kubelet has sufficient memory available" },
			{ "DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure" },
			{ "PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available" },
			{ "Ready", "KubeletReady", "kubelet is posting ready status" },
		};

		key("conditions");
		YSEQ_OPEN();
		for (j = 0; j < 4; j++) {
			open_(OBJ);
			kv("lastHeartbeatTime", "2026-11-29T10:05:00Z");
			kv("lastTransitionTime", "2026-11-29T10:00:00Z");
			kv("message", ct[j][2]);
			kv("reason", ct[j][1]);
			kv("status", j == 3 ? "True" : "False");
			kv("type", ct[j][0]);
			close_();
		}
		close_();
	}
	key("daemonEndpoints");
	open_(OBJ);
	key("kubeletEndpoint");
	open_(OBJ);
	kn("Port", 10250);
	close_();
	close_();
	key("images");
	YSEQ_OPEN();
	for (j = 0; j < 40; j++) {
		char repo[64];

		snprintf(repo, sizeof repo, "nvcr.io/nvidia/%s/image-%02d",
		    j % 3 ? "cloud-native" : "k8s", j);
		open_(OBJ);
		key("names");
		YSEQ_OPEN();
		hex(h, 64);
		snprintf(buf, sizeof buf, "%s@sha256:%s", repo, h);
		str(buf);
		snprintf(buf, sizeof buf, "%s:v%d.%d.%d-ubuntu22.04", repo, j % 4, j % 10, j % 7);
		str(buf);
		close_();
		kn("sizeBytes", 100000000 + (long long)(next() % 900000000));
		close_();
	}
	close_();
	key("nodeInfo");
	open_(OBJ);
	kv("architecture", "amd64");
	hex(h, 32);
	kv("bootID", h);
	kv("containerRuntimeVersion", "containerd://1.7.22");
	kv("kernelVersion", kernels[kv_i]);
	kv("kubeProxyVersion", "v1.31.2");
	kv("kubeletVersion", "v1.31.2");
	hex(h, 32);
	kv("machineID", h);
	kv("operatingSystem", "linux");
	kv("osImage", kv_i == 4 ? "Red Hat Enterprise Linux 9.4 (Plow)" : "Ubuntu 22.04.5 LTS");
	kv("systemUUID", h);
	close_();
	close_();
	close_();
}

static void
nodes(long n, long broken_every)
{
	long i;

	open_(OBJ);
	kv("apiVersion", "v1");
	key("items");
	YSEQ_OPEN();
	for (i = 0; i < n; i++)
		node(i, broken_every > 0 && i % broken_every == broken_every - 1);
	close_();
	kv("kind", raw ? "NodeList" : "List");
	key("metadata");
	open_(OBJ);
	kv("resourceVersion", raw ? "987654" : "");
	close_();
	close_();
	putchar('\n');
}

static void
matrix(long rows)
{
	long i;

	puts("driver_branch,kernel,os_tag");
	for (i = 0; i < rows; i++) {
		int k = (int)(i % 5);

		if (i < 15 && i % 2 == 0)
			/* the tags of generated nodes: every node's kernel, branches 535 and 570 */
			printf("%s,%s,%s%s\n", majors[(i / 5) % 3], kernels[k], osid[k], osver[k]);
		else
			printf("%ld,%s,%s%s\n", 400 + i % 97, kernels[k], osid[k], osver[k]);
	}
}


/* ---- pods and budgets, for pdb-check and the fleet benchmark ---- */

static void usage(void);

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
static int create;             /* -C: objects for kubectl create, one compact JSON a line */
static const char *uidfile;    /* -U: the owners' real uids */

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
				perror("gen-nodes");
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
		fprintf(stderr, "gen-nodes: %s: no uid for %s\n", uidfile, k.key);
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

	YSEQ_OPEN();
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
	key("valueFrom");
	open_(OBJ);
	key("fieldRef");
	open_(OBJ);
	kv("apiVersion", "v1");
	kv("fieldPath", path);
	close_();
	close_();
	close_();
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

	key("resources");
	open_(OBJ);
	for (i = 0; i < 2; i++) {
		key(i == 0 ? "limits" : "requests");
		open_(OBJ);
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
	key("projected");
	open_(OBJ);
	kn("defaultMode", 420);
	key("sources");
	YSEQ_OPEN();
	open_(OBJ);
	key("serviceAccountToken");
	open_(OBJ);
	kn("expirationSeconds", 3607);
	kv("path", "token");
	close_();
	close_();
	open_(OBJ);
	key("configMap");
	open_(OBJ);
	key("items");
	YSEQ_OPEN();
	open_(OBJ);
	kv("key", "ca.crt");
	kv("path", "ca.crt");
	close_();
	close_();
	kv("name", "kube-root-ca.crt");
	close_();
	close_();
	open_(OBJ);
	key("downwardAPI");
	open_(OBJ);
	key("items");
	YSEQ_OPEN();
	open_(OBJ);
	key("fieldRef");
	open_(OBJ);
	kv("apiVersion", "v1");
	kv("fieldPath", "metadata.namespace");
	close_();
	kv("path", "namespace");
	close_();
	close_();
	close_();
	close_();
	close_();
	close_();
	close_();
}

static void
host_volume(const char *name, const char *path, const char *type)
{
	open_(OBJ);
	key("hostPath");
	open_(OBJ);
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
	key(k);
	YSEQ_OPEN();
	open_(OBJ);
	kv("ip", ip);
	close_();
	close_();
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
	key("lastState");
	open_(OBJ);
	if (c->restarts > 0) {
		key("terminated");
		open_(OBJ);
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
		key("resources");
		open_(OBJ);
		close_();
	}
	kn("restartCount", c->restarts);
	kb("started", !c->done);
	key("state");
	open_(OBJ);
	if (c->done) {
		key("terminated");
		open_(OBJ);
		kv("containerID", id);
		kn("exitCode", 0);
		kv("finishedAt", c->finished);
		kv("reason", "Completed");
		kv("startedAt", c->started);
		close_();
	} else {
		key("running");
		open_(OBJ);
		kv("startedAt", c->started);
		close_();
	}
	close_();
	key("volumeMounts");
	YSEQ_OPEN();
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
	close_();
	close_();
}

/* status of a pod: phase Running (ready or not) or Succeeded (done) */
static void
pod_status(long node, long slot, const char *t0, const char *t1, int ready, int done,
    const char *qos, const struct cstat *cs, int ncs, const char *main_ctr)
{
	char ip[32], msg[200];
	int i;

	key("status");
	open_(OBJ);
	key("conditions");
	YSEQ_OPEN();
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
	key("containerStatuses");
	YSEQ_OPEN();
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
	key("ownerReferences");
	YSEQ_OPEN();
	open_(OBJ);
	kv("apiVersion", api);
	kb("blockOwnerDeletion", 1);
	kb("controller", 1);
	kv("kind", kind);
	kv("name", name);
	kv("uid", uid);
	close_();
	close_();
}

static void
gpu_tolerations(int pod)
{
	key("tolerations");
	YSEQ_OPEN();
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
	key("spec");
	open_(OBJ);
	key("containers");
	YSEQ_OPEN();
	open_(OBJ);
	key("args");
	words(a->args);
	key("command");
	words(a->command);
	key("env");
	YSEQ_OPEN();
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
	key("ports");
	YSEQ_OPEN();
	open_(OBJ);
	kn("containerPort", a->port);
	kv("name", "http");
	kv("protocol", "TCP");
	close_();
	close_();
	key("readinessProbe");
	open_(OBJ);
	kn("failureThreshold", 3);
	key("httpGet");
	open_(OBJ);
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
	key("volumeMounts");
	YSEQ_OPEN();
	mount("/dev/shm", "dshm", 0);
	mount("/models", "model-cache", 0);
	if (pod)
		api_mount(api);
	close_();
	close_();
	if (sidecar(k)) {
		open_(OBJ);
		key("args");
		words("--statsd.mapping-config=/etc/statsd/mapping.yaml --web.listen-address=:9102");
		kv("image", "prom/statsd-exporter:v0.27.1");
		kv("imagePullPolicy", "IfNotPresent");
		kv("name", "metrics-exporter");
		key("ports");
		YSEQ_OPEN();
		open_(OBJ);
		kn("containerPort", 9102);
		kv("name", "metrics");
		kv("protocol", "TCP");
		close_();
		close_();
		resources("100m", "128Mi", NULL);
		termination_message();
		if (pod) {
			key("volumeMounts");
			YSEQ_OPEN();
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
	key("nodeSelector");
	open_(OBJ);
	kv("nvidia.com/gpu.present", "true");
	close_();
	if (pod && !create) {
		kv("preemptionPolicy", "PreemptLowerPriority");
		kn("priority", 0);
	}
	kv("restartPolicy", "Always");
	kv("schedulerName", "default-scheduler");
	key("securityContext");
	open_(OBJ);
	kn("fsGroup", 1000);
	close_();
	service_account(pod, "default");
	kn("terminationGracePeriodSeconds", 30);
	gpu_tolerations(pod);
	key("volumes");
	YSEQ_OPEN();
	open_(OBJ);
	key("emptyDir");
	open_(OBJ);
	kv("medium", "Memory");
	kv("sizeLimit", "16Gi");
	close_();
	kv("name", "dshm");
	close_();
	open_(OBJ);
	key("emptyDir");
	open_(OBJ);
	kv("sizeLimit", "200Gi");
	close_();
	kv("name", "model-cache");
	close_();
	if (pod)
		api_volume(api);
	close_();
	close_();
}

static void
rs_labels(long k, const char *hash)
{
	char buf[64];

	key("labels");
	open_(OBJ);
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

	key("annotations");
	open_(OBJ);
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
	key("metadata");
	open_(OBJ);
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
	key("spec");
	open_(OBJ);
	if (pod) {
		snprintf(buf, sizeof buf, "gpu-node-%05ld", node);
		key("affinity");
		open_(OBJ);
		key("nodeAffinity");
		open_(OBJ);
		key("requiredDuringSchedulingIgnoredDuringExecution");
		open_(OBJ);
		key("nodeSelectorTerms");
		YSEQ_OPEN();
		open_(OBJ);
		key("matchFields");
		YSEQ_OPEN();
		open_(OBJ);
		kv("key", "metadata.name");
		kv("operator", "In");
		key("values");
		YSEQ_OPEN();
		str(buf);
		close_();
		close_();
		close_();
		close_();
		close_();
		close_();
		close_();
		close_();
	}
	key("containers");
	YSEQ_OPEN();
	open_(OBJ);
	key("args");
	words("init");
	key("command");
	words("nvidia-driver");
	key("env");
	YSEQ_OPEN();
	env_val("NVIDIA_VISIBLE_DEVICES", "void");
	env_val("GPU_DIRECT_RDMA_ENABLED", "false");
	env_val("USE_HOST_MOFED", "false");
	env_val("KERNEL_MODULE_TYPE", "auto");
	close_();
	kv("image", DS_IMAGE);
	kv("imagePullPolicy", "IfNotPresent");
	kv("name", "nvidia-driver-ctr");
	key("resources");
	open_(OBJ);
	close_();
	key("securityContext");
	open_(OBJ);
	if (!create) /* the sandbox's API server runs without --allow-privileged */
		kb("privileged", 1);
	key("seLinuxOptions");
	open_(OBJ);
	kv("level", "s0");
	close_();
	close_();
	key("startupProbe");
	open_(OBJ);
	key("exec");
	open_(OBJ);
	key("command");
	YSEQ_OPEN();
	str("sh");
	str("-c");
	str("nvidia-smi && touch /run/nvidia/validations/.driver-ctr-ready");
	close_();
	close_();
	kn("failureThreshold", 120);
	kn("initialDelaySeconds", 60);
	kn("periodSeconds", 10);
	kn("successThreshold", 1);
	kn("timeoutSeconds", 60);
	close_();
	termination_message();
	key("volumeMounts");
	YSEQ_OPEN();
	for (i = 0; i < 10; i++)
		mount(ds_mounts[i][0], ds_mounts[i][1], i == 3);
	if (pod)
		api_mount(api);
	close_();
	close_();
	close_();
	kv("dnsPolicy", "ClusterFirst");
	kb("enableServiceLinks", 1);
	kb("hostPID", 1);
	if (pod)
		kv("nodeName", buf);
	key("nodeSelector");
	open_(OBJ);
	kv("nvidia.com/gpu.deploy.driver", "true");
	close_();
	if (pod && !create) {
		kv("preemptionPolicy", "PreemptLowerPriority");
		kn("priority", 2000001000);
	}
	kv("priorityClassName", "system-node-critical");
	kv("restartPolicy", "Always");
	kv("schedulerName", "default-scheduler");
	key("securityContext");
	open_(OBJ);
	close_();
	service_account(pod, "nvidia-driver");
	kn("terminationGracePeriodSeconds", 60);
	key("tolerations");
	YSEQ_OPEN();
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
	key("volumes");
	YSEQ_OPEN();
	for (i = 0; i < 10; i++)
		host_volume(ds_vols[i][0], ds_vols[i][1], ds_vols[i][2]);
	if (pod)
		api_volume(api);
	close_();
	close_();
}

static void
ds_labels(int pod)
{
	key("labels");
	open_(OBJ);
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
	key("metadata");
	open_(OBJ);
	key("annotations");
	open_(OBJ);
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
	key("spec");
	open_(OBJ);
	key("containers");
	YSEQ_OPEN();
	open_(OBJ);
	key("args");
	words("--suite=regression --model=/models/candidate --report=/models/reports");
	key("command");
	words("python -m evals.run");
	key("env");
	YSEQ_OPEN();
	env_val("CUDA_DEVICE_ORDER", "PCI_BUS_ID");
	env_ref("POD_NAME", "metadata.name");
	close_();
	kv("image", "registry.example.com/ml/evals:2026.11.2");
	kv("imagePullPolicy", "IfNotPresent");
	kv("name", "evaluator");
	resources("8", "64Gi", "1");
	termination_message();
	if (pod) {
		key("volumeMounts");
		YSEQ_OPEN();
		api_mount(api);
		close_();
	}
	close_();
	close_();
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
	key("securityContext");
	open_(OBJ);
	close_();
	service_account(pod, "default");
	kn("terminationGracePeriodSeconds", 30);
	gpu_tolerations(pod);
	if (pod) {
		key("volumes");
		YSEQ_OPEN();
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
	key("metadata");
	open_(OBJ);
	if (!create)
		kv("creationTimestamp", t0);
	kv("generateName", gen);
	key("labels");
	open_(OBJ);
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
	key("metadata");
	open_(OBJ);
	key("annotations");
	open_(OBJ);
	kv("meta.helm.sh/release-name", a->name);
	kv("meta.helm.sh/release-namespace", ns);
	close_();
	if (!create) {
		kv("creationTimestamp", t0);
		kn("generation", b.gen);
	}
	key("labels");
	open_(OBJ);
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
	key("spec");
	open_(OBJ);
	if (b.max >= 0)
		intstr("maxUnavailable", b.max, b.pct_max);
	if (b.min >= 0)
		intstr("minAvailable", b.min, b.pct_min);
	key("selector");
	open_(OBJ);
	key("matchLabels");
	open_(OBJ);
	kv("app.kubernetes.io/instance", a->name);
	kv("app.kubernetes.io/name", a->name);
	close_();
	close_();
	if (b.always_allow)
		kv("unhealthyPodEvictionPolicy", "AlwaysAllow");
	close_();
	if (!create) {
		key("status");
		open_(OBJ);
		key("conditions");
		YSEQ_OPEN();
		open_(OBJ);
		kv("lastTransitionTime", t1);
		kv("message", "");
		kn("observedGeneration", b.gen);
		kv("reason", b.allowed > 0 ? "SufficientPods" : "InsufficientPods");
		kv("status", b.allowed > 0 ? "True" : "False");
		kv("type", "DisruptionAllowed");
		close_();
		close_();
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
		perror("gen-nodes");
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
					perror("gen-nodes");
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
				perror("gen-nodes");
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
static void
list_open(const char *api, const char *kind)
{
	open_(OBJ);
	if (raw) {
		kv("kind", kind);
		kv("apiVersion", api);
		key("metadata");
		open_(OBJ);
		kv("resourceVersion", "7654321");
		close_();
	} else {
		kv("apiVersion", "v1");
	}
	key("items");
	YSEQ_OPEN();
}

static void
list_close(void)
{
	close_();
	if (!raw) {
		kv("kind", "List");
		key("metadata");
		open_(OBJ);
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
		key("metadata");
		open_(OBJ);
		key("labels");
		open_(OBJ);
		kv("gpudrv-bench", "1");
		close_();
		kv("name", ns);
		close_();
		close_();
		putchar('\n');
	}
	open_(OBJ);
	kv("apiVersion", "v1");
	kv("kind", "ServiceAccount");
	key("metadata");
	open_(OBJ);
	kv("name", "nvidia-driver");
	kv("namespace", DS_NS);
	close_();
	close_();
	putchar('\n');

	open_(OBJ);
	kv("apiVersion", "apps/v1");
	kv("kind", "DaemonSet");
	key("metadata");
	open_(OBJ);
	ds_labels(0);
	kv("name", DS_NAME);
	kv("namespace", DS_NS);
	close_();
	key("spec");
	open_(OBJ);
	key("selector");
	open_(OBJ);
	key("matchLabels");
	open_(OBJ);
	kv("app", DS_NAME);
	close_();
	close_();
	key("template");
	open_(OBJ);
	key("metadata");
	open_(OBJ);
	ds_labels(0);
	close_();
	ds_spec(-1);
	close_();
	key("updateStrategy");
	open_(OBJ);
	kv("type", "OnDelete"); /* as the GPU Operator's: its upgrade controller restarts them */
	close_();
	close_();
	close_();
	putchar('\n');

	for (k = 0; k < L.rs; k++) {
		rs_name(rs, sizeof rs, k);
		team(ns, sizeof ns, k / 10);
		kname(h, 10, D_RSHASH, k);
		open_(OBJ);
		kv("apiVersion", "apps/v1");
		kv("kind", "ReplicaSet");
		key("metadata");
		open_(OBJ);
		rs_labels(k, h);
		kv("name", rs);
		kv("namespace", ns);
		close_();
		key("spec");
		open_(OBJ);
		kn("replicas", rs_replicas(k));
		key("selector");
		open_(OBJ);
		key("matchLabels");
		open_(OBJ);
		kv("app.kubernetes.io/instance", apps[k % 10].name);
		kv("app.kubernetes.io/name", apps[k % 10].name);
		kv("pod-template-hash", h);
		close_();
		close_();
		key("template");
		open_(OBJ);
		key("metadata");
		open_(OBJ);
		rs_annotations(k);
		rs_labels(k, h);
		close_();
		rs_spec(k, -1);
		close_();
		close_();
		close_();
		putchar('\n');
	}

	for (j = 0; j < L.jobs; j++) {
		job_name(buf, sizeof buf, j);
		team(ns, sizeof ns, j % L.ns);
		open_(OBJ);
		kv("apiVersion", "batch/v1");
		kv("kind", "Job");
		key("metadata");
		open_(OBJ);
		kv("name", buf);
		kv("namespace", ns);
		close_();
		key("spec");
		open_(OBJ);
		kn("backoffLimit", 0);
		kn("completions", 1);
		kn("parallelism", 1);
		key("template");
		open_(OBJ);
		job_spec(j, 0);
		close_();
		close_();
		close_();
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

static void
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

static void
usage(void)
{
	fputs("usage: gen-nodes [-y | -r] [-k] [-B k] N\n"
	      "       gen-nodes -m ROWS\n"
	      "       gen-nodes [-y | -r | -C owners|pods|budgets|unready [-U uids]] -p PODS,PDBS NODES\n",
	    stderr);
	exit(2);
}

int
main(int argc, char **argv)
{
	long n, broken = 0, np = 0, nb = 0;
	const char *what = NULL;
	int i;

	for (i = 1; i < argc && argv[i][0] == '-' && argv[i][1] != '\0'; i++) {
		if (strcmp(argv[i], "-y") == 0)
			yaml = 1;
		else if (strcmp(argv[i], "-r") == 0)
			raw = 1;
		else if (strcmp(argv[i], "-k") == 0)
			kwok = 1;
		else if (strcmp(argv[i], "-B") == 0 && i + 1 < argc)
			broken = atol(argv[++i]);
		else if (strcmp(argv[i], "-C") == 0 && i + 1 < argc)
			create = 1, what = argv[++i];
		else if (strcmp(argv[i], "-U") == 0 && i + 1 < argc)
			uidfile = argv[++i];
		else if (strcmp(argv[i], "-m") == 0 && i + 1 < argc) {
			matrix(atol(argv[++i]));
			return fflush(stdout) != 0;
		} else if (strcmp(argv[i], "-p") == 0 && i + 1 < argc &&
		    sscanf(argv[++i], "%ld,%ld", &np, &nb) == 2 && np >= 0 && nb >= 0)
			;
		else
			usage();
	}
	if (i != argc - 1 || (n = atol(argv[i])) <= 0 || yaml + raw + create > 1 ||
	    ((create || uidfile) && np == 0) || (uidfile && !create) || (kwok && np > 0))
		usage();
	if (np > 0)
		pods(np, nb, n, what);
	else
		nodes(n, broken);
	return fflush(stdout) != 0 || ferror(stdout);
}
