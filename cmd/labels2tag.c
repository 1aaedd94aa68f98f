/* labels2tag: the precompiled driver image tag of each Node, from its labels. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpudrv.h"

static const char usage[] = "[-cFnNsuw] [-b version | -t targets] [-k kernel] [file]\n"
    "       labels2tag -i [-nNuw] [-b version | -t targets] [-k kernel] [-R repository] [file]\n"
    "       labels2tag -L kind [file]";

struct opts {
	int names;   /* 1 always, 0 never, -1 for lists only */
	int unknown; /* print "<node> UNKNOWN <reason>" lines for bad nodes */
	int row;     /* print the matrix row instead of the tag */
	int state;   /* append the upgrade state and schedulability */
	int facts;   /* one record of node facts a node (-F) */
	int watch;   /* documents back to back, each printed as it ends */
	int image;   /* -i: the image reference, repository:tag, for the tag */
	const char *repo; /* -R: the repository of every image, else the targets' */
	struct tag_override ov;
	struct targets *targets;
	char *ostag;  /* the first node's, to tell a mixed fleet (-t) */
	int mixed;
	int bad;
	/*
	 * Lines and messages are held until the whole document has been read and
	 * checked: a list found bad at its end (its kind comes after its items)
	 * then prints nothing, as a whole-tree parse would.  They are small.
	 */
	FILE *out, *err;
	char *outbuf, *errbuf;
	size_t outlen, errlen;
};

static void
hold(struct opts *o)
{
	o->out = open_memstream(&o->outbuf, &o->outlen);
	o->err = open_memstream(&o->errbuf, &o->errlen);
	if (o->out == NULL || o->err == NULL)
		die("out of memory:");
}

static void
release(struct opts *o)
{
	fclose(o->out);
	fclose(o->err);
	free(o->outbuf);
	free(o->errbuf);
}

/*
 * A document ends: what was held is printed (with -w at once), or forgotten
 * (the items of a document that turned out to be one Node).
 */
static void
end_doc(int ok, void *arg)
{
	struct opts *o = arg;

	fflush(o->out);
	fflush(o->err);
	if (ok) {
		fwrite(o->errbuf, 1, o->errlen, stderr);
		fwrite(o->outbuf, 1, o->outlen, stdout);
		if (o->watch)
			fflush(stdout);
	}
	release(o);
	hold(o);
}

static void
note(struct opts *o, const char *fmt, ...)
{
	va_list ap;

	fprintf(o->err, "%s: ", progname);
	va_start(ap, fmt);
	vfprintf(o->err, fmt, ap);
	va_end(ap);
	fputc('\n', o->err);
}

static const char *
cordon(const cJSON *node)
{
	return node_unschedulable(node) ? "cordoned" : "schedulable";
}

/*
 * -u's line for a node that gets no tag: "<node> UNKNOWN <kind>:<label>", or
 * with -s, UNKNOWN in the tag's place before the state and cordon.  pre is
 * the watch event's "TYPE " or "".
 */
static void
unknown(struct opts *o, const char *pre, const char *name, const char *state,
        const cJSON *node, const char *kind, const char *label)
{
	if (!o->unknown)
		return;
	if (o->state)
		fprintf(o->out, "%s%s UNKNOWN %s %s\n", pre, name, state, cordon(node));
	else
		fprintf(o->out, "%s%s UNKNOWN %s:%s\n", pre, name, kind, label);
}

/*
 * -F's record: "node tag driver state skip cordon ready initial since
 * cordoner uid", where a node that gets no tag has UNKNOWN:fault:label (or, with
 * -t, SKIP:why:source) in the tag's place: the caller decides what that
 * means.  since is "<unix-seconds>:<how known>" or "-".
 */
static void
record(struct opts *o, const char *pre, const char *name, const char *tag,
       const char *a, const char *b, const struct node_facts *nf)
{
	char since[48] = "-";

	if (nf->since >= 0)
		snprintf(since, sizeof since, "%lld:%s", nf->since, nf->since_from);
	fprintf(o->out, "%s%s %s%s%s%s%s %s %s %s %s %s %s %s %s %s\n", pre, name, tag,
	    a ? ":" : "", a ? a : "", b ? ":" : "", b ? b : "", nf->driver, nf->state,
	    nf->skip ? "skip" : "-", nf->cordoned ? "cordoned" : "schedulable", nf->ready,
	    nf->initial ? "was-cordoned" : nf->ours ? "gpudrv" : "-", since, nf->cordoner, nf->uid);
}

/* The offending value of a node_facts fault, for the message. */
static const char *
fault_value(const cJSON *node, const struct tagfault *f)
{
	static char buf[96];
	const cJSON *v;
	char *txt;

	if (strcmp(f->label, "spec.unschedulable") == 0)
		v = j_get(j_get(node, "spec"), "unschedulable");
	else if (strncmp(f->label, "status.", 7) == 0)
		v = j_get(j_get(node, "status"), "conditions");
	else if (strcmp(f->label, "metadata.annotations") == 0)
		v = j_get(j_get(node, "metadata"), "annotations");
	else
		v = j_get(node_labels(node), f->label);
	if (strcmp(f->label, "metadata.managedFields") == 0)
		return "";
	if (cJSON_IsString(v))
		return qstr(v->valuestring);
	if (v == NULL || (txt = cJSON_PrintUnformatted(v)) == NULL)
		return "";
	snprintf(buf, sizeof buf, "%.80s%s", txt, strlen(txt) > 80 ? "..." : "");
	free(txt);
	return buf;
}

