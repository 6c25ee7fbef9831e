/* Fuzz the clone runtime's MySQL framing: the first two bytes are the size
 * every response draws (rt_my_fit grows results towards it), the rest is what a
 * client sent after the greeting. The cutter stays inside the input and
 * takes each request whole; every answer is whole packets of consecutive
 * sequence numbers that add up to what was appended, within the cap. */
#include "../../lib/runtime/rt_int.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

/* rt_framing.c's draw needs a model; here the input is the model. */
static uint64_t grow_by;

uint64_t rt_frame_size(struct rt_rng *rng, uint64_t min)
{
	(void)rng;
	return grow_by > min ? grow_by : min;
}

static const char *ditto_last_error(void)
{
	return "";
}

static uint32_t le24(const char *p)
{
	const unsigned char *b = (const unsigned char *)p;

	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16;
}

/* out[start..len) is whole packets numbered from seq on. */
static void check_packets(const struct rt_buf *out, size_t start, uint8_t seq)
{
	size_t pos = start;

	FUZZ_ASSERT(out->len - start <= RT_RESPONSE_MAX + 8);
	while (pos < out->len) {
		FUZZ_ASSERT(pos + 4 <= out->len);
		FUZZ_ASSERT(le24(out->data + pos) <= RT_MY_PACKET_MAX);
		FUZZ_ASSERT((uint8_t)out->data[pos + 3] == seq);
		pos += 4 + le24(out->data + pos);
		seq++;
	}
	FUZZ_ASSERT(pos == out->len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rt_conn *c = calloc(1, sizeof(*c));
	struct rt_buf out = { 0 };
	struct rt_rng rng = { { 1, 2, 3, 4 } };
	const char *p = (const char *)data + 2;
	size_t n = size >= 2 ? size - 2 : 0;

	FUZZ_ASSERT(c);
	grow_by = size >= 2 ? ((uint64_t)data[0] << 8 | data[1]) * 64 : 0;
	FUZZ_ASSERT(rt_my_greet(c, &out) == 0);
	check_packets(&out, 0, 0);
	while (n) {
		struct rt_req req = { .serve = true };
		long len = rt_my_cut(c, p, n, &req);
		size_t start = out.len;

		if (len <= 0)
			break;
		FUZZ_ASSERT((size_t)len <= n && req.p == p && req.len == (size_t)len);
		if (!req.quiet) {
			if (rt_my_respond(c, &req, &rng, &out))
				break;	/* over the cap: the connection closes */
			check_packets(&out, start, (uint8_t)(p[3] + 1));
		}
		out.len = 0;	/* sent */
		p += len;
		n -= (size_t)len;
		if (req.close_after)
			break;
	}
	rt_buf_free(&out);
	free(c);
	return 0;
}
