/* <ditto/version.h> compiles on its own and says the project's version
 * (WANT_NUMBER, WANT_STRING: computed by meson from project(version:)). */
#include <ditto/version.h>

_Static_assert(DITTO_VERSION_NUMBER == WANT_NUMBER, "version.h disagrees with meson.build");
_Static_assert(sizeof(DITTO_VERSION_STRING) == sizeof(WANT_STRING),
	       "version.h's string disagrees with meson.build");

const char *ditto_test_version = DITTO_VERSION_STRING;
