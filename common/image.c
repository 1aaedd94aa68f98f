/*
 * Image references: a repository checked, and the one reference
 * repository:tag built from it and a tag (tag.c's, never split).
 *
 * A repository is read as container tools read one (the distribution
 * project's reference grammar, which the GPU Operator's own parser
 * applies to the driver image): registry "/" path, where the registry is
 * a host name or IPv4 address with an optional ":port", and the path is
 * lowercase components of letters and digits joined by ".", "_", "__" or
 * dashes, separated by "/"; 255 characters at most.  The grammar lets a
 * repository leave its registry out (a first component with no "." nor
 * ":" that is not "localhost"), for the one container tools then imply;
 * gpudrv refuses that: a reference it writes names its registry, as it was
 * given, so that a mirror list says where each image comes from, and
 * nothing in it is implied or guessed.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "gpudrv.h"

#define NAME_MAX_LEN REPO_MAX /* the grammar's NameTotalLengthMax */

/* One registry host name component: [A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?. */
static int
host_ok(const char *s, size_t n)
{
	size_t i, start = 0;

	if (n == 0)
		return 0;
	for (i = 0; i <= n; i++) {
		if (i < n && s[i] != '.') {
			if (!isalnum((unsigned char)s[i]) && s[i] != '-')
				return 0;
			continue;
		}
		/* A component is s[start, i). */
		if (i == start || s[start] == '-' || s[i - 1] == '-')
			return 0;
		start = i + 1;
	}
	return 1;
}

/* host[:port] */
static int
registry_ok(const char *s, size_t n)
{
	const char *colon = memchr(s, ':', n);
	size_t h = colon ? (size_t)(colon - s) : n, p = n - h;

	if (!host_ok(s, h))
		return 0;
	if (colon == NULL)
		return 1;
	return p > 1 && strspn(colon + 1, "0123456789") >= p - 1;
}

/* One path component: [a-z0-9]+ (("." | "_" | "__" | "-"+) [a-z0-9]+)*. */
static int
component_ok(const char *s, size_t n)
{
	size_t i = 0, k;

	for (;;) {
		for (k = i; i < n && (islower((unsigned char)s[i]) || isdigit((unsigned char)s[i])); i++)
			;
		if (i == k)
			return 0;
		if (i == n)
			return 1;
		if (s[i] == '.')
			i++;
		else if (s[i] == '_')
			i += i + 1 < n && s[i + 1] == '_' ? 2 : 1;
		else if (s[i] == '-')
			while (i < n && s[i] == '-')
				i++;
		else
			return 0;
	}
}

static int
path_ok(const char *s)
{
	const char *slash;

	for (;;) {
		slash = strchr(s, '/');
		if (!component_ok(s, slash ? (size_t)(slash - s) : strlen(s)))
			return 0;
		if (slash == NULL)
			return 1;
		s = slash + 1;
	}
}

int
repo_check(const char *repo, const char **why)
{
	const char *slash;
	char lower[NAME_MAX_LEN + 1];
	size_t first, i;
	int domain;

	if (repo == NULL || *repo == '\0') {
		*why = "is empty";
		return -1;
	}
	if (strlen(repo) > NAME_MAX_LEN) {
		*why = "is longer than 255 characters";
		return -1;
	}
	if (strchr(repo, '@') != NULL) {
		*why = "holds a digest: a repository is registry/path/name, without a tag or digest";
		return -1;
	}
	slash = strchr(repo, '/');
	first = slash ? (size_t)(slash - repo) : strlen(repo);
	for (i = 0; i < first; i++)
		lower[i] = (char)tolower((unsigned char)repo[i]);
	lower[first] = '\0';
	domain = slash != NULL && (memchr(repo, '.', first) != NULL ||
	    memchr(repo, ':', first) != NULL || strcmp(lower, "localhost") == 0 ||
	    strncmp(lower, repo, first) != 0);
	if (!domain) {
		*why = "names no registry (registry.example/nvidia/driver, not nvidia/driver): "
		    "the registry an image comes from is never implied";
		return -1;
	}
	if (repo[0] == '[') {
		*why = "names its registry by an IPv6 address, which gpudrv does not take: use a host name";
		return -1;
	}
	if (!registry_ok(repo, first)) {
		*why = "does not begin with a registry host name[:port]";
		return -1;
	}
	if (!path_ok(slash + 1)) {
		*why = strchr(slash + 1, ':') != NULL ? "holds a tag: a repository is registry/path/name, "
		    "without a tag or digest" : "is not a repository path (lowercase letters and "
		    "digits, joined by '.', '_', '__' or '-', components separated by '/')";
		return -1;
	}
	return 0;
}

int
image_ref(char *out, size_t outsz, const char *repo, const char *tag, const char **why)
{
	int n;

	if (repo_check(repo, why) != 0)
		return -1;
	if (!tag_valid(tag)) {
		*why = "the tag is not an image tag";
		return -1;
	}
	n = snprintf(out, outsz, "%s:%s", repo, tag);
	if (n < 0 || (size_t)n >= outsz) {
		*why = "the reference is too long";
		return -1;
	}
	return 0;
}
