/* gen: GPU nodes as kubectl shows them, and a support matrix. */
#include "gen.h"

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

int kwok;

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
	ko("metadata", OBJ);
	ko("annotations", OBJ);
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
	ko("labels", OBJ);
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
	ko("spec", OBJ);
	snprintf(buf, sizeof buf, "10.%ld.%ld.0/24", 64 + i / 256 % 64, i % 256);
	kv("podCIDR", buf);
	ko("podCIDRs", ARR);
	str(buf);
	close_();
	snprintf(buf, sizeof buf, "aws:///us-east-1a/i-%08lx", i);
	kv("providerID", buf);
	close_();
	ko("status", OBJ);
	ko("addresses", ARR);
	open_(OBJ);
	snprintf(buf, sizeof buf, "10.0.%ld.%ld", i / 256, i % 256);
	kv("address", buf);
	kv("type", "InternalIP");
	close_();
	open_(OBJ);
	kv("address", name);
	kv("type", "Hostname");
	closen(2);
	ko("allocatable", OBJ);
	kv("cpu", "96");
	kv("ephemeral-storage", "95491281150");
	kv("memory", "1176478532Ki");
	kv("nvidia.com/gpu", "8");
	kv("pods", "110");
	close_();
	ko("capacity", OBJ);
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

		ko("conditions", ARR);
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
	ko("daemonEndpoints", OBJ);
	ko("kubeletEndpoint", OBJ);
	kn("Port", 10250);
	closen(2);
	ko("images", ARR);
	for (j = 0; j < 40; j++) {
		char repo[64];

		snprintf(repo, sizeof repo, "nvcr.io/nvidia/%s/image-%02d",
		    j % 3 ? "cloud-native" : "k8s", j);
		open_(OBJ);
		ko("names", ARR);
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
	ko("nodeInfo", OBJ);
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
	closen(3);
}

void
nodes(long n, long broken_every)
{
	long i;

	open_(OBJ);
	kv("apiVersion", "v1");
	ko("items", ARR);
	for (i = 0; i < n; i++)
		node(i, broken_every > 0 && i % broken_every == broken_every - 1);
	close_();
	kv("kind", raw ? "NodeList" : "List");
	ko("metadata", OBJ);
	kv("resourceVersion", raw ? "987654" : "");
	closen(2);
	putchar('\n');
}

void
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

