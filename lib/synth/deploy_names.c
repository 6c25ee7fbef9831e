/* SPDX-License-Identifier: MIT */
/*
 * The names a graph's nodes take on each engine: directory and compose
 * service names (the model's own, checked), environment variable names,
 * and DNS labels for Kubernetes objects and image names.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deploy_int.h"

static bool name_byte(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == '_' || c == '-';
}

const char *deploy_name_problem(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (!n)
		return "is empty";
	if (n > MANIFEST_MAX_NAME)
		return "is longer than 127 bytes";
	/* "." and ".." are names of the directory tree, not of a node. */
	if (!strcmp(s, ".") || !strcmp(s, ".."))
		return "is a directory's own name";
	for (size_t i = 0; i < n; i++)
		if (!name_byte(s[i]))
			return "holds a byte outside [A-Za-z0-9._-]";
	return NULL;
}

void deploy_env_name(const char *s, char *out, size_t len)
{
	size_t o = (size_t)snprintf(out, len, "DITTO_UPSTREAM_");

	for (; *s && o + 1 < len; s++, o++) {
		char c = *s >= 'a' && *s <= 'z' ? (char)(*s - 'a' + 'A') : *s;

		out[o] = (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ? c : '_';
	}
	out[o < len ? o : len - 1] = '\0';
}

bool deploy_dns_label(const char *s, char *out, size_t len)
{
	char tmp[MANIFEST_DNS_LABEL + 3];
	size_t o = 0;

	for (; *s && o < sizeof(tmp) - 1; s++) {
		char c = *s >= 'A' && *s <= 'Z' ? (char)(*s - 'A' + 'a') : *s;

		if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))
			tmp[o++] = c;
		else if (o && tmp[o - 1] != '-')
			tmp[o++] = '-';
	}
	tmp[o] = '\0';
	/* A Service's name is a DNS-1035 label: it starts with a letter. */
	if (o && !(tmp[0] >= 'a' && tmp[0] <= 'z'))
		snprintf(out, len, "n-%s", tmp);
	else
		snprintf(out, len, "%s", tmp);
	o = strlen(out);
	if (o > MANIFEST_DNS_LABEL)
		out[o = MANIFEST_DNS_LABEL] = '\0';
	while (o && out[o - 1] == '-')
		out[--o] = '\0';
	return o > 0;
}

bool deploy_is_dns_label(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (!n || n > MANIFEST_DNS_LABEL || s[0] == '-' || s[n - 1] == '-')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
			return false;
	return true;
}

static bool port_text(const char *p)
{
	char *end;
	unsigned long v;

	if (!*p || strlen(p) > 5 || *p < '0' || *p > '9')
		return false;
	v = strtoul(p, &end, 10);
	return !*end && v >= 1 && v <= 65535;
}

bool deploy_is_address(const char *s)
{
	const char *colon;

	if (!s || !*s || strlen(s) > MANIFEST_MAX_ADDRESS)
		return false;
	if (s[0] == '[') {
		const char *close = strchr(s, ']');

		if (!close || close == s + 1 || close[1] != ':')
			return false;
		for (const char *p = s + 1; p < close; p++)
			if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f') ||
			      (*p >= 'A' && *p <= 'F') || *p == ':' || *p == '.'))
				return false;
		return port_text(close + 2);
	}
	colon = strrchr(s, ':');
	if (!colon || colon == s)
		return false;
	for (const char *p = s; p < colon; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '.' || *p == '-'))
			return false;
	return port_text(colon + 1);
}
