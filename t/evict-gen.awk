# t/evict-gen.awk: random PodDisruptionBudget scenarios for t/0950-e2e-evict.t,
# the same files for the same seed on any POSIX awk (its own Park-Miller
# generator, integers below 2^47 only; awk's rand() differs between awks).
#
#   awk -v seed=S -v n=N -v run=R -v dir=D -f t/evict-gen.awk </dev/null
#
# Scenario k (1..N) is named R-k: namespace R-k, a look-alike namespace
# R-k-x (used by some scenarios), and two kwok fake nodes R-k-d (the one
# drained) and R-k-o, each with the taint gpudrv.test/evict=R-k:NoSchedule
# that only the scenario's pods tolerate.  The names do not depend on the
# seed: pre.yaml is the same for every seed, so that a test can keep the
# nodes and namespaces from one seed to the next.  Every pod is placed on one of the two: a
# Deployment's or ReplicaSet's by the nodeSelector of its "part" (a workload
# group has a part on each node, each its own controller), a bare pod by
# spec.nodeName, a DaemonSet's on both.  Writes into D:
#   pre.yaml     the nodes and namespaces of all scenarios (created first,
#                so that the namespaces' default service accounts exist)
#   main.yaml    their workloads and budgets, all labelled gpudrv-evict=1
#                (pods too), so that one kubectl delete -l removes them
#   R-k.yaml     scenario k's objects, both kinds (for the diagnostics)
#   R-k.plan     what the test needs to know, one fact a line:
#                  drain NODE | other NODE | ns NS (a namespace it uses)
#                  pods NS COUNT
#                  unready NS CTL COUNT   (make COUNT pods labelled ctl=CTL,
#                                          first by name, not Ready)
#                  feature TAG             (for the coverage count)
#   list         the scenario names, one a line
# Labels: pods have app=gI (their group), ctl=gI-d|gI-o (their part; the
# controllers select on it), sometimes tier=a|b and track=stable|canary; the
# budgets select on these (never on gpudrv-evict).  Each scenario also gets one feature in turn
# (k + seed through the list F) forced on, so that every N >= NF run covers
# all of them.
function rnd(m) {
	X = (X * 16807) % 2147483647
	return X % m
}
function pct(p) { return rnd(100) < p }
# wpick("10 30 35 25"): an index 0.. drawn with these weights (summing to 100).
function wpick(w,    a, i, r, c, k) {
	k = split(w, a, " ")
	r = rnd(100)
	c = 0
	for (i = 1; i <= k; i++) {
		c += a[i]
		if (r < c)
			return i - 1
	}
	return k - 1
}
function emit(s) {
	print s > MAIN
	print s > SF
}
function emitpre(s) {
	print s > PRE
	print s > SF
}
function feature(t) { print "feature " t > PF }

