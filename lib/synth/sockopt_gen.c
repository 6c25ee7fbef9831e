/* SPDX-License-Identifier: MIT */
/*
 * The clone's socket options (rt_config.sockopts) from the model's
 * services[].network.sockopts. Only options whose effect the runtime can
 * reproduce with an int are set; the model's values are validated ints
 * (buffer sizes past the host's maximum the kernel caps itself).
 */
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "model_int.h"
#include "synth_int.h"

static bool replayable(uint64_t level, uint64_t name)
{
	if (level == SOL_SOCKET)
		return name == SO_SNDBUF || name == SO_RCVBUF || name == SO_KEEPALIVE;
	if (level == IPPROTO_TCP)
		return name == TCP_NODELAY || name == TCP_CORK;
	return false;
}

static void emit(struct dbuf *b, uint64_t level, uint64_t name, uint64_t value, const char *when)
{
	if (name != SO_SNDBUF && name != SO_RCVBUF)
		value = value > 1 ? 1 : value;	/* booleans */
	dbuf_printf(b, "\t{ %d, %d, %d, %s },\n", (int)level, (int)name, (int)value, when);
}

/*
 * When o is set: around each response when the original's setsockopt
 * calls came at half a call per request or more (TCP_CORK 1 before the
 * writes, 0 after), else on each accepted socket when most connections
 * had it. NULL: not at all.
 */
static const char *when_of(const struct ditto_sockopt *o, uint64_t conns, double requests)
{
	if (requests > 0 && (double)o->calls >= requests / 2)
		return o->level == IPPROTO_TCP && o->name == TCP_CORK && !o->value
			       ? "RT_SOCKOPT_AFTER_RESPONSE" : "RT_SOCKOPT_BEFORE_RESPONSE";
	if (o->level == IPPROTO_TCP && o->name == TCP_CORK)
		return NULL;	/* corked for good, the responses would wait 200 ms */
	return o->connections * 2 > conns ? "RT_SOCKOPT_ACCEPT" : NULL;
}

unsigned sockopt_section(const struct ditto_service *s, double requests, struct dbuf *b)
{
	const struct ditto_network *net = ditto_service_network(s);
	uint64_t conns = net ? ditto_network_sockopt_connections(net) : 0;
	unsigned n = 0;

	dbuf_puts(b, "static const struct rt_sockopt sockopts[] = {\n");
	if (!net || !ditto_network_sockopts_known(net)) {
		ditto_warn("synth: %s: the model does not record the connections' socket options: "
			   "the clone sets TCP_NODELAY", ditto_service_name(s));
		emit(b, IPPROTO_TCP, TCP_NODELAY, 1, "RT_SOCKOPT_ACCEPT");
		n = 1;
	}
	for (size_t i = 0; net && i < ditto_network_sockopt_count(net); i++) {
		struct ditto_sockopt o;
		const char *when;

		if (ditto_network_sockopt(net, i, &o) || !(when = when_of(&o, conns, requests)))
			continue;
		if (!replayable(o.level, o.name)) {
			ditto_warn("synth: %s: socket option %llu/%llu is not replayed",
				   ditto_service_name(s), (unsigned long long)o.level,
				   (unsigned long long)o.name);
			continue;
		}
		emit(b, o.level, o.name, o.value, when);
		n++;
	}
	if (!n)
		dbuf_puts(b, "\t{ 0, 0, 0, RT_SOCKOPT_ACCEPT },\n");	/* C11 has no empty array */
	dbuf_puts(b, "};\n");
	return n;
}