/*
 * -i: the node's image reference, repository:tag, in the tag's place.  A
 * repository that is missing or not one (the source object's,
 * src) makes the node an error: named on stderr, UNKNOWN no-image:src with
 * -u, never a reference made up.
 */
static void
image_line(struct opts *o, const char *pre, const char *name, int names, const cJSON *node,
           const char *tag, const char *repo, const char *src)
{
	char ref[REF_MAX + 1];
	const char *why;

	if (repo == NULL) {
		note(o, "node %s: %s names no repository of its image (repository, image and "
		    "version, or image with its tag): the GPU Operator cannot name the image "
		    "either; -R names one", name, src);
	} else if (image_ref(ref, sizeof ref, repo, tag, &why) != 0) {
		note(o, "node %s: the repository %s of %s %s", name, qstr(repo), src, why);
	} else {
		fprintf(o->out, "%s%s%s%s\n", pre, names ? name : "", names ? " " : "", ref);
		return;
	}
	unknown(o, pre, name, "-", node, "no-image", src);
	o->bad = 1;
}

static void
one_node(const struct item *it, void *arg)
{
	struct opts *o = arg;
	const cJSON *node = it->obj;
	const char *name = node_name(node);
	char tag[TAG_MAX + 1], row[TAG_MAX + 3];
	int untagged;
	struct tagfault f = { 0 };
	struct node_facts nf;
	int names = o->state || o->watch ? 1 : o->names < 0 ? it->in_list : o->names;
	const char *state = j_str(node_labels(node), L_STATE);
	size_t index = it->index;
	/* kubectl get -w --output-watch-events: each line says its event. */
	char pre[32];
	struct tag_override ov = o->ov;
	const char *repo = o->repo, *repo_src = "-R";

	snprintf(pre, sizeof pre, "%s%s", it->event ? it->event : "", it->event ? " " : "");

	if (name == NULL) {
		const char *raw = j_str(j_get(node, "metadata"), "name");

		note(o, "item %zu: metadata.name %s is not a valid node name", index,
		    raw ? qstr(raw) : j_type(j_get(j_get(node, "metadata"), "name")));
		if (o->unknown)
			fprintf(o->out, "%s#%zu UNKNOWN invalid:metadata.name\n", pre, index);
		o->bad = 1;
		return;
	}
	/* -s and -F act on the state and the cordon: a value the API server
	 * would not hold is an error, never "-" or "schedulable". */
	if ((o->state || o->facts) && node_facts(node, &nf, &f) != 0) {
		const char *val = fault_value(node, &f);

		note(o, "node %s: %s %s%s%s", name, f.label, val, *val ? " " : "", f.detail);
		o->bad = 1;
		return;
	}
	state = o->state || o->facts ? nf.state : "-";
	if (o->targets != NULL) {
		struct target t;
		int r = target_of(o->targets, node, &t);

		if (r == 1 && o->facts) {
			record(o, pre, name, "SKIP", t.skip, t.source, &nf);
			return;
		}
		if (r == 1) {
			fprintf(o->out, "%s%s SKIP %s:%s", pre, name, t.skip, t.source);
			if (o->state)
				fprintf(o->out, " %s %s", state, cordon(node));
			fputc('\n', o->out);
			return;
		}
		if (r < 0) {
			note(o, "node %s: %s and %s both select it: while they do, the GPU "
			    "Operator assigns no node to any NVIDIADriver (no node's driver "
			    "changes)", name, t.source, t.other);
			if (o->facts) {
				record(o, pre, name, "UNKNOWN", tag_faults[TF_CONFLICT], "nvidiadriver", &nf);
				return;
			}
			unknown(o, pre, name, state, node, tag_faults[TF_CONFLICT], "nvidiadriver");
			o->bad = 1;
			return;
		}
		ov.branch = t.version;
		if (repo == NULL) {
			repo = t.repository;
			repo_src = t.source;
		}
	}
	untagged = node_tag(node, &ov, tag, sizeof tag, row, sizeof row, &f) != 0;
	if (untagged && o->facts) {
		record(o, pre, name, "UNKNOWN", f.kind, f.label, &nf);
		return;
	}
	if (untagged) {
		const cJSON *v = j_get(node_labels(node), f.label);

		if (strcmp(f.label, "metadata.labels") == 0)
			note(o, "node %s: metadata.labels %s", name, f.detail);
		else if (f.kind == tag_faults[TF_INVALID])
			note(o, "node %s: label %s value %s %s", name, f.label,
			    cJSON_IsString(v) ? qstr(v->valuestring) : "", f.detail);
		else if (f.kind == tag_faults[TF_NOT_STRING])
			note(o, "node %s: label %s is not a string (%s)", name, f.label, j_type(v));
		else
			note(o, "node %s: label %s %s (%s sets it: is it running there?)", name,
			    f.label, f.detail, strncmp(f.label, "nvidia.com/", 11) == 0 ?
			    "gpu-feature-discovery" : "node-feature-discovery");
		unknown(o, pre, name, state, node, f.kind, f.label);
		o->bad = 1;
		return;
	}
	if (o->targets != NULL && targets_one_ostag(o->targets) && !o->mixed) {
		const char *os = strrchr(row, ',') + 1;

		if (o->ostag == NULL)
			o->ostag = xstrndup(os, strlen(os));
		else if (strcmp(o->ostag, os) != 0) {
			note(o, "the GPU nodes have more than one OS tag (%s, %s): under a "
			    "ClusterPolicy the GPU Operator pulls the OS tag of one GPU node "
			    "for all of them, so the others' images are not the ones listed "
			    "here; NVIDIADriver objects give each node its own", o->ostag, os);
			o->mixed = 1;
			o->bad = 1;
		}
	}
	if (o->facts) {
		record(o, pre, name, o->row ? row : tag, NULL, NULL, &nf);
		return;
	}
	if (o->image) {
		image_line(o, pre, name, names, node, tag, repo, repo_src);
		return;
	}
	fputs(pre, o->out);
	if (names)
		fprintf(o->out, "%s ", name);
	fputs(o->row ? row : tag, o->out);
	if (o->state)
		fprintf(o->out, " %s %s", state, cordon(node));
	fputc('\n', o->out);
}