function node(name, role) {
	emitpre("---\napiVersion: v1\nkind: Node\nmetadata:\n  name: " name \
	    "\n  annotations: {kwok.x-k8s.io/node: fake}\n  labels: {kubernetes.io/hostname: " name \
	    ", kubernetes.io/os: linux, kubernetes.io/arch: amd64, type: kwok, gpudrv-evict: \"1\", " \
	    "gpudrv-evict/scn: " SID ", gpudrv-evict/role: " role "}" \
	    "\nspec:\n  taints: [{key: gpudrv.test/evict, value: " SID ", effect: NoSchedule}]" \
	    "\nstatus:\n  allocatable: {cpu: \"32\", memory: 256Gi, pods: \"110\"}" \
	    "\n  capacity: {cpu: \"32\", memory: 256Gi, pods: \"110\"}")
}
function namespace(ns) {
	emitpre("---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: " ns \
	    "\n  labels: {gpudrv-evict: \"1\"}")
}
function podspec(ind, place) {
	return ind "spec:\n" ind "  " place "\n" ind "  tolerations: [{key: gpudrv.test/evict, " \
	    "operator: Equal, value: " SID ", effect: NoSchedule}]\n" ind \
	    "  terminationGracePeriodSeconds: 1\n" ind "  containers: [{name: c, image: busybox}]"
}
# part(ns, g, where, kind, count, labels): a workload group's pods on one node.
function part(ns, g, where, kind, count, labels,    ctl, nodename, i, tmpl) {
	if (count == 0)
		return
	ctl = g "-" where
	nodename = SID "-" where
	labels = "{ctl: " ctl ", app: " g labels ", gpudrv-evict: \"1\"}"
	if (kind == "bare") {
		for (i = 0; i < count; i++)
			emit("---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: " ctl "-" i \
			    "\n  namespace: " ns "\n  labels: " labels "\n" \
			    podspec("", "nodeName: " nodename))
	} else {
		tmpl = "  template:\n    metadata:\n      labels: " labels "\n" \
		    podspec("    ", "nodeSelector: {kubernetes.io/hostname: " nodename "}")
		emit("---\napiVersion: apps/v1\nkind: " (kind == "dep" ? "Deployment" : "ReplicaSet") \
		    "\nmetadata:\n  name: " ctl "\n  namespace: " ns "\n  labels: {gpudrv-evict: \"1\"}" \
		    "\nspec:\n  replicas: " count \
		    "\n  selector: {matchLabels: {ctl: " ctl "}}\n" tmpl)
	}
	PODS[ns] += count
	feature("kind-" kind)
}
function extralabels(    s, t) {
	s = ""
	t = wpick("40 30 30")
	if (t > 0)
		s = s ", tier: " (t == 1 ? "a" : "b")
	t = wpick("50 30 20")
	if (t > 0)
		s = s ", track: " (t == 1 ? "stable" : "canary")
	return s
}
function unready(ns, ctl, count, u) {
	if (u > count)
		u = count
	if (u < 1)
		return
	print "unready " ns " " ctl " " u > PF
	feature("unready")
}
# selector(kind, g, other): the text of spec.selector.
function selector(kind, g, other) {
	feature("sel-" kind)
	if (kind == "matchLabels")
		return "{matchLabels: {app: " g "}}"
	if (kind == "matchLabels2")
		return "{matchLabels: {app: " g ", tier: " (pct(50) ? "a" : "b") "}}"
	if (kind == "part")
		return "{matchLabels: {ctl: " g "-d}}"
	if (kind == "In")
		return "{matchExpressions: [{key: app, operator: In, values: [" g \
		    (other != g && pct(40) ? ", " other : "") "]}]}"
	if (kind == "NotIn")
		return pct(60) ? "{matchLabels: {app: " g "}, matchExpressions: [{key: tier, operator: NotIn, values: [b]}]}" \
		    : "{matchExpressions: [{key: app, operator: NotIn, values: [" other ", ds]}]}"
	if (kind == "Exists")
		return "{matchLabels: {app: " g "}, matchExpressions: [{key: track, operator: Exists}]}"
	if (kind == "DoesNotExist")
		return "{matchLabels: {app: " g "}, matchExpressions: [{key: track, operator: DoesNotExist}]}"
	return "{}"
}
function randsel(    i) {
	i = wpick("34 8 5 14 12 9 9 9")
	return SELS[i + 1]
}
function randspec(    i) {
	i = wpick("30 20 30 20")
	return SPECS[i + 1]
}
# spec(type, total): the minAvailable/maxUnavailable line for a group of total pods.
function spec(type, total,    v) {
	feature(type)
	if (type == "minAvailable-int")
		return "minAvailable: " rnd(total + 2)
	if (type == "maxUnavailable-int")
		return "maxUnavailable: " rnd(total + 2)
	v = PCTS[rnd(NPCT) + 1]
	return (type == "minAvailable-pct" ? "minAvailable" : "maxUnavailable") ": \"" v "%\""
}
function budget(ns, name, selkind, spectype, policy, g, other, total,    s) {
	s = "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: " name \
	    "\n  namespace: " ns "\n  labels: {gpudrv-evict: \"1\"}\nspec:\n  " spec(spectype, total) "\n  selector: " selector(selkind, g, other)
	if (policy != "")
		s = s "\n  unhealthyPodEvictionPolicy: " policy
	feature("policy-" (policy == "" ? "unset" : policy))
	emit(s)
	NB[ns]++
}
function randpolicy(    i) {
	i = wpick("45 25 30")
	return i == 0 ? "" : i == 1 ? "IfHealthyBudget" : "AlwaysAllow"
}

