/*
 * The precompiled driver image tag: <driver-branch>-<kernel>-<os-tag>, e.g.
 * 550-5.15.0-107-generic-ubuntu22.04.  Built here and only here, from its
 * parts; a tag is never split apart (the kernel holds hyphens).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpudrv.h"

#define NOT_TAG "cannot be part of an image tag (only letters, digits, '_', '.' and '-')"

static int
tagchar(int c)
{
	return isalnum(c) || c == '_' || c == '.' || c == '-';
}

int
tag_charset_ok(const char *s)
{
	if (s == NULL || *s == '\0')
		return 0;
	for (; *s != '\0'; s++)
		if (!tagchar((unsigned char)*s) || (unsigned char)*s > 0x7f)
			return 0;
	return 1;
}

/* The OCI distribution spec's tag: [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}. */
int
tag_valid(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	return n >= 1 && n <= TAG_MAX && s[0] != '.' && s[0] != '-' && tag_charset_ok(s);
}

/*
 * OS tag = os-release ID followed by VERSION_ID (ubuntu + 22.04 = ubuntu22.04).
 * The GPU Operator drops the minor version for Rocky Linux and for RHEL 10 and
 * later (rocky9, rhel10), and so do we.
 */
int
ostag_build(char *out, size_t outsz, const char *id, const char *version_id,
            const char **why)
{
	const char *dot;
	int vlen, n;
	long major;
	char *end;

	if (!tag_charset_ok(id)) {
		*why = NOT_TAG;
		return 1;
	}
	if (!tag_charset_ok(version_id)) {
		*why = NOT_TAG;
		return 2;
	}
	vlen = (int)strlen(version_id);
	if (strcmp(id, "rocky") == 0 || strcmp(id, "rhel") == 0) {
		dot = strchr(version_id, '.');
		major = strtol(version_id, &end, 10);
		if (end == version_id || end != (dot ? dot : version_id + vlen)) {
			*why = "has no numeric major version";
			return 2;
		}
		if (strcmp(id, "rocky") == 0 || major >= 10)
			vlen = (int)(end - version_id);
	}
	n = snprintf(out, outsz, "%s%.*s", id, vlen, version_id);
	if (n < 0 || (size_t)n >= outsz) {
		*why = "makes the image tag longer than 128 characters";
		return 2;
	}
	return 0;
}

int
tag_build(char *out, size_t outsz, const char *branch, const char *kernel,
          const char *ostag, const char **why)
{
	int n;

	if (branch == NULL || *branch == '\0' || strspn(branch, "0123456789") != strlen(branch)) {
		*why = "is not a driver branch (all digits, e.g. 550)";
		return 1;
	}
	if (!tag_charset_ok(kernel)) {
		*why = NOT_TAG;
		return 2;
	}
	if (!tag_charset_ok(ostag)) {
		*why = NOT_TAG;
		return 3;
	}
	n = snprintf(out, outsz, "%s-%s-%s", branch, kernel, ostag);
	if (n < 0 || (size_t)n >= outsz || !tag_valid(out)) {
		*why = "makes the image tag longer than 128 characters";
		return 2;
	}
	return 0;
}