/* -i and -R: checked before any input is read. */
static void
image_opts(const struct opts *o, const char *targets)
{
	const char *why;

	if (o->repo != NULL && !o->image)
		die("-R names the repository of -i's references: it goes with -i");
	if (o->image && (o->row || o->state || o->facts))
		usage_exit(usage);
	if (o->image && o->repo == NULL && targets == NULL)
		die("-i needs a repository: -t (the one the GPU Operator's objects name) or -R");
	if (o->repo != NULL && repo_check(o->repo, &why) != 0)
		die("-R %s: not a repository: it %s", qstr(o->repo), why);
}

int
main(int argc, char **argv)
{
	struct opts o = { .names = -1 };
	struct node_reader nr = { .fn = one_node, .end = end_doc };
	const char *why;
	char tmp[TAG_MAX + 1];
	const char *targets = NULL, *list = NULL;
	char said[1024];
	int c, rc, trouble, others = 0;

	setprogname(argv[0]);
	while ((c = nextopt(argc, argv, "cFinNsuwb:k:L:R:t:h", usage)) != -1) {
		others |= c != 'L';
		switch (c) {
		case 'c': o.row = 1; break;
		case 'F': o.facts = 1; break;
		case 'i': o.image = 1; break;
		case 'R': o.repo = optarg; break;
		case 's': o.state = 1; break;
		case 'n': o.names = 1; break;
		case 'N': o.names = 0; break;
		case 'u': o.unknown = 1; break;
		case 'w': o.watch = 1; break;
		case 'b': o.ov.branch = optarg; break;
		case 'k': o.ov.kernel = optarg; break;
		case 't': targets = optarg; break;
		case 'L': list = optarg; break;
		}
	}
	/* -L: one answer to a GET of a list, proven the whole list of that kind
	 * (sh/lib/api.sh get_targets), or what it is instead on stdout. */
	if (list != NULL) {
		if (argc - optind > 1 || others || *list == '\0')
			usage_exit(usage);
		if (doc_is_list(argv[optind], list, said, sizeof said) == 0)
			return fshut(stdout, "stdout");
		puts(said);
		rc = fshut(stdout, "stdout");
		return rc ? rc : EXIT_FINDINGS;
	}
	if (argc - optind > 1 || (targets && o.ov.branch) || (o.facts && (o.state || o.unknown)))
		usage_exit(usage);
	image_opts(&o, targets);
	o.ov.rule = tagrule_env();
	if (o.ov.branch && tag_build(tmp, sizeof tmp, o.ov.branch, "k", "os", &why) != 0)
		die("-b %s: %s", qstr(o.ov.branch), why);
	if (o.ov.kernel && tag_build(tmp, sizeof tmp, "0", o.ov.kernel, "os", &why) != 0)
		die("-k %s: %s", qstr(o.ov.kernel), why);

	if (targets != NULL) {
		if (strcmp(targets, "-") == 0 && (argv[optind] == NULL || strcmp(argv[optind], "-") == 0))
			die("-t -: the nodes and the targets cannot both be standard input");
		o.targets = targets_load(targets, 0);
		o.names = 1;
		nr.all_labels = 1;
	}
	hold(&o);
	nr.arg = &o;
	nr.want_spec = o.state;
	nr.want_facts = o.facts;
	nr.many = o.watch;
	nr.watch = o.watch;
	trouble = nodes_read(argv[optind], &nr);
	release(&o);
	targets_free(o.targets);
	free(o.ostag);
	rc = fshut(stdout, "stdout");
	return rc ? rc : o.bad || trouble ? EXIT_TROUBLE : EXIT_CLEAN;
}
