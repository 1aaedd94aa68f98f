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
 *   gen-nodes -m ROWS                a support matrix CSV of ROWS rows that
 *                                    holds the tags of every 2nd generated node.
 *   gen-nodes -p PODS,PDBS NODES     a List of Pods spread over NODES nodes and
 *                                    of PodDisruptionBudgets, for pdb-check.
 *
 * Key order is kubectl's (sorted); the YAML is kubectl's: 2-space indent,
 * list items not indented under their key, strings quoted only where YAML
 * would read them as something else.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int yaml, raw;

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
	key("conditions");
	YSEQ_OPEN();
	{
		static const char *const ct[][3] = {
			{ "MemoryPressure", "KubeletHasSufficientMemory", "kubelet has sufficient memory available" },
			{ "DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure" },
			{ "PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available" },
			{ "Ready", "KubeletReady", "kubelet is posting ready status" },
		};
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
	}
	close_();
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

/* Pods over nodes and budgets over namespaces, for pdb-check. */
static void
pods(long npods, long npdbs, long nnodes)
{
	long i;
	char buf[128];

	raw = 0;
	open_(OBJ);
	kv("apiVersion", "v1");
	key("items");
	YSEQ_OPEN();
	for (i = 0; i < npods; i++) {
		long ns = i % (npdbs > 0 ? npdbs : 1), node_i = i % nnodes;

		open_(OBJ);
		kv("apiVersion", "v1");
		kv("kind", "Pod");
		key("metadata");
		open_(OBJ);
		key("labels");
		open_(OBJ);
		snprintf(buf, sizeof buf, "app-%ld", ns);
		kv("app", buf);
		close_();
		snprintf(buf, sizeof buf, "pod-%06ld", i);
		kv("name", buf);
		snprintf(buf, sizeof buf, "ns-%04ld", ns);
		kv("namespace", buf);
		key("ownerReferences");
		YSEQ_OPEN();
		open_(OBJ);
		kv("apiVersion", "apps/v1");
		kb("controller", 1);
		kv("kind", "ReplicaSet");
		snprintf(buf, sizeof buf, "rs-%ld", ns);
		kv("name", buf);
		kv("uid", "00000000-0000-0000-0000-000000000001");
		close_();
		close_();
		close_();
		key("spec");
		open_(OBJ);
		snprintf(buf, sizeof buf, "gpu-node-%05ld", node_i);
		kv("nodeName", buf);
		close_();
		key("status");
		open_(OBJ);
		key("conditions");
		YSEQ_OPEN();
		open_(OBJ);
		kv("status", "True");
		kv("type", "Ready");
		close_();
		close_();
		kv("phase", "Running");
		close_();
		close_();
	}
	for (i = 0; i < npdbs; i++) {
		open_(OBJ);
		kv("apiVersion", "policy/v1");
		kv("kind", "PodDisruptionBudget");
		key("metadata");
		open_(OBJ);
		kn("generation", 1);
		snprintf(buf, sizeof buf, "pdb-%04ld", i);
		kv("name", buf);
		snprintf(buf, sizeof buf, "ns-%04ld", i);
		kv("namespace", buf);
		close_();
		key("spec");
		open_(OBJ);
		kn("maxUnavailable", 1);
		key("selector");
		open_(OBJ);
		key("matchLabels");
		open_(OBJ);
		snprintf(buf, sizeof buf, "app-%ld", i);
		kv("app", buf);
		close_();
		close_();
		close_();
		key("status");
		open_(OBJ);
		kn("currentHealthy", npods / npdbs);
		kn("desiredHealthy", npods / npdbs - 1);
		kn("disruptionsAllowed", 1);
		kn("expectedPods", npods / npdbs);
		kn("observedGeneration", 1);
		close_();
		close_();
	}
	close_();
	kv("kind", "List");
	key("metadata");
	open_(OBJ);
	kv("resourceVersion", "");
	close_();
	close_();
	putchar('\n');
}

static void
usage(void)
{
	fputs("usage: gen-nodes [-y] [-r] [-B k] N | -m ROWS | -p PODS,PDBS NODES\n", stderr);
	exit(2);
}

int
main(int argc, char **argv)
{
	long n, broken = 0, np = 0, nb = 0;
	int i;

	for (i = 1; i < argc && argv[i][0] == '-' && argv[i][1] != '\0'; i++) {
		if (strcmp(argv[i], "-y") == 0)
			yaml = 1;
		else if (strcmp(argv[i], "-r") == 0)
			raw = 1;
		else if (strcmp(argv[i], "-B") == 0 && i + 1 < argc)
			broken = atol(argv[++i]);
		else if (strcmp(argv[i], "-m") == 0 && i + 1 < argc) {
			matrix(atol(argv[++i]));
			return fflush(stdout) != 0;
		} else if (strcmp(argv[i], "-p") == 0 && i + 1 < argc &&
		    sscanf(argv[++i], "%ld,%ld", &np, &nb) == 2)
			;
		else
			usage();
	}
	if (i != argc - 1 || (n = atol(argv[i])) <= 0 || (yaml && raw))
		usage();
	if (np > 0)
		pods(np, nb, n);
	else
		nodes(n, broken);
	return fflush(stdout) != 0 || ferror(stdout);
}
