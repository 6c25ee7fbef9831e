/* Compiled (not linked) as C and as C++: DITTO_OPTS must declare options
 * structs in both languages, leaving unnamed fields zero. */
#include <ditto/ditto.h>

size_t opts_use(void);

size_t opts_use(void)
{
	DITTO_OPTS(ditto_json_opts, json, .pretty = true);
	DITTO_OPTS(ditto_load_opts, load, .max_depth = 8);
	DITTO_OPTS(ditto_validate_opts, val);
	return json.sz + load.sz + load.max_bytes + val.sz;
}
