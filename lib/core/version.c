/* SPDX-License-Identifier: MIT */
/* Version of the loaded library, to compare with the header's macros. */
#include "core_int.h"

DITTO_API const char *ditto_version(void)
{
	return DITTO_VERSION_STRING;
}

DITTO_API unsigned ditto_version_number(void)
{
	return DITTO_VERSION_NUMBER;
}