BEGIN {
	if (seed == "" || seed !~ /^[0-9]+$/ || n !~ /^[0-9]+$/ || run == "" || dir == "") {
		print "usage: awk -v seed=S -v n=N -v run=R -v dir=D -f evict-gen.awk" > "/dev/stderr"
		exit 2
	}
	X = seed % 2147483646 + 1
	for (i = 0; i < 8; i++)
		rnd(2)
	NSEL = split("matchLabels matchLabels2 part In NotIn Exists DoesNotExist empty", SELS, " ")
	split("minAvailable-int minAvailable-pct maxUnavailable-int maxUnavailable-pct", SPECS, " ")
	NPCT = split("0 20 25 34 50 60 75 100", PCTS, " ")
	KINDS[0] = "dep"
	KINDS[1] = "rs"
	KINDS[2] = "bare"
	NFEAT = split("kind-dep kind-rs kind-bare ds lookalike two-budgets minAvailable-int " \
	    "minAvailable-pct maxUnavailable-int maxUnavailable-pct sel-In sel-NotIn sel-Exists " \
	    "sel-DoesNotExist sel-empty unready policy-AlwaysAllow policy-IfHealthyBudget", F, " ")
	PRE = dir "/pre.yaml"
	MAIN = dir "/main.yaml"
	printf "" > PRE
	printf "" > MAIN
	printf "" > (dir "/list")
	for (k = 1; k <= n; k++) {
		SID = run "-" k
		SF = dir "/" SID ".yaml"
		PF = dir "/" SID ".plan"
		printf "" > SF
		printf "" > PF
		print SID > (dir "/list")
		force = F[(k + seed) % NFEAT + 1]
		print "feature forced:" force > PF
		print "drain " SID "-d" > PF
		print "other " SID "-o" > PF
		node(SID "-d", "d")
		node(SID "-o", "o")
		namespace(SID)
		namespace(SID "-x")
		print "ns " SID > PF
		ns = SID
		PODS[ns] = 0
		NB[ns] = 0

		# The groups: kinds, sizes, labels, unready pods.
		ng = 1 + rnd(3)
		for (g = 1; g <= ng; g++) {
			kd[g] = KINDS[wpick("45 30 25")]
			ko[g] = pct(75) ? kd[g] : KINDS[wpick("45 30 25")]
			nd[g] = wpick("10 30 35 25")
			no[g] = wpick("30 35 25 10")
			ld[g] = extralabels()
			lo[g] = pct(50) ? ld[g] : extralabels()
			ud[g] = pct(35) ? 1 + rnd(nd[g] + 1) : 0
			uo[g] = pct(25) ? 1 + rnd(no[g] + 1) : 0
			nb[g] = wpick("20 60 20")
			for (j = 1; j <= 2; j++) {
				sk[g, j] = randsel()
				st[g, j] = randspec()
				po[g, j] = randpolicy()
			}
		}
		# Group 1 always has pods on the drained node.
		if (nd[1] == 0)
			nd[1] = 1 + rnd(3)
		ds = pct(35)
		look = pct(35)
		# The forced feature.
		if (force ~ /^kind-/)
			kd[1] = substr(force, 6)
		else if (force == "ds")
			ds = 1
		else if (force == "lookalike")
			look = 1
		else if (force == "two-budgets") {
			nb[1] = 2
			sk[1, 1] = "matchLabels"
			sk[1, 2] = pct(50) ? "In" : "matchLabels"
		} else if (force ~ /Available-/) {
			if (nb[1] == 0)
				nb[1] = 1
			st[1, 1] = force
		} else if (force ~ /^sel-/) {
			if (nb[1] == 0)
				nb[1] = 1
			sk[1, 1] = substr(force, 5)
		} else if (force == "unready") {
			ud[1] = 1 + rnd(nd[1])
		} else if (force ~ /^policy-/) {
			if (nb[1] == 0)
				nb[1] = 1
			po[1, 1] = substr(force, 8)
			if (ud[1] == 0)
				ud[1] = 1 + rnd(nd[1])
		}

		for (g = 1; g <= ng; g++) {
			gn = "g" g
			part(ns, gn, "d", kd[g], nd[g], ld[g])
			part(ns, gn, "o", ko[g], no[g], lo[g])
			unready(ns, gn "-d", nd[g], ud[g])
			unready(ns, gn "-o", no[g], uo[g])
			other = "g" (g % ng + 1)
			feature("group-budgets-" nb[g])
			if (nd[g] > 0 && no[g] > 0)
				feature("split")
			for (j = 1; j <= nb[g]; j++)
				budget(ns, gn "-b" j, sk[g, j], st[g, j], po[g, j], gn, other, nd[g] + no[g])
			if (nb[g] == 2 && sk[g, 1] ~ /^(matchLabels|In)$/ && sk[g, 2] ~ /^(matchLabels|In)$/ && nd[g] > 0)
				feature("two-budgets")
		}
		if (ds) {
			dl = pct(50) ? "g1" : "ds"
			emit("---\napiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: ds\n  namespace: " ns \
			    "\n  labels: {gpudrv-evict: \"1\"}\nspec:\n  selector: {matchLabels: {ctl: ds}}" \
			    "\n  template:\n    metadata:\n      labels: {ctl: ds, app: " dl ", gpudrv-evict: \"1\"}\n" \
			    podspec("    ", "nodeSelector: {gpudrv-evict/scn: " SID "}"))
			PODS[ns] += 2
			feature("ds")
			if (dl == "g1")
				feature("ds-selected")
		}
		print "pods " ns " " PODS[ns] > PF

		# The look-alike namespace: group 1 again, same labels and places,
		# with a budget of its own or none.
		if (look) {
			lns = SID "-x"
			print "ns " lns > PF
			PODS[lns] = 0
			NB[lns] = 0
			part(lns, "g1", "d", kd[1], nd[1], ld[1])
			part(lns, "g1", "o", ko[1], no[1], lo[1])
			if (pct(30))
				unready(lns, "g1-d", nd[1], 1)
			if (pct(60))
				budget(lns, "g1-b1", "matchLabels", randspec(), randpolicy(), "g1", "g2", nd[1] + no[1])
			print "pods " lns " " PODS[lns] > PF
			feature("lookalike")
		}
		close(SF)
		close(PF)
	}
	close(PRE)
	close(MAIN)
	close(dir "/list")
}
