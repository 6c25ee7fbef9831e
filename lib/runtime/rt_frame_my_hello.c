/* SPDX-License-Identifier: MIT */
/*
 * The MySQL connection phase: the server's HandshakeV10 on accept
 * (mysql_native_password, a 20-byte scramble), the client's
 * HandshakeResponse41, and any user and password taken. A client that
 * answers with another plugin (MySQL 8's caching_sha2_password) is asked
 * to switch to mysql_native_password, as a server whose account uses it
 * does, and its answer is taken too. No TLS is offered.
 */
#include "rt_int.h"

#include <string.h>

#define CLIENT_LONG_PASSWORD 0x1u
#define CLIENT_FOUND_ROWS 0x2u
#define CLIENT_LONG_FLAG 0x4u
#define CLIENT_CONNECT_WITH_DB 0x8u
#define CLIENT_PROTOCOL_41 0x200u
#define CLIENT_SSL 0x800u
#define CLIENT_TRANSACTIONS 0x2000u
#define CLIENT_SECURE_CONNECTION 0x8000u
#define CLIENT_MULTI_RESULTS 0x20000u
#define CLIENT_PS_MULTI_RESULTS 0x40000u
#define CLIENT_PLUGIN_AUTH 0x80000u
#define CLIENT_CONNECT_ATTRS 0x100000u
#define CLIENT_PLUGIN_AUTH_LENENC 0x200000u

/* No CLIENT_SSL, CLIENT_COMPRESS, CLIENT_MULTI_STATEMENTS or
 * CLIENT_DEPRECATE_EOF: one statement per query, results end in EOF. */
#define SERVER_CAPS (CLIENT_LONG_PASSWORD | CLIENT_FOUND_ROWS | CLIENT_LONG_FLAG | \
		     CLIENT_CONNECT_WITH_DB | CLIENT_PROTOCOL_41 | CLIENT_TRANSACTIONS | \
		     CLIENT_SECURE_CONNECTION | CLIENT_MULTI_RESULTS | CLIENT_PS_MULTI_RESULTS | \
		     CLIENT_PLUGIN_AUTH | CLIENT_CONNECT_ATTRS | CLIENT_PLUGIN_AUTH_LENENC)
#define NATIVE "mysql_native_password"
/* A MySQL 5.7 as far as clients can tell; "ditto" says what it is. */
#define VERSION "5.7.99-ditto"
#define HELLO_MAX 4096u		/* a handshake response is far smaller */

static _Atomic uint32_t next_thread_id = 1;

/* 20 bytes in 0x21..0x7e: clients copy the scramble as a C string. */
static void scramble(uint32_t seed, char *s)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;

	for (int i = 0; i < 20; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		s[i] = (char)(0x21 + x % 94);
	}
}

int rt_my_greet(struct rt_conn *c, struct rt_buf *out)
{
	static const char reserved[10];	/* MariaDB's extended capabilities: none */
	struct rt_my_reply r = { .out = out, .limit = out->len + 256, .seq = 0 };
	uint32_t id = atomic_fetch_add(&next_thread_id, 1);
	char s[20];
	size_t at;

	c->proto = RT_MY_HELLO;
	scramble(id, s);
	at = rt_my_begin(&r);
	rt_my_put_le(&r, 10, 1);	/* protocol version */
	rt_my_put(&r, VERSION, sizeof(VERSION));
	rt_my_put_le(&r, id, 4);	/* connection id */
	rt_my_put(&r, s, 8);
	rt_my_put_le(&r, 0, 1);
	rt_my_put_le(&r, SERVER_CAPS & 0xffff, 2);
	rt_my_put_le(&r, 45, 1);	/* utf8mb4_general_ci */
	rt_my_put_le(&r, rt_my_status(c), 2);
	rt_my_put_le(&r, SERVER_CAPS >> 16, 2);
	rt_my_put_le(&r, 21, 1);	/* scramble length with its NUL */
	rt_my_put(&r, reserved, sizeof(reserved));
	rt_my_put(&r, s + 8, 12);
	rt_my_put_le(&r, 0, 1);
	rt_my_put(&r, NATIVE, sizeof(NATIVE));
	rt_my_end(&r, at);
	return r.err ? -1 : 0;
}

void rt_my_auth_switch(struct rt_my_reply *r)
{
	size_t at = rt_my_begin(r);
	char s[20];

	scramble(atomic_fetch_add(&next_thread_id, 1), s);
	rt_my_put_le(r, 0xfe, 1);
	rt_my_put(r, NATIVE, sizeof(NATIVE));
	rt_my_put(r, s, sizeof(s));
	rt_my_put_le(r, 0, 1);
	rt_my_end(r, at);
}

static uint32_t le32(const char *p)
{
	const unsigned char *b = (const unsigned char *)p;

	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/* Offset past the NUL of the string at b[i..n), or 0 if there is none. */
static size_t cstr_end(const char *b, size_t n, size_t i)
{
	const char *z = i < n ? memchr(b + i, 0, n - i) : NULL;

	return z ? (size_t)(z - b) + 1 : 0;
}

/* Offset past the auth data at b[i..n), or 0 if it overruns. */
static size_t auth_end(const char *b, size_t n, size_t i, uint32_t caps)
{
	size_t len;

	if (i >= n)
		return 0;
	if (!(caps & (CLIENT_PLUGIN_AUTH_LENENC | CLIENT_SECURE_CONNECTION)))
		return cstr_end(b, n, i);
	len = (unsigned char)b[i];
	if ((caps & CLIENT_PLUGIN_AUTH_LENENC) && len >= 251)
		return 0;	/* a scramble is 20 or 32 bytes, never this long */
	return i + 1 + len <= n ? i + 1 + len : 0;
}

/* The plugin a HandshakeResponse41 names ("" if none), or NULL if it is
 * malformed. Its fixed fields, user and auth data must be there; a
 * client may stop after any field that follows. */
static const char *response_plugin(const char *b, size_t n)
{
	uint32_t caps = le32(b);
	size_t i;

	if (n < 32 || !(caps & CLIENT_PROTOCOL_41) || (caps & CLIENT_SSL))
		return NULL;	/* pre-4.1, or TLS that was not offered */
	if (!(i = cstr_end(b, n, 32)) || !(i = auth_end(b, n, i, caps)))
		return NULL;
	if ((caps & CLIENT_CONNECT_WITH_DB) && i < n && !(i = cstr_end(b, n, i)))
		return NULL;
	if (!(caps & CLIENT_PLUGIN_AUTH) || i >= n)
		return "";
	return cstr_end(b, n, i) ? b + i : NULL;
}

int rt_my_cut_hello(struct rt_conn *c, const char *body, size_t n, uint8_t seq, struct rt_req *req)
{
	const char *plugin;

	req->serve = false;
	if (n > HELLO_MAX)
		return -1;
	if (c->proto == RT_MY_SWITCHED) {	/* the answer to the switch: any */
		if (seq != 3)
			return -1;
		req->op = RT_MY_OP_AUTH_OK;
		c->proto = RT_MY_COMMANDS;
		return 0;
	}
	if (seq != 1 || !(plugin = response_plugin(body, n)))
		return -1;
	if (*plugin && strcmp(plugin, NATIVE)) {
		req->op = RT_MY_OP_AUTH_SWITCH;
		c->proto = RT_MY_SWITCHED;
	} else {
		req->op = RT_MY_OP_AUTH_OK;
		c->proto = RT_MY_COMMANDS;
	}
	return 0;
}
